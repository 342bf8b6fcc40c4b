import { randomBytes, randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { Database } from "../../db/prisma.ts";

/*
 * The provider's keys, in the database so that every instance signs and verifies alike. Signing keys (the JWKS): an
 * RS256 key made on first start, a new one added by `oidc:rotate-keys`; the newest key not retired signs, retired ones
 * stay published so that what they signed still verifies. Cookie keys: one secret, made on first start, that signs the
 * provider's cookies (and the sign-in pages' CSRF tokens) on every instance.
 */

export const SIGNING_ALG = "RS256";
/**
 * The first key's id is fixed, so that instances starting together on an empty database agree: one INSERT wins the
 * unique `kid`, the others read it. Later keys (rotation, one CLI run) get random ids.
 */
const FIRST_KID = "muster-signing-key-1";
/** The SystemFlag row holding the cookie-signing secret. */
const COOKIE_KEY_FLAG = "oidc:cookie-key";

async function newSigningKey(kid: string): Promise<string> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  return JSON.stringify({ ...jwk, kid, alg: SIGNING_ALG, use: "sig" });
}

const isUniqueViolation = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";

/** The private JWKs, the signing one first (the newest not retired), then the others newest first. */
export async function signingKeys(db: Database): Promise<JWK[]> {
  const rows = await db.prisma.signingKey.findMany({ orderBy: [{ id: "desc" }] });
  if (rows.length === 0) {
    try {
      await db.prisma.signingKey.create({ data: { kid: FIRST_KID, jwk: await newSigningKey(FIRST_KID) } });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    return signingKeys(db);
  }
  const active = rows.filter((row) => !row.retiredAt);
  const retired = rows.filter((row) => row.retiredAt);
  return [...active, ...retired].map((row) => JSON.parse(row.jwk) as JWK);
}

/** Adds a new signing key and retires the others (they stay in the JWKS); returns the new key's id. */
export async function rotateSigningKeys(db: Database): Promise<string> {
  await signingKeys(db);
  const kid = randomUUID();
  const jwk = await newSigningKey(kid);
  await db.store.batch([
    db.prisma.signingKey.updateMany({ where: { retiredAt: null }, data: { retiredAt: new Date() } }),
    db.prisma.signingKey.create({ data: { kid, jwk } }),
  ]);
  return kid;
}

/** The secret that signs the provider's cookies, made once for every instance. */
export async function cookieKeys(db: Database): Promise<string[]> {
  const found = await db.prisma.systemFlag.findUnique({ where: { name: COOKIE_KEY_FLAG } });
  if (found) return [found.value];
  try {
    await db.prisma.systemFlag.create({
      data: { name: COOKIE_KEY_FLAG, value: randomBytes(32).toString("base64url") },
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  return cookieKeys(db);
}

import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";
import type { Database } from "../db/prisma.ts";
import { PASSWORD_MAX_LENGTH, passwordProblem } from "../core/password-rules.ts";
import { validationError } from "../core/errors.ts";

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from "../core/password-rules.ts";

/*
 * People's passwords: scrypt from node:crypto (memory-hard), at OWASP's recommended cost (N = 2^17, r = 8, p = 1:
 * 128 MiB and about a third of a second per hash on our machines, in libuv's thread pool, off the event loop). The
 * stored form names its parameters, so raising the cost later leaves older hashes readable.
 */

const COST = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
/** scrypt needs 128 · N · r bytes; Node's default ceiling (32 MiB) is below that. */
const maxmemFor = (N: number, r: number) => 256 * N * r;

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password.normalize("NFKC"), salt, length, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

/** `scrypt$<N>$<r>$<p>$<salt>$<hash>`, salt and hash base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const { N, r, p } = COST;
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: maxmemFor(N, r) });
  return ["scrypt", N, r, p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Whether `password` is the one `stored` was made from; compared in constant time. */
export async function passwordMatches(stored: string, password: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const options = { N: Number(n), r: Number(r), p: Number(p), maxmem: maxmemFor(Number(n), Number(r)) };
  const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, options);
  return timingSafeEqual(actual, expected);
}

/** A hash of nothing anyone knows: an unknown email costs the same time as a wrong password. */
let decoy: Promise<string> | undefined;

/** Sets (or replaces) the person's password; throws a 422 naming `password` when it breaks the rules. */
export async function setPassword(db: Pick<Database, "prisma">, userId: number, password: unknown): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw validationError({ password: [problem] });
  const hash = await hashPassword(password as string);
  await db.prisma.password.upsert({ where: { userId }, create: { userId, hash }, update: { hash } });
}

/**
 * The id of the account's person with this email and password, or null, whichever was wrong (an unknown email, a
 * person without a password, a wrong password take the same time). Attempt limits are the caller's.
 */
export async function signInWithPassword(
  db: Database,
  accountId: number,
  email: string,
  password: string,
): Promise<number | null> {
  if (typeof password !== "string" || password.length > PASSWORD_MAX_LENGTH) return null;
  const person = await db.prisma.user.findFirst({
    where: { accountId, email: email.trim() },
    select: { id: true, password: { select: { hash: true } } },
  });
  const stored = person?.password?.hash ?? (await (decoy ??= hashPassword(randomBytes(16).toString("hex"))));
  const matches = await passwordMatches(stored, password);
  return matches && person?.password ? person.id : null;
}

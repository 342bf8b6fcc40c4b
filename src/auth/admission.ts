import type { Database } from "../db/prisma.ts";
import { models } from "../db/datamodel.ts";
import { decode } from "../db/dialect.ts";
import { hashKey } from "./keys.ts";

/** The SystemFlag row whose value says the service is in maintenance (src/http/maintenance.ts sets it). */
export const MAINTENANCE_FLAG = "maintenance";

/** The columns of a bearer key that authentication reads, with its account's subscription. */
export interface KeyRow {
  id: number;
  accountId: number;
  userId: number | null;
  /** A JSON list of scope names, as stored (a row edited by hand may hold anything). */
  scopes: unknown;
  publishable: boolean;
  /** Origins; null unless publishable. */
  allowedOrigins: string[] | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  subscriptionStatus: string;
}

export interface Admission {
  maintenance: boolean;
  /** The row of the request's bearer key; null without a key or for an unknown one. */
  key: KeyRow | null;
}

const KEY_COLUMNS = [
  "id",
  "accountId",
  "userId",
  "scopes",
  "publishable",
  "allowedOrigins",
  "expiresAt",
  "revokedAt",
  "lastUsedAt",
] as const;
const apiKey = models.get("ApiKey")!;

/**
 * Both in one statement: every request needs the maintenance flag and, when it carries one, its key, before any work.
 * The flag is read on every request, so a switch made by the CLI takes effect at once on every instance.
 */
const SQL =
  `SELECT f."value", ${KEY_COLUMNS.map((c) => `k."${c}"`).join(", ")}, a."subscriptionStatus" FROM (SELECT 1 AS "one") AS x ` +
  `LEFT JOIN "SystemFlag" AS f ON f."name" = ? LEFT JOIN "ApiKey" AS k ON k."hash" = ? LEFT JOIN "Account" AS a ON a."id" = k."accountId"`;
const POSTGRES_SQL = SQL.replace(
  /\?/g,
  (() => {
    let n = 0;
    return () => `$${++n}`;
  })(),
);

/** The bearer key of a request (header, or PERSCOM's `?apikey=`). */
export function bearerOf(request: Request, url: URL): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? url.searchParams.get("apikey");
}

const admissions = new WeakMap<Request, Promise<Admission>>();

/** The request's admission, read once however many plugins ask (the maintenance gate, authentication, the rate limit). */
export function admissionOf(db: Database, request: Request, url: URL = new URL(request.url)): Promise<Admission> {
  let admission = admissions.get(request);
  if (!admission) {
    admission = readAdmission(db, bearerOf(request, url));
    admissions.set(request, admission);
  }
  return admission;
}

async function readAdmission(db: Database, bearer: string | null): Promise<Admission> {
  const dialect = db.provider;
  const [row] = await db.lookup(dialect === "postgresql" ? POSTGRES_SQL : SQL, [
    MAINTENANCE_FLAG,
    bearer === null ? null : hashKey(bearer),
  ]);
  const [flag, ...rest] = row;
  if (rest[0] == null) return { maintenance: flag === "on", key: null };
  const key = Object.fromEntries(
    KEY_COLUMNS.map((c, i) => [c, decode(dialect, apiKey.scalarByName.get(c)!, rest[i])]),
  ) as Omit<KeyRow, "subscriptionStatus">;
  return { maintenance: flag === "on", key: { ...key, subscriptionStatus: rest[KEY_COLUMNS.length] as string } };
}

import type { Context } from "../request/context.ts";
import { formatDate } from "../core/dates.ts";
import { loader } from "../core/loader.ts";
import { models } from "../db/datamodel.ts";
import { decode } from "../db/dialect.ts";

export interface LatestRecords {
  /** When the user's newest rank record was created (PERSCOM date), or null. */
  rank: string | null;
  /** When the user's newest primary assignment record was created, or null. */
  assignment: string | null;
}

const createdAt = models.get("RankRecord")!.scalarByName.get("createdAt")!;

/** Both dates of a batch of users in one statement; each is an index-only lookup on `(userId, createdAt)`. */
const sql = (ids: string) =>
  `SELECT u."id", (SELECT max(r."createdAt") FROM "RankRecord" AS r WHERE r."userId" = u."id"), ` +
  `(SELECT max(a."createdAt") FROM "AssignmentRecord" AS a WHERE a."userId" = u."id" AND a."type" = 'primary') ` +
  `FROM "User" AS u WHERE u."id" ${ids}`;
const SQLITE_SQL = sql("IN (SELECT value FROM json_each(?))");
const POSTGRES_SQL = sql("= ANY($1)");

/**
 * A user's latest rank and assignment change dates (the computed `last_rank_change_date` and
 * `last_assignment_change_date`): every user of a request in one statement, on committed data.
 */
export function latestRecordsOf(ctx: Context, userId: number): Promise<LatestRecords> {
  return loader<number, LatestRecords>(ctx, "user:latest-records", async (ids) => {
    const postgres = ctx.provider === "postgresql";
    const date = (value: unknown) =>
      value == null ? null : formatDate(decode(ctx.provider, createdAt, value) as Date);
    const rows = await ctx.store.read(postgres ? POSTGRES_SQL : SQLITE_SQL, [
      postgres ? [...ids] : JSON.stringify(ids),
    ]);
    const byUser = new Map(
      rows.map(([id, rank, assignment]) => [Number(id), { rank: date(rank), assignment: date(assignment) }]),
    );
    return ids.map((id) => byUser.get(id) ?? { rank: null, assignment: null });
  }).load(userId);
}

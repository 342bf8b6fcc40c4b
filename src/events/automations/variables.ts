import type { Store } from "../../db/store.ts";
import type { Context } from "../../request/context.ts";
import type { ChangeEventRecord } from "../../core/events.ts";
import type { Row } from "../../db/models-by-name.ts";
import { eventAttributes } from "../../data/attributes.ts";
import { resourceNamed } from "../../resources/index.ts";

/**
 * The variables an automation's condition and templates see (README, "Automations"): the event (`data`, `changes`,
 * `type`, `actor`, `event`), its person (`user`, with the counts of their records and their `rank`) and the account. Plain JSON values
 * only, so neither Jexl nor Liquid can reach an object's machinery through them.
 */
export interface AutomationVariables {
  data: Record<string, unknown> | null;
  changes: Record<string, { old: unknown; new: unknown }> | null;
  type: string | null;
  actor: unknown;
  user: Record<string, unknown> | null;
  account: { id: number; name: string; slug: string | null } | null;
  event: { id: number | null; created_at: string } | null;
}

/** The part of a stored event the variables read (a given event of `POST /automations/{id}/test` has no id). */
export type VariablesEvent = Pick<ChangeEventRecord, "type" | "resource" | "data" | "changes" | "actor"> & {
  id: number | null;
  recordId?: number | null;
  createdAt?: Date | string | null;
};

/** Record models counted on `user`, by the variable that holds the count. */
const RECORD_COUNTS = [
  ["rank_records_count", "RankRecord"],
  ["award_records_count", "AwardRecord"],
  ["qualification_records_count", "QualificationRecord"],
  ["assignment_records_count", "AssignmentRecord"],
  ["combat_records_count", "CombatRecord"],
  ["service_records_count", "ServiceRecord"],
] as const;

let userAttributes: ((row: Row, ctx: Context) => Row) | undefined;

/**
 * The variables for `event` of the account (null: a scheduled run, which has no event). `baseUrl` is what file URLs of
 * the person (`profile_photo_url`) start with, as REST shows them.
 */
export async function automationVariables(
  store: Store,
  accountId: number,
  event: VariablesEvent | null,
  { baseUrl = "" }: { baseUrl?: string } = {},
): Promise<AutomationVariables> {
  const [account, user] = await Promise.all([accountOf(store, accountId), personOf(store, accountId, event, baseUrl)]);
  const createdAt = event?.createdAt;
  return plain({
    data: event?.data ?? null,
    changes: event?.changes ?? null,
    type: event?.type ?? null,
    actor: event?.actor ?? null,
    user,
    account,
    event: event
      ? {
          id: event.id,
          created_at: (createdAt ? new Date(createdAt) : new Date()).toISOString(),
        }
      : null,
  });
}

async function accountOf(store: Store, accountId: number): Promise<AutomationVariables["account"]> {
  const row = await store.findUnique("Account", {
    where: { id: accountId },
    select: { id: true, name: true, slug: true },
  });
  return row ? { id: row.id, name: row.name as string, slug: (row.slug as string | null) ?? null } : null;
}

/** The event's person: the record's `user_id`, or the record itself for a user event; null when it has none. */
async function personOf(
  store: Store,
  accountId: number,
  event: VariablesEvent | null,
  baseUrl: string,
): Promise<Record<string, unknown> | null> {
  if (!event) return null;
  const isUser = event.resource === "user";
  const id = isUser ? (event.data?.id ?? event.recordId) : event.data?.user_id;
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return null;
  const [shown, counts] = await Promise.all([
    isUser ? (event.data as Row) : shownUser(store, accountId, id, baseUrl),
    recordCounts(store, accountId, id),
  ]);
  if (!shown) return null;
  return { ...shown, ...counts, rank: await rankOf(store, accountId, shown.rank_id) };
}

/** The person's current rank, `{ id, name, abbreviation }`, for texts such as "promoted to {{ user.rank.name }}". */
async function rankOf(store: Store, accountId: number, id: unknown) {
  if (typeof id !== "number") return null;
  const rank = await store.findFirst("Rank", {
    where: { id, accountId },
    select: { id: true, name: true, abbreviation: true },
  });
  return rank ? { id: rank.id, name: rank.name, abbreviation: rank.abbreviation ?? null } : null;
}

async function shownUser(store: Store, accountId: number, id: number, baseUrl: string): Promise<Row | null> {
  const row = await store.findFirst("User", { where: { id, accountId } });
  if (!row) return null;
  userAttributes ??= eventAttributes(resourceNamed("user"));
  return userAttributes(row, { baseUrl } as Context);
}

/** The person's records of each kind, in one statement. */
async function recordCounts(store: Store, accountId: number, userId: number): Promise<Record<string, number>> {
  const pg = store.provider === "postgresql";
  const params: unknown[] = [];
  const param = (value: unknown) => (params.push(value), pg ? `$${params.length}` : "?");
  const counts = RECORD_COUNTS.map(
    ([, model]) =>
      `(SELECT COUNT(*) FROM "${model}" WHERE "accountId" = ${param(accountId)} AND "userId" = ${param(userId)})`,
  );
  const [row] = await store.read(`SELECT ${counts.join(", ")}`, params);
  return Object.fromEntries(RECORD_COUNTS.map(([name], i) => [name, Number(row[i])]));
}

/** A copy with JSON's values only (no dates, no prototypes but Object's and Array's, no undefined). */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Database } from "../../db/prisma.ts";
import { clientMetadataOf } from "./clients.ts";

/*
 * oidc-provider's storage (its `Adapter` interface) in the OidcRecord table, so every instance sees every session,
 * interaction, grant, code and token the others made: nothing of the provider's state lives in process memory. A
 * record's key is `<model>:<id>`; an expired record reads as absent. Clients are not stored here: the `Client` model
 * reads the OAuthClient table (src/auth/oidc/clients.ts), and a disabled client is not found.
 */

const keyOf = (model: string, id: string) => `${model}:${id}`;

const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** A stored record as oidc-provider reads it, or undefined when there is none or it has expired. */
function payloadOf(
  row: { payload: string; expiresAt: Date | null; consumedAt: Date | null } | null,
): AdapterPayload | undefined {
  if (!row || (row.expiresAt && row.expiresAt.getTime() <= Date.now())) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  return row.consumedAt ? { ...payload, consumed: epochSeconds(row.consumedAt) } : payload;
}

/** The record `<model>:<id>` if it exists and has not expired: what authenticate.ts reads of an access token. */
export async function findRecord(db: Database, model: string, id: string): Promise<AdapterPayload | undefined> {
  return payloadOf(await db.prisma.oidcRecord.findUnique({ where: { key: keyOf(model, id) } }));
}

/** The unexpired record of `model` with this `uid` (a session), if any. */
export async function findRecordByUid(db: Database, model: string, uid: string): Promise<AdapterPayload | undefined> {
  return payloadOf(await db.prisma.oidcRecord.findFirst({ where: { model, uid } }));
}

/** The first of `models` that holds an unexpired record `id`, with its payload (one query). */
export async function findRecordOf(
  db: Database,
  models: readonly string[],
  id: string,
): Promise<{ model: string; payload: AdapterPayload } | undefined> {
  const rows = await db.prisma.oidcRecord.findMany({ where: { key: { in: models.map((model) => keyOf(model, id)) } } });
  for (const model of models) {
    const payload = payloadOf(rows.find((row) => row.model === model) ?? null);
    if (payload) return { model, payload };
  }
  return undefined;
}

/** An oidc-provider `Adapter` class over `db`. */
export function oidcAdapter(db: Database): new (model: string) => Adapter {
  const records = db.prisma.oidcRecord;
  return class OidcRecordAdapter implements Adapter {
    readonly model: string;
    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.model === "Client")
        throw new Error("Clients are made through /v2/oauth-clients, not stored by the provider");
      const key = keyOf(this.model, id);
      const columns = {
        model: this.model,
        payload: JSON.stringify(payload),
        grantId: payload.grantId ?? null,
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      };
      await records.upsert({ where: { key }, create: { key, ...columns }, update: columns });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === "Client") return clientMetadataOf(db, id);
      return findRecord(db, this.model, id);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await records.findFirst({ where: { model: this.model, userCode } }));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return findRecordByUid(db, this.model, uid);
    }

    async consume(id: string): Promise<void> {
      await records.updateMany({ where: { key: keyOf(this.model, id) }, data: { consumedAt: new Date() } });
    }

    async destroy(id: string): Promise<void> {
      await records.deleteMany({ where: { key: keyOf(this.model, id) } });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await records.deleteMany({ where: { model: this.model, grantId } });
    }
  };
}

/** Rows one DELETE removes, and steps per run: a long backlog is pruned over several runs, never in one statement. */
const PRUNE_BATCH = 5000;
const PRUNE_STEPS = 20;

/** Deletes records expired before now (sessions, codes, tokens): storage hygiene; reads already ignore them. */
export async function pruneExpiredRecords(db: Pick<Database, "prisma">, now = new Date()): Promise<number> {
  let pruned = 0;
  for (let step = 0; step < PRUNE_STEPS; step++) {
    const deleted = await db.prisma.$executeRawUnsafe(
      `DELETE FROM "OidcRecord" WHERE "key" IN (SELECT "key" FROM "OidcRecord" WHERE "expiresAt" < $1 ORDER BY "expiresAt" LIMIT ${PRUNE_BATCH})`,
      now,
    );
    pruned += deleted;
    if (deleted < PRUNE_BATCH) break;
  }
  return pruned;
}

import type { Context } from "../request/context.ts";
import type { FieldDef, ResourceDef } from "../resources/define.ts";
import { ApiError, validationError } from "../core/errors.ts";
import { isBusyError } from "../db/sqlite.ts";
import { isDeadlock } from "../db/postgres-errors.ts";
import { advisoryWriteLock } from "../db/locks.ts";
import { morphOwnersOf, resources } from "../resources/index.ts";
import { knownScopes } from "../resources/scopes.ts";
import { owned, selfServiceInput } from "./access.ts";
import { delegateOf, type Row, type StoredRow } from "../db/models-by-name.ts";
import { mayRunTwice, type StoreTransaction } from "../db/transaction.ts";
import { InsertedId } from "../db/writer.ts";
import { validateMorphOwner, validateResource } from "./validate.ts";
import { FileChanges, fileStorage, isFile, storeFile } from "../files/storage.ts";
import { snake } from "../core/names.ts";
import { rememberName, trackNames, trackRows } from "../db/transaction-names.ts";
import { createTracked, deleteTracked, recordWrites, updateTracked } from "./tracked.ts";
import { announceEvents, writeEvents, type WrittenEvents } from "./outbox.ts";

/**
 * Runs `work` in one transaction: a failed write leaves nothing behind, its stored files included (src/files/changes.ts:
 * stored and deleted with the transaction, or on disk deleted only once it has committed and undone if it fails).
 */
declare module "../db/transaction.ts" {
  interface TransactionCarry {
    /** The files its writes stored and deleted, kept in step with it (`inTransaction`). */
    files: FileChanges;
  }
}

/** The file changes of the transaction `tx` (one of `inTransaction`). */
function filesOf(tx: StoreTransaction): FileChanges {
  const files = tx.carry.files;
  if (!files) throw new Error("Stored files are written inside inTransaction only");
  return files;
}

export async function inTransaction<T>(
  ctx: Context,
  work: (tx: StoreTransaction) => Promise<T>,
  options: { independent?: boolean } = {},
): Promise<T> {
  // The request is answered 503 once it has run `executionTimeoutMs`: a transaction never commits after that.
  const deadline = Date.now() + ctx.config.executionTimeoutMs;
  // SQLite runs one write transaction at a time (BEGIN IMMEDIATE, src/db/sqlite.ts); PostgreSQL is made to, except for
  // writes no other write can invalidate (src/data/independent-writes.ts).
  const serial = ctx.provider === "postgresql" && !options.independent;
  const storage = fileStorage(ctx.config, ctx.store);
  const attempt = async () => {
    let files: FileChanges | undefined;
    let events: WrittenEvents | undefined;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new ApiError("TIMEOUT");
    const transactionOptions = { maxWait: remaining, timeout: remaining, awaitCompany: true };
    const run = async (tx: StoreTransaction) => {
      if (serial) await tx.prisma.$executeRawUnsafe(advisoryWriteLock);
      trackNames(tx);
      if (ctx.provider === "sqlite") trackRows(tx);
      tx.carry.files = files = new FileChanges(storage, tx);
      const value = await work(tx);
      if (Date.now() > deadline) throw new ApiError("TIMEOUT");
      // The events of the work's writes go in with them (src/data/outbox.ts), as the transaction's last statement.
      events = await writeEvents(ctx, tx);
      return value;
    };
    // An independent write runs without Prisma's interactive transaction as long as its statements
    // translate (`direct`, src/db/store.ts); it stores no file, so running it again under Prisma leaves none behind.
    const result = (await (
      options.independent
        ? ctx.store.transaction(mayRunTwice(run), { ...transactionOptions, direct: true })
        : ctx.store.transaction(run, transactionOptions)
    ).catch(async (error: unknown) => {
      await files?.rolledBack();
      throw error;
    })) as T;
    const stored = await events!.stored;
    await files?.committed();
    announceEvents(ctx, stored);
    return result;
  };
  for (let tries = 1; ; tries++) {
    try {
      return await (serial ? ctx.store.writeQueue.run(attempt) : attempt());
    } catch (error) {
      // Another process held the write lock past the wait in src/db, or PostgreSQL broke a deadlock by rolling this
      // transaction back: nothing was written, so run it all again.
      if (!isBusyError(error) && !isDeadlock(error)) throw error;
      if (tries >= 3 || Date.now() >= deadline) throw new ApiError("TIMEOUT");
    }
  }
}

/** How a write is checked: `alongside`, a check run beside the body's own (a route's parent), whose failure wins. */
interface WriteChecks {
  alongside?: Promise<unknown>;
}

async function prepare(
  ctx: Context,
  tx: StoreTransaction,
  def: ResourceDef,
  input: Record<string, unknown>,
  fixed: Record<string, unknown>,
  existing?: Row,
  { alongside }: WriteChecks = {},
) {
  input = await selfServiceInput(ctx, tx, def, input, existing);
  const validated = validateResource(ctx, tx, def, input, {
    mode: existing ? "update" : "create",
    fixed,
    existingId: existing?.id as number | undefined,
  });
  let data: Record<string, unknown>;
  if (alongside) {
    const [check, validation] = await Promise.allSettled([alongside, validated]);
    if (check.status === "rejected") throw check.reason;
    if (validation.status === "rejected") throw validation.reason;
    data = validation.value;
  } else {
    data = await validated;
  }
  refuseAuthoringAsOthers(ctx, def, data, existing);
  const morphTo = Object.values(def.relations).find((r) => r.kind === "morphTo");
  if (morphTo?.kind === "morphTo") await validateMorphOwner(ctx, tx, data, morphOwnersOf(morphTo.morphRelation));
  for (const key of ["createdAt", "updatedAt"]) if (input[key] != null) data[key] = input[key];
  for (const [name, upload] of Object.entries(def.uploads ?? {})) {
    const file = input[name];
    const key = snake(name);
    if (isFile(file)) {
      const stored = await storeFile(ctx.config, filesOf(tx), file, {
        dir: upload.dir,
        field: key,
        image: upload.image,
        accountId: ctx.auth!.accountId,
      });
      data[upload.column] = stored.path;
      if (upload.filenameColumn) data[upload.filenameColumn] = stored.filename;
      if (existing?.[upload.column]) await filesOf(tx).delete([existing[upload.column] as string]);
    } else if (file === null && !upload.required) {
      data[upload.column] = null;
      if (existing?.[upload.column]) await filesOf(tx).delete([existing[upload.column] as string]);
    } else if (!existing && upload.required) {
      throw validationError({ [key]: [`The ${key.replace(/_/g, " ")} field is required.`] });
    }
  }
  if (def.spread && input[def.spread] !== undefined) data[def.spread] = input[def.spread];
  await def.hooks?.beforeWrite?.({
    data,
    fixed,
    existing,
    ctx,
    tx,
    writes: recordWrites(ctx, tx),
    registry: resources,
    scopes: knownScopes,
  });
  return data;
}

/**
 * Creates a row of `def` in the caller's account, with `fixed` columns set by the route; nothing is written unless
 * `checks.alongside` passes.
 */
export async function createRow(
  ctx: Context,
  tx: StoreTransaction,
  def: ResourceDef,
  input: Record<string, unknown>,
  fixed: Record<string, unknown> = {},
  checks: WriteChecks = {},
) {
  const data = await prepare(ctx, tx, def, input, fixed, undefined, checks);
  await applyCreateDefaults(ctx, tx, def.model, def.fields, data, fixed, { accountId: ctx.auth!.accountId });
  const values = { ...data, ...fixed, ...(def.link ? {} : { accountId: ctx.auth!.accountId }) };
  const effects = def.hooks?.beforeInsert?.({ row: values, ctx, tx, writes: recordWrites(ctx, tx) });
  // Where statements pipeline, the INSERT goes out right behind the effects' writes instead of after their answers.
  if (effects && !tx.pipelines) await effects;
  const inserted = createTracked(tx, def, values, effects);
  const afterInsert = def.hooks?.afterInsert;
  if (afterInsert) {
    inserted.catch(() => undefined);
    const row = tx.pipelines ? { ...values, id: new InsertedId(def.model) } : await inserted;
    await afterInsert({ row, ctx, tx, writes: recordWrites(ctx, tx, inserted) });
  }
  const row = await inserted;
  await def.hooks?.afterCreate?.({ row, ctx, tx, writes: recordWrites(ctx, tx) });
  return row;
}

/**
 * A person's credential (an SSO or access token) writes as that person: a field that defaults to the caller
 * (`author_id`, `assigned_by_id`) may name only them, on create and on update (or keep what the row has), unless the credential holds `*` (an
 * administrator entering records for others). Whatever rights let a person write (their roles' scopes today,
 * self-service rules later), none lets them put a record under another person's name. An API key acts for the
 * account, not for a person: it may name anyone, as PERSCOM's keys do.
 */
function refuseAuthoringAsOthers(ctx: Context, def: ResourceDef, data: Record<string, unknown>, existing?: Row): void {
  const auth = ctx.auth!;
  if ((auth.kind !== "sso" && auth.kind !== "oauth") || auth.userId === null || auth.scopes.has("*")) return;
  for (const [name, f] of Object.entries(def.fields)) {
    const value = data[name];
    // An update that sends the value the row already has (a client sending the whole record back) changes nothing.
    if (!f.defaultsToCaller || value === undefined || value === auth.userId || (existing && value === existing[name]))
      continue;
    const field = snake(name);
    throw new ApiError(
      "FORBIDDEN",
      `A person's token writes as that person: ${field} may only be your own user id (${auth.userId}), or left out; naming someone else needs the * scope.`,
    );
  }
}

/** Fills what a create leaves out: the caller as author, `order` after the last one in `scope`. */
export async function applyCreateDefaults(
  ctx: Context,
  tx: StoreTransaction,
  model: string,
  fields: Record<string, FieldDef>,
  data: Record<string, unknown>,
  fixed: Record<string, unknown>,
  scope: Record<string, unknown>,
): Promise<void> {
  for (const [name, f] of Object.entries(fields)) {
    if (f.defaultsToCaller && data[name] === undefined && fixed[name] === undefined) data[name] = ctx.auth!.userId;
    if (f.autoOrder && data[name] == null) {
      const max = await delegateOf(tx.prisma, model).aggregate({ where: scope, _max: { [name]: true } });
      data[name] = (max._max[name] ?? 0) + 1;
    }
  }
}

/** Updates `existing` (the row as read, every column) with `input`; answers it as it is now (`existing` if unchanged). */
export async function updateRow<R extends Row>(
  ctx: Context,
  tx: StoreTransaction,
  def: ResourceDef,
  existing: R,
  input: Record<string, unknown>,
): Promise<R | StoredRow> {
  const data = await prepare(ctx, tx, def, input, {}, existing);
  if (Object.keys(data).length === 0) return existing;
  const row = (await updateTracked(ctx, tx, def, existing.id as number, data, existing))!;
  rememberName(tx, def.model, row);
  return row;
}

/** Resources whose rows point at `def` polymorphically: deleted with it, files included. */
const morphChildren = (def: ResourceDef) =>
  [
    ...new Set(
      Object.values(def.relations).flatMap((r) => (r.kind === "morphOne" || r.kind === "morphMany" ? [r.target] : [])),
    ),
  ].map((name) => resources.find((r) => r.name === name)!);

export async function deleteRows(ctx: Context, tx: StoreTransaction, def: ResourceDef, ids: number[]) {
  if (ids.length === 0) return;
  await def.hooks?.beforeDelete?.({ ids, ctx, tx });
  for (const child of morphChildren(def)) {
    const where = { accountId: ctx.auth!.accountId, modelType: def.morphClass, modelId: { in: ids } };
    await doomStoredFiles(tx, child, where);
    await deleteTracked(tx, child, where);
  }
  await doomStoredFiles(tx, def, owned(ctx, def, { id: { in: ids } }, "delete"));
  await deleteTracked(tx, def, owned(ctx, def, { id: { in: ids } }, "delete"), ids);
}

/** Deletes the stored files of the rows about to be deleted, as the transaction commits (src/files/changes.ts). */
async function doomStoredFiles(tx: StoreTransaction, def: ResourceDef, where: object) {
  const columns = Object.values(def.uploads ?? {}).map((u) => u.column);
  if (columns.length === 0) return;
  const rows = await tx.findMany(def.model, { where, select: Object.fromEntries(columns.map((c) => [c, true])) });
  await filesOf(tx).delete(
    rows.flatMap((row) => columns.map((c) => row[c]).filter((p): p is string => typeof p === "string" && !!p)),
  );
}

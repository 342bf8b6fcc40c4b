import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Config } from "../../core/config.ts";
import type { Database } from "../../db/prisma.ts";
import type { ChangeEventRecord, EventBus } from "../../core/events.ts";
import { evaluateCondition } from "../../core/conditions.ts";
import { MAX_AUTOMATION_DEPTH } from "../../resources/automation-actions.ts";
import { readEvents, type FeedPosition } from "../feed.ts";
import { retryDelayMs } from "../webhooks/dispatcher.ts";
import { everyHour, retentionCutoff } from "../retention.ts";
import {
  claimAutomations,
  heldWhere,
  moveCursor,
  releaseAutomation,
  renewLease,
  type ClaimedAutomation,
} from "./leases.ts";
import { automationVariables } from "./variables.ts";
import { describeError, effectKey, isPermanent, ownerStanding, performAction, type ActionRun } from "./perform.ts";
import { accountTimezone, nextRunOf } from "../../resources/automation-checks.ts";

/**
 * The automations runner: runs each account's automations on the events they are triggered by, and on their
 * schedules' due times, once each, across instances and restarts.
 *
 * As the webhook dispatcher does for webhooks (src/events/webhooks/dispatcher.ts), each automation keeps a cursor
 * over the outbox and is claimed with a lease (./leases.ts), so that one instance works it at a time. For each event
 * it is triggered by, in order, it inserts an AutomationRun (unique per automation and event: an instance taking over
 * after a crash finds it), evaluates the condition over the event's variables, performs the actions in order
 * (./perform.ts: each exactly once where the target allows), and records the run's final state and moves the cursor
 * in one transaction. Among the automations one event triggers, higher priority runs first: an automation waits
 * while one of higher priority in its account has the event still ahead of it. A failed action retries the run with
 * backoff (the actions already performed are not performed again: their effects are recorded); after
 * `automationMaxAttempts`, or a failure no retry can mend (refused input, a missing scope), the run is `failed` and the
 * cursor moves on. Events written at MAX_AUTOMATION_DEPTH (automations' actions triggering automations) run nothing:
 * the run is `stopped` and says why.
 *
 * A scheduled automation is claimed once its next due time has come; its run is unique per due time, and the next due
 * time is the first after now: due times missed while no instance ran are run once, not once each.
 */

const CONCURRENCY = 8;
/** Run-log and effect rows one pruning statement deletes; a longer backlog waits for the next hour. */
const PRUNE_BATCH = 5000;
const EVENTS_PER_CLAIM = 100;
const WAKE_INTERVAL_MS = 20;

interface LogFn {
  (fields: object, message: string): void;
}

export interface RunnerOptions {
  db: Pick<Database, "provider" | "prisma" | "store" | "read">;
  config: Config;
  /** Woken by its committed events; the events automations' actions write are announced on it. */
  bus: Pick<EventBus, "subscribe" | "publish">;
  logger: { info: LogFn; warn: LogFn; error: LogFn };
  instanceId?: string;
  concurrency?: number;
}

export interface Runner {
  /** Takes no more work, waits for the runs under way, gives their automations back. */
  stop(): Promise<void>;
}

/** How long a claim lasts: a few action timeouts, renewed after every action. */
export const automationLeaseMs = (config: Pick<Config, "webhookTimeoutMs">): number =>
  4 * config.webhookTimeoutMs + 1000;

export const DEPTH_GUARD_ERROR = `The depth guard stopped the chain: the event was written by automations ${MAX_AUTOMATION_DEPTH} deep (at most ${MAX_AUTOMATION_DEPTH} automations run in a chain).`;

type RunStatus = "succeeded" | "failed" | "skipped" | "stopped";

interface Outcome {
  type: string;
  status: "succeeded" | "done" | "failed" | "not_run";
  idempotency_key: string;
  detail: Record<string, unknown> | null;
  error: string | null;
  duration_ms: number;
}

/** The run to work on, found or inserted: `finished` when an earlier holder recorded its final state already. */
interface RunRow {
  id: number;
  status: string;
  attempts: number;
}

class LeaseLost extends Error {}

const positionOf = (event: ChangeEventRecord): FeedPosition => ({ txid: event.txid, id: event.id });
const isUniqueViolation = (error: unknown) => (error as { code?: unknown })?.code === "P2002";

/**
 * Deletes the oldest runs older than `before`, and their effects, at most PRUNE_BATCH: runs and effects go with the
 * events they were for. The oldest are read by id (runs are numbered as they are made; neither table has an index on
 * its time), so each pruning reads a bounded range whatever the table's size; answers how many runs it deleted.
 */
export async function pruneRuns(db: Pick<Database, "prisma" | "store">, before: Date): Promise<number> {
  const oldest = await db.prisma.automationRun.findMany({
    orderBy: { id: "asc" },
    take: PRUNE_BATCH,
    select: { id: true, createdAt: true },
  });
  const ids = oldest.filter((run) => run.createdAt < before).map((run) => run.id);
  if (!ids.length) return 0;
  await db.store.transaction(async (tx) => {
    await tx.prisma.automationEffect.deleteMany({ where: { runId: { in: ids } } });
    await tx.prisma.automationRun.deleteMany({ where: { id: { in: ids } } });
  });
  return ids.length;
}

export function startRunner({ db, config, bus, logger, instanceId, concurrency = CONCURRENCY }: RunnerOptions): Runner {
  const instance = instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const lease = automationLeaseMs(config);
  const leaseFrom = (now: Date) => new Date(now.getTime() + lease);

  const running = new Map<number, Promise<void>>();
  let stopping = false;
  let ticking: Promise<void> | null = null;
  let tickAgain = false;
  let saturated = false;
  let wakes = 0;
  let lastTick = 0;
  let wakeTimer: NodeJS.Timeout | null = null;
  const retryTimers = new Set<NodeJS.Timeout>();

  function wake() {
    wakes++;
    if (stopping || wakeTimer) return;
    wakeTimer = setTimeout(
      () => {
        wakeTimer = null;
        void tick();
      },
      Math.max(0, lastTick + WAKE_INTERVAL_MS - Date.now()),
    );
  }

  function wakeAt(at: Date) {
    if (stopping) return;
    const timer = setTimeout(
      () => {
        retryTimers.delete(timer);
        wake();
      },
      Math.max(0, at.getTime() - Date.now()),
    );
    retryTimers.add(timer);
  }

  function tick(): Promise<void> {
    if (stopping) return Promise.resolve();
    if (ticking) {
      tickAgain = true;
      return ticking;
    }
    ticking = (async () => {
      do {
        tickAgain = false;
        lastTick = Date.now();
        let free = concurrency - running.size;
        if (free <= 0) {
          saturated = true;
          break;
        }
        let claimed: ClaimedAutomation[] = [];
        try {
          for (const kind of ["schedules", "events"] as const) {
            const now = new Date();
            const some = await claimAutomations(db, kind, instance, now, leaseFrom(now), free);
            free -= some.length;
            claimed = claimed.concat(some);
            if (free <= 0) break;
          }
        } catch (error) {
          logger.error({ err: error }, "Automations: claiming automations failed; trying again at the next poll");
        }
        saturated = free <= 0;
        for (const automation of claimed) start(automation);
      } while (tickAgain && !stopping);
    })().finally(() => {
      ticking = null;
    });
    return ticking;
  }

  function start(automation: ClaimedAutomation) {
    if (running.has(automation.id)) return;
    const wakesBefore = wakes;
    const run = (automation.schedule ? workSchedule(automation) : workEvents(automation))
      .catch((error: unknown) => {
        logger.error(
          { err: error, automation: automation.id },
          "Automations: a run failed; the automation is tried again later",
        );
        return false;
      })
      .then((more) => {
        running.delete(automation.id);
        if (!stopping && (more || saturated || wakes !== wakesBefore)) wake();
      });
    running.set(automation.id, run);
  }

  /**
   * One claim's work on an event-triggered automation: a page of events at most. True when more may be waiting, or
   * when it ran something (automations of lower priority may be waiting for it).
   */
  async function workEvents(automation: ClaimedAutomation): Promise<boolean> {
    let held = true;
    let ran = false;
    try {
      const events = await readEvents(db, {
        accountId: automation.accountId,
        after: automation.cursor,
        limit: EVENTS_PER_CLAIM,
      });
      let passed: FeedPosition | null = null;
      for (const event of events) {
        if (stopping) break;
        if (!automation.triggers.includes(event.type)) {
          passed = positionOf(event);
          continue;
        }
        if (await waitsForHigherPriority(automation, event)) break;
        const kept = await runEvent(automation, event, passed);
        passed = null;
        ran = true;
        if (kept !== "held") {
          held = false;
          return true;
        }
      }
      if (passed && !(await moveCursor(db, automation, instance, passed, leaseFrom(new Date())))) held = false;
      return ran || events.length === EVENTS_PER_CLAIM;
    } finally {
      if (held) await releaseAutomation(db, automation.id, instance, new Date());
    }
  }

  /** Whether an enabled automation of higher priority in the account, triggered by `event`, has not run on it yet. */
  async function waitsForHigherPriority(automation: ClaimedAutomation, event: ChangeEventRecord): Promise<boolean> {
    const higher = await db.prisma.automation.findMany({
      where: {
        accountId: automation.accountId,
        enabled: true,
        schedule: null,
        priority: { gt: automation.priority },
        OR: [
          { cursorTxid: { lt: BigInt(event.txid) } },
          { cursorTxid: BigInt(event.txid), cursorId: { lt: event.id } },
        ],
      },
      select: { triggers: true },
    });
    return higher.some((a) => {
      const triggers = typeof a.triggers === "string" ? JSON.parse(a.triggers) : a.triggers;
      return Array.isArray(triggers) && triggers.includes(event.type);
    });
  }

  /** The run of (automation, event or due time), inserted if none is; another instance's or an earlier one found. */
  async function findOrInsertRun(
    automation: ClaimedAutomation,
    key: { eventId: number; eventType: string } | { scheduledFor: Date },
    depth: number,
  ): Promise<RunRow> {
    const where =
      "eventId" in key
        ? { automationId_eventId: { automationId: automation.id, eventId: key.eventId } }
        : { automationId_scheduledFor: { automationId: automation.id, scheduledFor: key.scheduledFor } };
    const select = { id: true, status: true, attempts: true };
    const found = await db.prisma.automationRun.findUnique({ where, select });
    if (found) return found;
    try {
      return await db.store.transaction((tx) =>
        tx.prisma.automationRun.create({
          data: { accountId: automation.accountId, automationId: automation.id, ...key, depth, status: "running" },
          select,
        }),
      );
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return db.prisma.automationRun.findUniqueOrThrow({ where, select });
    }
  }

  /**
   * Runs the automation's actions for one run: the condition first (for an event), then each action in order. What it
   * came to: `finished` with a status, or `retry` after a failure that may pass on a later attempt.
   */
  async function perform(
    automation: ClaimedAutomation,
    run: RunRow,
    event: ChangeEventRecord | null,
    depth: number,
    variables: Record<string, unknown>,
    keyOf: (index: number) => string,
  ): Promise<{
    status: RunStatus | "retry";
    conditionValue: boolean | null;
    outcomes: Outcome[];
    error: string | null;
  }> {
    let conditionValue: boolean | null = null;
    if (automation.condition) {
      try {
        conditionValue = await evaluateCondition(automation.condition, variables);
      } catch (error) {
        return {
          status: "failed",
          conditionValue: null,
          outcomes: [],
          error: `The condition failed: ${describeError(error)}`,
        };
      }
      if (!conditionValue) return { status: "skipped", conditionValue, outcomes: [], error: null };
    } else if (event) conditionValue = true;
    const standing = await ownerStanding(db, automation);
    if ("refused" in standing) return { status: "failed", conditionValue, outcomes: [], error: standing.refused };
    const actionRun: ActionRun = {
      db,
      config,
      bus,
      automation,
      scopes: standing.scopes,
      runId: run.id,
      depth,
      event,
      variables,
    };
    const outcomes: Outcome[] = [];
    let failure: { error: string; permanent: boolean } | null = null;
    for (const [index, action] of automation.actions.entries()) {
      const key = keyOf(index);
      if (failure) {
        outcomes.push({
          type: action.type,
          status: "not_run",
          idempotency_key: key,
          detail: null,
          error: null,
          duration_ms: 0,
        });
        continue;
      }
      const started = performance.now();
      try {
        const done = await performAction(actionRun, action, key);
        outcomes.push({
          type: action.type,
          status: done.status,
          idempotency_key: key,
          detail: done.detail,
          error: null,
          duration_ms: Math.round(performance.now() - started),
        });
      } catch (error) {
        const statusCode = (error as { statusCode?: number | null }).statusCode;
        failure = { error: describeError(error), permanent: isPermanent(error) };
        outcomes.push({
          type: action.type,
          status: "failed",
          idempotency_key: key,
          detail: statusCode !== undefined ? { status_code: statusCode } : null,
          error: failure.error,
          duration_ms: Math.round(performance.now() - started),
        });
      }
      if (!(await renewLease(db, automation, instance, leaseFrom(new Date())))) throw new LeaseLost();
    }
    if (!failure) return { status: "succeeded", conditionValue, outcomes, error: null };
    const last = failure.permanent || automation.attempts + 1 >= config.automationMaxAttempts;
    return { status: last ? "failed" : "retry", conditionValue, outcomes, error: failure.error };
  }

  /**
   * Records the run's state and the automation's next, in one transaction, while this instance holds it: a final
   * state moves the cursor (or the due time); a retry counts the attempt, sets when the next is due and gives the
   * automation back. Throws LeaseLost (nothing recorded) when another instance took it over.
   */
  async function record(
    automation: ClaimedAutomation,
    run: RunRow,
    result: { status: RunStatus | "retry"; conditionValue: boolean | null; outcomes: Outcome[]; error: string | null },
    next: { cursor?: FeedPosition; nextRunAt?: Date | null },
    startedAt: number,
  ): Promise<"held" | "released"> {
    const now = new Date();
    const retry = result.status === "retry";
    const attempts = retry ? automation.attempts + 1 : 0;
    const nextAttemptAt = retry ? new Date(now.getTime() + retryDelayMs(config.automationRetryBaseMs, attempts)) : null;
    await db.store.transaction(async (tx) => {
      const { count } = await tx.prisma.automation.updateMany({
        where: heldWhere(automation, instance),
        data: retry
          ? { attempts, nextAttemptAt, claimedBy: null, claimedUntil: now }
          : {
              attempts: 0,
              nextAttemptAt: null,
              claimedUntil: leaseFrom(now),
              ...(next.cursor ? { cursorTxid: BigInt(next.cursor.txid), cursorId: next.cursor.id } : {}),
              ...(next.nextRunAt !== undefined ? { nextRunAt: next.nextRunAt } : {}),
            },
      });
      if (count !== 1) throw new LeaseLost();
      await tx.prisma.automationRun.update({
        where: { id: run.id },
        data: {
          status: retry ? "running" : result.status,
          conditionValue: result.conditionValue,
          outcomes: result.outcomes as object[],
          error: result.error,
          durationMs: Math.round(performance.now() - startedAt),
          attempts: run.attempts + 1,
        },
      });
    });
    if (retry) {
      Object.assign(automation, { attempts });
      wakeAt(nextAttemptAt!);
      return "released";
    }
    Object.assign(automation, {
      attempts: 0,
      ...(next.cursor ? { cursor: next.cursor } : {}),
      ...(next.nextRunAt !== undefined ? { nextRunAt: next.nextRunAt } : {}),
    });
    if (result.status === "failed")
      logger.warn(
        { automation: automation.id, run: run.id, error: result.error },
        "Automation run failed after its last attempt",
      );
    return "held";
  }

  /** Runs the automation on one event it is triggered by. "held": go on; "released": a retry is pending; "lost". */
  async function runEvent(
    automation: ClaimedAutomation,
    event: ChangeEventRecord,
    passed: FeedPosition | null,
  ): Promise<"held" | "released" | "lost"> {
    const startedAt = performance.now();
    const depth = event.depth ?? 0;
    try {
      const run = await findOrInsertRun(automation, { eventId: event.id, eventType: event.type }, depth);
      const cursor = positionOf(event);
      if (run.status !== "running") {
        // Finished by an instance whose lease ran out before it moved the cursor (a state recorded with it, so rare).
        return (await moveCursor(db, automation, instance, cursor, leaseFrom(new Date()))) ? "held" : "lost";
      }
      if (depth >= MAX_AUTOMATION_DEPTH) {
        const stopped = { status: "stopped" as const, conditionValue: null, outcomes: [], error: DEPTH_GUARD_ERROR };
        return await record(automation, run, stopped, { cursor }, startedAt);
      }
      const variables = (await automationVariables(db.store, automation.accountId, event, {
        baseUrl: config.publicUrl ?? "",
      })) as unknown as Record<string, unknown>;
      const result = await perform(automation, run, event, depth, variables, (index) =>
        effectKey(automation.id, { eventId: event.id }, index),
      );
      // A retry keeps the cursor before the event, past the events passed over on the way to it.
      if (result.status === "retry" && passed) {
        if (!(await moveCursor(db, automation, instance, passed, leaseFrom(new Date())))) return "lost";
      }
      return await record(automation, run, result, { cursor }, startedAt);
    } catch (error) {
      if (error instanceof LeaseLost) return "lost";
      throw error;
    }
  }

  /** Runs a scheduled automation for its due time, and sets the next. */
  async function workSchedule(automation: ClaimedAutomation): Promise<boolean> {
    let held = true;
    const startedAt = performance.now();
    try {
      const due = automation.nextRunAt!;
      const timezone = await accountTimezone(db.store, automation.accountId);
      // The first due time after now: the ones missed while no instance ran are not run one by one.
      const nextRunAt = nextRunOf(automation.schedule!, timezone, new Date(Math.max(Date.now(), due.getTime())));
      const run = await findOrInsertRun(automation, { scheduledFor: due }, 0);
      if (run.status !== "running") {
        const { count } = await db.store.transaction((tx) =>
          tx.prisma.automation.updateMany({ where: heldWhere(automation, instance), data: { nextRunAt } }),
        );
        return count === 1;
      }
      const base = await automationVariables(db.store, automation.accountId, null);
      const usersCount = await db.prisma.user.count({ where: { accountId: automation.accountId } });
      const variables = { ...base, schedule: { due_at: due.toISOString() }, users_count: usersCount };
      const result = await perform(automation, run, null, 0, variables, (index) =>
        effectKey(automation.id, { scheduledFor: due }, index),
      );
      const kept = await record(automation, run, result, { nextRunAt }, startedAt);
      if (kept === "released") held = false;
      return true;
    } catch (error) {
      if (error instanceof LeaseLost) {
        held = false;
        return false;
      }
      throw error;
    } finally {
      if (held) await releaseAutomation(db, automation.id, instance, new Date());
    }
  }

  const pruning = everyHour(
    () => pruneRuns(db, retentionCutoff(config)),
    (error) => logger.error({ err: error }, "Automations: pruning old runs failed; it is tried again in an hour"),
  );

  const poll = setInterval(wake, config.automationPollMs);
  poll.unref();

  const committed = bus.subscribe();
  const listening = (async () => {
    for (;;) {
      const next = await committed.next();
      if (next.done) return;
      wake();
    }
  })().catch((error: unknown) => logger.error({ err: error }, "Automations: the event bus failed; polling only"));

  wake();

  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      clearInterval(poll);
      if (wakeTimer) clearTimeout(wakeTimer);
      for (const timer of retryTimers) clearTimeout(timer);
      await committed.return?.();
      await listening;
      await ticking;
      await Promise.allSettled(running.values());
      await pruning.stop();
    },
  };
}

import { Response } from "../response.ts";
import { timingSafeEqual } from "node:crypto";
import { ApiError } from "../../core/errors.ts";
import type { Database } from "../../db/prisma.ts";
import { listMigrations, pgMigrationsDir } from "../../db/migrate.ts";
import { isMaintenance } from "../maintenance.ts";
import { errorResponse } from "../errors.ts";
import { idsOf } from "../ids.ts";
import type { Metrics } from "./metrics.ts";

/** Paths answered before anything else: no key, no rate limit, no maintenance mode. */
export const probePaths = new Set(["/health", "/ready", "/metrics"]);

/** How long `/ready` waits for the database. */
const READY_TIMEOUT_MS = 3000;

export type Readiness = { ready: true; maintenance: boolean } | { ready: false; reason: string; pending?: string[] };

/**
 * Ready when the database answers and every migration folder shipped with this build is recorded as applied in
 * `_prisma_migrations`. Maintenance mode does not make an instance unready: it is a state of the whole service,
 * answered with PERSCOM's 503 on the API routes, and taking every instance out of the load balancer would hide it.
 */
export async function readiness(db: Database): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the database did not answer within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
  });
  try {
    const rows = await Promise.race([
      db.prisma.$queryRawUnsafe<Array<{ migration_name: string }>>(
        `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      ),
      timeout,
    ]);
    const applied = new Set(rows.map((r) => r.migration_name));
    const pending = migrationNames(db.provider).filter((name) => !applied.has(name));
    if (pending.length) return { ready: false, reason: `${pending.length} migration(s) not applied`, pending };
    return { ready: true, maintenance: await Promise.race([isMaintenance(db.store), timeout]) };
  } catch (error) {
    return {
      ready: false,
      reason: `database unavailable: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

const shipped = new Map<string, string[]>();
/** The migration folders of this build (read once). */
function migrationNames(provider: Database["provider"]): string[] {
  let names = shipped.get(provider);
  if (!names)
    shipped.set(
      provider,
      (names = listMigrations(provider === "postgresql" ? pgMigrationsDir : undefined).map((m) => m.name)),
    );
  return names;
}

/** `Authorization: Bearer <token>` compared in constant time. */
function hasToken(request: Request, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Answers `/health`, `/ready` and `/metrics`. */
export async function probe(
  path: string,
  request: Request,
  db: Database,
  metrics: Metrics,
  metricsToken: string | null,
): Promise<Response> {
  if (path === "/health") return Response.json({ status: "ok" });
  if (path === "/ready") {
    const state = await readiness(db);
    if (!state.ready)
      return Response.json(
        {
          status: "unavailable",
          reason: state.reason,
          ...(state.pending ? { pending_migrations: state.pending } : {}),
        },
        { status: 503 },
      );
    return Response.json({ status: "ok", ...(state.maintenance ? { maintenance: true } : {}) });
  }
  if (metricsToken && !hasToken(request, metricsToken)) {
    return errorResponse(new ApiError("UNAUTHENTICATED", "A valid metrics token is required."), idsOf(request), {
      "WWW-Authenticate": "Bearer",
    });
  }
  let text: string;
  try {
    text = await metrics.text();
  } catch (error) {
    return errorResponse(new ApiError("TIMEOUT", (error as Error).message), idsOf(request));
  }
  return new Response(text, { headers: { "Content-Type": metrics.contentType } });
}

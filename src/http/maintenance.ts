import { Response } from "./response.ts";
import type { Plugin } from "graphql-yoga";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Store } from "../db/store.ts";
import type { Database } from "../db/prisma.ts";
import { admissionOf, MAINTENANCE_FLAG } from "../auth/admission.ts";
import { ApiError, errorKinds } from "../core/errors.ts";
import { errorResponse, graphqlErrorBody } from "./errors.ts";
import { idsOf } from "./ids.ts";

/** Read on every request, so a switch made by the CLI takes effect at once on every instance. */
export async function isMaintenance(store: Pick<Store, "findUnique">): Promise<boolean> {
  const flag = await store.findUnique("SystemFlag", { where: { name: MAINTENANCE_FLAG } });
  return flag?.value === "on";
}

export async function setMaintenance(prisma: PrismaClient, on: boolean): Promise<void> {
  const value = on ? "on" : "off";
  await prisma.systemFlag.upsert({
    where: { name: MAINTENANCE_FLAG },
    create: { name: MAINTENANCE_FLAG, value },
    update: { value },
  });
}

/** How long a client is told to wait before trying again while the service is in maintenance, in seconds. */
export const MAINTENANCE_RETRY_AFTER_SECONDS = 60;

/**
 * While the maintenance flag is on, every API request is answered 503 with `Retry-After`: in PERSCOM's error shape on
 * REST, as a GraphQL response (`errors` with the code in `extensions`) on `/graphql`. Probes, files and the public
 * pages registered before this plugin stay up.
 */
export function maintenancePlugin(db: Database): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      if (url.pathname === "/health" || url.pathname.startsWith("/files/")) return;
      if (!(await admissionOf(db, request, url)).maintenance) return;
      const error = new ApiError("MAINTENANCE");
      const ids = idsOf(request);
      const headers = { "Retry-After": String(MAINTENANCE_RETRY_AFTER_SECONDS) };
      if (url.pathname === "/graphql" || url.pathname.startsWith("/graphql/")) {
        endResponse(Response.json(graphqlErrorBody(error, ids), { status: errorKinds.MAINTENANCE.status, headers }));
        return;
      }
      endResponse(errorResponse(error, ids, headers));
    },
  };
}

import { Cron } from "croner";
import type { Database } from "../../db/prisma.ts";

/**
 * Schedules: a cron expression (croner's: five fields, or six with seconds first) read in the account's time zone
 * (the `organization.timezone` setting), UTC when it has none or one croner does not know.
 */

/** The first due time of `schedule` strictly after `after`, or null when it has none (an expression that never fires). */
export function nextDueTime(schedule: string, timeZone: string, after: Date): Date | null {
  const at = (zone: string) => new Cron(schedule, { timezone: zone, paused: true }).nextRun(after);
  try {
    return at(timeZone);
  } catch (error) {
    if (timeZone === "UTC") throw error;
    return at("UTC");
  }
}

/** The account's time zone: its `organization.timezone` setting, or UTC. */
export async function accountTimeZone(db: Pick<Database, "prisma">, accountId: number): Promise<string> {
  const setting = await db.prisma.setting.findFirst({
    where: { accountId, group: "organization", name: "timezone" },
    select: { payload: true },
  });
  const payload = typeof setting?.payload === "string" ? setting.payload : null;
  if (!payload) return "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone: payload });
    return payload;
  } catch {
    return "UTC";
  }
}

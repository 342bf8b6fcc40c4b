import type { PrismaClient } from "../generated/prisma/client.ts";

export const MAINTENANCE_FLAG = "maintenance";

/** Read on every request, so a switch made by the CLI takes effect at once on every instance. */
export async function isMaintenance(prisma: PrismaClient): Promise<boolean> {
  const flag = await prisma.systemFlag.findUnique({ where: { name: MAINTENANCE_FLAG } });
  return flag?.value === "on";
}

export async function setMaintenance(prisma: PrismaClient, on: boolean): Promise<void> {
  const value = on ? "on" : "off";
  await prisma.systemFlag.upsert({ where: { name: MAINTENANCE_FLAG }, create: { name: MAINTENANCE_FLAG, value }, update: { value } });
}

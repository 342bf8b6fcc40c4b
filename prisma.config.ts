import { defineConfig } from "prisma/config";
import { PrismaLibSQL } from "@prisma/adapter-libsql";

// The JS schema engine plus a driver adapter keeps the Prisma CLI from downloading native engines.
export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new PrismaLibSQL({ url: process.env.DATABASE_URL ?? "file:./data/muster.db" }),
});

import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// The PostgreSQL twin of prisma.config.ts, for `prisma generate` of the PG client and `prisma migrate diff` into
// prisma-pg/migrations (a dev-time step that needs a reachable PostgreSQL). The service applies migrations itself.
export default defineConfig({
  schema: "prisma-pg/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () =>
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" }),
});

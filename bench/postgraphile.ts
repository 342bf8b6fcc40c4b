/**
 * PostGraphile 4.14 as a peer for W2 on PostgreSQL: the same database, its own schema inflected from the tables
 * (with @graphile-contrib/pg-simplify-inflector: `users`, `rankRecordsByUserId`, `rankByRankId`→`rank`, …), served by
 * its own `node:http` middleware, production settings (no GraphiQL, no query log, no watch, no mutations).
 *
 * A rank's image is polymorphic (`Image.modelType` = 'App\Models\Rank', `modelId`): no foreign key PostGraphile could
 * follow. The idiomatic PostGraphile answer is a computed column, so at start this creates the STABLE SQL function
 * `public."Rank_image"("Rank")` (the newest image, as the service picks it) in the bench's scratch database; PostGraphile
 * exposes it as `Rank.image` and calls it inside its one SQL statement.
 *
 * It has no API keys and no accounts: it does not authenticate or scope rows, which the service and the floor do.
 *
 *   PORT=8091 DATABASE_URL=postgresql://127.0.0.1/bench node --import tsx bench/postgraphile.ts
 *
 * PostGraphile 4 depends on graphql 15; the project's graphql is 16, so npm gives postgraphile and graphile-build-pg
 * each a nested copy of graphql 15 (and of graphile-build), and two copies of graphql in one schema fail ("Cannot use
 * GraphQLScalarType "Int" from another module or realm"). Nothing else runs in this process, so every `graphql` and
 * `graphile-build` it requires is resolved to postgraphile's own copy: what a project with PostGraphile alone would have.
 */
import Module, { createRequire } from "node:module";
import { createServer } from "node:http";
import path from "node:path";
import pg from "pg";

const url = process.env.DATABASE_URL;
const port = Number(process.env.PORT ?? 8091);
if (!url) throw new Error("DATABASE_URL (postgresql://…) is required");

const require = createRequire(import.meta.url);
const home = path.dirname(require.resolve("postgraphile/package.json"));
const canonical: Record<string, string> = {
  graphql: path.join(home, "node_modules/graphql"),
  "graphile-build": path.join(home, "node_modules/graphile-build"),
};
const internals = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string };
const resolve = internals._resolveFilename;
internals._resolveFilename = function (request: string, ...rest: unknown[]) {
  const name = request.split("/")[0];
  const target = canonical[name];
  return resolve.call(this, target ? target + request.slice(name.length) : request, ...rest);
};

const { postgraphile } = require("postgraphile") as typeof import("postgraphile");
const { default: simplify } = require("@graphile-contrib/pg-simplify-inflector") as { default: never };

const setup = new pg.Client({ connectionString: url });
await setup.connect();
await setup.query(String.raw`
  CREATE OR REPLACE FUNCTION public."Rank_image"(rank public."Rank") RETURNS public."Image" LANGUAGE sql STABLE AS $$
    SELECT * FROM public."Image" i
     WHERE i."modelType" = 'App\Models\Rank' AND i."modelId" = rank.id AND i."accountId" = rank."accountId"
     ORDER BY i."createdAt" DESC, i.id DESC LIMIT 1
  $$`);
await setup.end();

// Prisma stores DateTime as UTC `timestamp(3)`; W2 selects none, so pg's default parsing is left alone.
const pool = new pg.Pool({ connectionString: url, max: 10 });
const middleware = postgraphile(pool, "public", {
  appendPlugins: [simplify],
  graphiql: false,
  watchPg: false,
  disableQueryLog: true,
  disableDefaultMutations: true,
  ignoreRBAC: true,
  setofFunctionsContainNulls: false,
  legacyRelations: "omit",
  retryOnInitFail: false,
  extendedErrors: ["errcode"],
});

const server = createServer((req, res) => void middleware(req, res));
server.listen(port, "127.0.0.1", () => console.log(`PostGraphile listening on http://127.0.0.1:${port}/graphql`));
const stop = () => server.close(() => void pool.end().finally(() => process.exit(0)));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

/**
 * PostGraphile 5 (the `postgraphile5` package: postgraphile@5.1.5, on grafast) as a second peer beside 4.14 for W2 and
 * W2c on PostgreSQL: the same database, the Amber preset (its default inflection: `allUsers`, `rankRecordsByUserId`,
 * `rankByRankId`, `userByAuthorId`, a table's `id` column as `rowId` beside the Node interface's `id`), served by
 * grafserv on `node:http`, production settings (no GraphiQL, no watch, no mutations, no explain).
 *
 * A rank's image is the computed column bench/postgraphile.ts describes (`public."Rank_image"("Rank")`, created here
 * too, so either peer can start first); PostGraphile 5 exposes it as `Rank.image` and inlines it into its SQL.
 *
 * Like 4.14 it authenticates nothing and scopes no rows to an account.
 *
 *   PORT=8092 DATABASE_URL=postgresql://127.0.0.1/bench node --import tsx bench/postgraphile5.ts
 *
 * PostGraphile 5 declares Node ≥ 22: grafast calls `Promise.withResolvers` (Node 22), polyfilled below for our Node 20.
 */
import { createServer } from "node:http";
import { createRequire } from "node:module";
import pg from "pg";

const url = process.env.DATABASE_URL;
const port = Number(process.env.PORT ?? 8092);
if (!url) throw new Error("DATABASE_URL (postgresql://…) is required");

type Resolvers = { promise: Promise<unknown>; resolve(value: unknown): void; reject(reason: unknown): void };
const promises = Promise as unknown as { withResolvers?: () => Resolvers };
promises.withResolvers ??= () => {
  let resolve!: Resolvers["resolve"];
  let reject!: Resolvers["reject"];
  const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

const require = createRequire(import.meta.url);
// postgraphile5's own types need Node 22's lib: what this script uses of it, typed here.
interface Serv {
  addTo(server: import("node:http").Server): void;
  ready(): Promise<void>;
}
const { postgraphile } = require("postgraphile5") as {
  postgraphile(preset: object): { createServ(grafserv: unknown): Serv; release(): Promise<void> };
};
const { PostGraphileAmberPreset } = require("postgraphile5/presets/amber") as { PostGraphileAmberPreset: object };
const { makePgService } = require("postgraphile5/adaptors/pg") as {
  makePgService(options: { pool: pg.Pool; schemas: string[] }): object;
};
const { grafserv } = require("postgraphile5/grafserv/node") as { grafserv: unknown };

const setup = new pg.Client({ connectionString: url });
await setup.connect();
await setup.query(String.raw`
  CREATE OR REPLACE FUNCTION public."Rank_image"(rank public."Rank") RETURNS public."Image" LANGUAGE sql STABLE AS $$
    SELECT * FROM public."Image" i
     WHERE i."modelType" = 'App\Models\Rank' AND i."modelId" = rank.id AND i."accountId" = rank."accountId"
     ORDER BY i."createdAt" DESC, i.id DESC LIMIT 1
  $$`);
await setup.end();

const pool = new pg.Pool({ connectionString: url, max: 10 });
const preset = {
  extends: [PostGraphileAmberPreset],
  disablePlugins: ["PgMutationCreatePlugin", "PgMutationUpdateDeletePlugin"],
  pgServices: [makePgService({ pool, schemas: ["public"] })],
  grafserv: { graphiql: false, watch: false, graphqlPath: "/graphql" },
  grafast: { explain: false },
};
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (error) => console.error(error));
serv.addTo(server);
await serv.ready();
server.listen(port, "127.0.0.1", () => console.log(`PostGraphile 5 listening on http://127.0.0.1:${port}/graphql`));
const stop = () =>
  server.close(() => {
    void pgl
      .release()
      .then(() => pool.end())
      .finally(() => process.exit(0));
  });
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

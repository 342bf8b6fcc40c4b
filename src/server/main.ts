import { createServer } from "node:http";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/prisma.ts";
import { migrate } from "../db/migrate.ts";
import { createApp } from "./app.ts";

const config = loadConfig();
const applied = await migrate(config.databaseUrl);
if (applied.length) console.log(`Applied migrations: ${applied.join(", ")}`);
const db = await openDatabase(config.databaseUrl);
const { yoga } = createApp({ db, config });
const server = createServer(yoga);
server.listen(config.port, config.host, () => {
  console.log(`Muster listening on http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port} (REST /v2, GraphQL /graphql)`);
});

const shutdown = () => {
  server.close(() => void db.close().then(() => process.exit(0)));
  setTimeout(() => process.exit(0), 10_000).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

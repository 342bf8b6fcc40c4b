import { ConfigError, maskedUrl } from "../core/config.ts";

type Failure = Error & {
  code?: string;
  errno?: number;
  syscall?: string;
  address?: string;
  port?: number;
  cause?: unknown;
};

/** The error and the errors it wraps (`cause`), outermost first. */
function chain(error: unknown): Failure[] {
  const found: Failure[] = [];
  for (let e = error; e instanceof Error && found.length < 10; e = (e as Failure).cause) found.push(e as Failure);
  return found;
}

const unreachable = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
]);

/**
 * One line that says why the service could not start and what to do, naming the setting involved: a bad setting,
 * a database that does not exist or cannot be reached (the URL shown with its password masked), a port in use.
 */
export function describeStartupError(
  error: unknown,
  where: { databaseUrl?: string; host?: string; port?: number },
): string {
  const errors = chain(error);
  const db = where.databaseUrl ? maskedUrl(where.databaseUrl) : "DATABASE_URL";
  for (const e of errors) {
    if (e instanceof ConfigError) return e.message;
    if (e.syscall === "listen" || e.syscall === "bind") {
      const at = `${where.host ?? e.address}:${where.port ?? e.port}`;
      if (e.code === "EADDRINUSE")
        return `Port ${where.port ?? e.port} is already in use (${at}): stop the other server or set PORT to a free port`;
      if (e.code === "EACCES")
        return `Not allowed to listen on ${at}: ports below 1024 need privileges; set PORT to a higher one`;
      if (e.code === "EADDRNOTAVAIL")
        return `HOST ${where.host} is not an address of this machine: set HOST (0.0.0.0 listens on every address)`;
    }
    // PostgreSQL's SQLSTATEs: 3D000 no such database; 28P01 / 28000 the login was refused.
    if (e.code === "3D000")
      return `The database in DATABASE_URL does not exist (${db}): create it first, e.g. createdb, then start again`;
    if (e.code === "28P01" || e.code === "28000")
      return `PostgreSQL refused the login in DATABASE_URL (${db}): ${e.message}`;
    if (e.code && unreachable.has(e.code))
      return `Cannot reach the database server in DATABASE_URL (${db}): ${e.message}`;
    if (/SQLITE_CANTOPEN|unable to open database/i.test(`${e.code ?? ""} ${e.message}`)) {
      return `Cannot open the SQLite database in DATABASE_URL (${db}): check that its directory exists and is writable`;
    }
  }
  const first = errors[0]?.message ?? String(error);
  return `Start-up failed: ${first.split("\n")[0]}`;
}

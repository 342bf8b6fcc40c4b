import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { ExecutionArgs, GraphQLError } from "graphql";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import type { Context } from "../request/context.ts";
import { admissionOf } from "../auth/admission.ts";
import { ARBITRARY_DOCUMENTS_SCOPE, maySendAnyDocument } from "../auth/keys.ts";
import { ApiError } from "../core/errors.ts";
import type { App } from "./app.ts";
import { toApiError } from "../http/errors.ts";
import { documentNestedDeeperThan, nestedDeeperThan } from "../core/nesting.ts";

/** What a graphql-ws client may send in `connectionParams` in place of the upgrade request's headers. */
const HEADER_PARAMS = ["authorization", "x-perscom-id", "x-perscom-notifications"];
/** Headers of the upgrade request that say nothing about the operations run over it. */
const CONNECTION_HEADERS = new Set(["connection", "upgrade", "keep-alive", "transfer-encoding", "content-length"]);

/**
 * The request an operation over the socket runs as, for authentication, the rate limit and request ids: the upgrade
 * request's URL (`?apikey=` works) and headers, with `connectionParams` (`{ authorization: "Bearer …" }`, any case)
 * taking precedence, since browsers cannot set headers on a WebSocket.
 */
function requestOf(upgrade: IncomingMessage, connectionParams: Readonly<Record<string, unknown>> | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(upgrade.headers)) {
    if (value === undefined || CONNECTION_HEADERS.has(name) || name.startsWith("sec-websocket-")) continue;
    try {
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    } catch {
      // A header the Fetch API will not carry is one no operation reads.
    }
  }
  for (const [name, value] of Object.entries(connectionParams ?? {})) {
    if (typeof value !== "string" || !HEADER_PARAMS.includes(name.toLowerCase())) continue;
    try {
      headers.set(name.toLowerCase(), value);
    } catch {
      throw new ApiError("BAD_REQUEST", `The connection parameter ${name} is not a valid header value.`);
    }
  }
  let url: URL;
  try {
    url = new URL(upgrade.url ?? "/graphql", `http://${upgrade.headers.host ?? "localhost"}`);
  } catch {
    url = new URL("http://localhost/graphql");
  }
  // POST: the operation came in a message, as in a POST body (Yoga refuses mutations sent with GET, a link's method).
  return new Request(url, { method: "POST", headers });
}

type Enveloped = ReturnType<App["yoga"]["getEnveloped"]>;
interface Roots {
  execute: Enveloped["execute"];
  subscribe: Enveloped["subscribe"];
}

export interface WebSocketEndpoint {
  /** Stops taking connections and closes the open ones (1001, going away) once their subscriptions have completed. */
  close(): Promise<void>;
}

/**
 * GraphQL over WebSocket (graphql-ws's `graphql-transport-ws` protocol) at `/graphql` on `server`, as the Yoga docs'
 * recipe has it: each operation is parsed, validated and run by the app's own envelop (`getEnveloped`), so the plugins
 * of `/graphql` run for it (authentication, rate limit, query limits, scopes, error masking). What those plugins check
 * on the HTTP request instead (the maintenance flag, bracket nesting, trusted documents) is checked here per operation.
 * Queries, mutations and subscriptions are all served.
 */
export function serveWebSocket(server: Server, app: App, db: Database, config: Config): WebSocketEndpoint {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: config.bodyMaxBytes });
  let closing = false;

  const refuse = (error: unknown): readonly GraphQLError[] => [toApiError(error)];
  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      execute: (args) => (args.rootValue as Roots).execute(args),
      subscribe: (args) => (args.rootValue as Roots).subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        try {
          const request = requestOf(ctx.extra.request, ctx.connectionParams);
          if ((await admissionOf(db, request)).maintenance) return refuse(new ApiError("MAINTENANCE"));
          if (
            documentNestedDeeperThan(payload.query, config.bodyMaxDepth, config.graphqlMaxTokens) ||
            nestedDeeperThan(payload.variables, config.bodyMaxDepth)
          ) {
            const message = `The query or its variables are nested deeper than ${config.bodyMaxDepth} levels.`;
            return refuse(new ApiError("VALIDATION", message, { query: [message] }));
          }
          const enveloped = app.yoga.getEnveloped({
            request,
            req: ctx.extra.request,
            socket: ctx.extra.socket,
            params: payload,
          } as never);
          const document = enveloped.parse(payload.query);
          const errors = enveloped.validate(enveloped.schema, document);
          if (errors.length) return errors;
          const contextValue = (await enveloped.contextFactory()) as unknown as Context;
          const scopes = contextValue.auth?.scopes;
          if (config.graphqlTrustedDocumentsOnly && scopes && !maySendAnyDocument(scopes)) {
            return refuse(
              new ApiError(
                "FORBIDDEN",
                `This API key may send only trusted documents, over HTTP: a document over WebSocket needs the ${ARBITRARY_DOCUMENTS_SCOPE} scope (or *) while GRAPHQL_TRUSTED_DOCUMENTS_ONLY is on.`,
              ),
            );
          }
          return {
            schema: enveloped.schema,
            document,
            contextValue,
            operationName: payload.operationName,
            variableValues: payload.variables,
            rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe } satisfies Roots,
          } satisfies ExecutionArgs;
        } catch (error) {
          return refuse(error);
        }
      },
    },
    sockets,
  );

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let path = "";
    try {
      path = new URL(req.url ?? "/", "http://localhost").pathname;
    } catch {
      // A target that does not parse is no endpoint.
    }
    if (closing || path !== "/graphql") {
      socket.end(
        `HTTP/1.1 ${closing ? "503 Service Unavailable" : "404 Not Found"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => sockets.emit("connection", ws, req));
  };
  server.on("upgrade", upgrade);

  return {
    async close() {
      closing = true;
      server.off("upgrade", upgrade);
      await disposable.dispose();
    },
  };
}

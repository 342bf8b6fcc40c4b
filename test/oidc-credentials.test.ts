/**
 * Access tokens of our OpenID provider everywhere (issue 42, item 6), obtained as a relying party does, with
 * openid-client over real HTTP (the code flow for a person, client credentials for the client alone): subscriptions
 * over SSE and over WebSocket (the token in `connection_init`), the change feed over REST and GraphQL, the webhooks
 * API; who made each change (the actor) on the stored event, the feed, a change stream and the request log; and the
 * token endpoint's CORS, which follows each client's registered origins.
 */
import { Writable } from "node:stream";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, type Client } from "./harness.ts";
import { readEventStream, writeUntilArrives } from "./support/event-stream.ts";
import { person, signIn, startOidcHarness, tokenRequest, type OidcHarness } from "./support/oidc.ts";

const REDIRECT = "https://roster.example/callback";
const ORIGIN = "https://roster.example";
const insecure = { execute: [oidc.allowInsecureRequests] };

/** What the clerk's role permits, and what the client may ask for on their behalf. */
const CLERK = [
  "view:user",
  "view:rank",
  "view:rankrecord",
  "create:rankrecord",
  "view:webhook",
  "create:webhook",
  "delete:webhook",
];

let h: OidcHarness;
let admin: Client;
/** Every log line of the app, parsed. */
const logLines: Record<string, unknown>[] = [];
let clerk: { id: number };
let roster: { id: number; client_id: string; client_secret: string };
let rankId: number;
/** The clerk's access token, through the code flow. */
let token: string;
/** The client's own token, through client credentials. */
let clientToken: string;

const config = () =>
  oidc.discovery(new URL(h.base), roster.client_id, undefined, oidc.ClientSecretBasic(roster.client_secret), insecure);
const api = (bearer: string, method: string, path: string, body?: unknown) =>
  tokenRequest(h, bearer, method, path, body);
/** A rank record about the clerk, written with `bearer` through REST: a change made by a request of its own. */
const writeRecord = async (bearer: string) => {
  const written = await api(bearer, "POST", "/v2/rank-records", { user_id: clerk.id, rank_id: rankId, type: 0 });
  expect(written.status, JSON.stringify(written.body)).toBe(200);
  return written;
};
const logged = (reply: { headers: Headers }) =>
  logLines.find((l) => l.request_id === reply.headers.get("x-perscom-request-id"));

const clerkActor = () => ({ type: "person", user_id: clerk.id, client_id: roster.client_id, via: "oauth" });
const clerkGraphActor = () => ({
  type: "PERSON",
  userId: clerk.id,
  keyId: null,
  clientId: roster.client_id,
  via: "OAUTH",
});

beforeAll(async () => {
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean))
        logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  h = await startOidcHarness({ logLevel: "info" }, { logStream });
  admin = client(h, await h.key("alpha"));
  rankId = (await admin.post("/v2/ranks", { name: "Private" })).body.data.id;
  clerk = await person(h, admin, "Records Clerk", "clerk@example.com", CLERK);
  const made = await admin.post("/v2/oauth-clients", {
    name: "Roster",
    redirect_uris: [REDIRECT],
    scopes: [...CLERK, "create:rank"],
    allowed_origins: [ORIGIN],
  });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  roster = made.body.data;
  const signedIn = await signIn(h, await config(), {
    redirectUri: REDIRECT,
    scope: `openid ${CLERK.join(" ")}`,
    email: "clerk@example.com",
  });
  token = signedIn.tokens.access_token;
  clientToken = (await oidc.clientCredentialsGrant(await config(), { scope: "view:rank create:rank" })).access_token;
});
afterAll(() => h?.close());

describe("the actor of an access token's change", () => {
  test("a person's token: the stored event, the change feed (REST and GraphQL) and the request log name the person and the client, via oauth; a client-credentials token's name the client", async () => {
    const rest = await writeRecord(token);
    const graph = await api(token, "POST", "/graphql", {
      query: `mutation($input: CreateRankRecordInput!) { createRankRecord(input: $input) { rankRecord { rowId authorId } } }`,
      variables: { input: { userId: clerk.id, rankId, type: "PROMOTION" } },
    });
    expect(graph.body.errors, JSON.stringify(graph.body)).toBeUndefined();
    const graphRecord = (graph.body.data as { createRankRecord: { rankRecord: { rowId: number; authorId: number } } })
      .createRankRecord.rankRecord;
    // The author defaults to the signed-in person, as with an SSO token.
    expect(graphRecord.authorId).toBe(clerk.id);
    expect((rest.body.data as { author_id: number }).author_id).toBe(clerk.id);
    const byClient = await api(clientToken, "POST", "/v2/ranks", { name: "Corporal" });
    expect(byClient.status, JSON.stringify(byClient.body)).toBe(200);
    const recordIds = [(rest.body.data as { id: number }).id, graphRecord.rowId];
    const rank = (byClient.body.data as { id: number }).id;

    const stored = await h.db.prisma.changeEvent.findMany({
      where: {
        OR: [
          { resource: "rankRecord", recordId: { in: recordIds } },
          { resource: "rank", recordId: rank },
        ],
      },
      orderBy: { id: "asc" },
    });
    expect(stored.map((e) => [e.resource, e.recordId, e.actor])).toEqual([
      ["rankRecord", recordIds[0], clerkActor()],
      ["rankRecord", recordIds[1], clerkActor()],
      ["rank", rank, { type: "client", client_id: roster.client_id }],
    ]);

    // The feed over REST, read with the clerk's own token.
    const feed = await api(token, "GET", "/v2/changes?types=rankrecord.created&limit=100");
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    const entries = feed.body.data as Array<{ record_id: number; actor: unknown }>;
    for (const id of recordIds) expect(entries.find((e) => e.record_id === id)?.actor).toEqual(clerkActor());
    // ...and with the client's token (it may view ranks).
    const rankFeed = await api(clientToken, "GET", "/v2/changes?types=rank.created&limit=100");
    expect(rankFeed.status, JSON.stringify(rankFeed.body)).toBe(200);
    expect(
      (rankFeed.body.data as Array<{ record_id: number; actor: unknown }>).find((e) => e.record_id === rank),
    ).toMatchObject({
      actor: { type: "client", client_id: roster.client_id },
    });

    // The feed over GraphQL, typed.
    const changes = (bearer: string, type: string) =>
      api(bearer, "POST", "/graphql", {
        query: `{ changes(first: 100, where: { types: ["${type}"] }) { nodes { recordId actor { type keyId userId clientId via } } } }`,
      });
    const typed = await changes(token, "rankrecord.created");
    expect(typed.body.errors, JSON.stringify(typed.body)).toBeUndefined();
    const nodes = (typed.body.data as { changes: { nodes: Array<{ recordId: number; actor: unknown }> } }).changes
      .nodes;
    for (const id of recordIds) expect(nodes.find((n) => n.recordId === id)?.actor).toEqual(clerkGraphActor());
    const typedRanks = await changes(clientToken, "rank.created");
    expect(typedRanks.body.errors, JSON.stringify(typedRanks.body)).toBeUndefined();
    const rankNodes = (typedRanks.body.data as { changes: { nodes: Array<{ recordId: number; actor: unknown }> } })
      .changes.nodes;
    expect(rankNodes.find((n) => n.recordId === rank)?.actor).toEqual({
      type: "CLIENT",
      keyId: null,
      userId: null,
      clientId: roster.client_id,
      via: null,
    });

    // The request log: the person and the client, or the client alone; never a token.
    expect(logged(rest)?.actor).toEqual(clerkActor());
    expect(logged(graph)?.actor).toEqual(clerkActor());
    expect(logged(feed)?.actor).toEqual(clerkActor());
    expect(logged(byClient)?.actor).toEqual({ type: "client", client_id: roster.client_id });
    expect(logged(typedRanks)?.actor).toEqual({ type: "client", client_id: roster.client_id });
    const everything = JSON.stringify(logLines);
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(clientToken);
    expect(everything).not.toContain(roster.client_secret);
  });
});

describe("subscriptions", () => {
  const SUBSCRIPTION = `subscription { rankRecordChanged { rowId type actor { type userId keyId clientId via } rankRecord { authorId } } }`;

  test("over SSE with an access token: a change made by another request arrives with its actor", async () => {
    const response = await fetch(`${h.base}/graphql`, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const stream = readEventStream(response);
    try {
      expect(stream.status).toBe(200);
      const written = await writeRecord(token);
      const { data, errors } = await stream.next();
      expect(errors).toBeUndefined();
      expect(data.rankRecordChanged).toEqual({
        rowId: (written.body.data as { id: number }).id,
        type: "rankrecord.created",
        actor: clerkGraphActor(),
        rankRecord: { authorId: clerk.id },
      });
    } finally {
      await stream.close();
    }
  });

  test("over SSE, a token without the subscription's scope is refused", async () => {
    const response = await fetch(`${h.base}/graphql`, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${clientToken}`,
      },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const text = await response.text();
    expect(text).toContain("FORBIDDEN");
    expect(text).not.toContain('"rankRecordChanged":{');
  });

  test("over WebSocket, the access token in connection_init: a change made by another request arrives with its actor; a query runs as the person; the client's token lacks the scope", async () => {
    const socket = createClient({
      url: h.webSocketUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    try {
      const changes = socket.iterate<{ rankRecordChanged: Record<string, unknown> }>({ query: SUBSCRIPTION });
      const {
        first: { value },
        written,
      } = await writeUntilArrives(
        changes.next(),
        async () => ((await writeRecord(token)).body.data as { id: number }).id,
      );
      const change = value!.data!.rankRecordChanged;
      expect(written).toContain(change.rowId);
      expect(change.actor).toEqual(clerkGraphActor());
      expect(change.rankRecord).toEqual({ authorId: clerk.id });
      await changes.return?.();

      const me = await new Promise<unknown>((resolve, reject) => {
        socket.subscribe({ query: "{ me { rowId } }" }, { next: resolve, error: reject, complete: () => {} });
      });
      expect(me).toEqual({ data: { me: { rowId: clerk.id } } });
    } finally {
      await socket.dispose();
    }

    const ofClient = createClient({
      url: h.webSocketUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${clientToken}` },
    });
    try {
      const refused = await new Promise<unknown>((resolve) => {
        ofClient.subscribe({ query: SUBSCRIPTION }, { next: resolve, error: resolve, complete: () => resolve(null) });
      });
      expect(JSON.stringify(refused)).toContain("FORBIDDEN");
      // The same socket with the client's token reads what its scopes allow.
      const ranks = await new Promise<unknown>((resolve, reject) => {
        ofClient.subscribe({ query: "{ ranks { totalCount } }" }, { next: resolve, error: reject, complete: () => {} });
      });
      expect(ranks).toMatchObject({ data: { ranks: { totalCount: expect.any(Number) } } });
    } finally {
      await ofClient.dispose();
    }
  });
});

describe("webhooks", () => {
  test("managed with a person's access token their role permits; refused (403, nothing stored) for a token whose person's role does not", async () => {
    const hook = await api(token, "POST", "/v2/webhooks", {
      url: "https://hooks.roster.example/muster",
      events: ["rankrecord.created"],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const made = hook.body.data as { id: number; secret: string };
    expect(made.secret).toEqual(expect.any(String));
    const listed = await api(token, "GET", "/v2/webhooks");
    expect(listed.status).toBe(200);
    expect((listed.body.data as Array<{ id: number }>).map((w) => w.id)).toContain(made.id);
    const typed = await api(token, "POST", "/graphql", { query: "{ webhooks { nodes { rowId url } } }" });
    expect(typed.body.errors, JSON.stringify(typed.body)).toBeUndefined();
    expect((typed.body.data as { webhooks: { nodes: unknown[] } }).webhooks.nodes).toContainEqual({
      rowId: made.id,
      url: "https://hooks.roster.example/muster",
    });
    expect(logged(hook)?.actor).toEqual(clerkActor());
    expect(JSON.stringify(logLines)).not.toContain(made.secret);

    // A person whose role does not permit webhooks: the client may ask for the scopes, the token does not get them.
    await person(h, admin, "Reader", "reader@example.com", ["view:user"]);
    const { tokens } = await signIn(h, await config(), {
      redirectUri: REDIRECT,
      scope: "openid view:user view:webhook create:webhook",
      email: "reader@example.com",
    });
    expect(tokens.scope!.split(" ").sort()).toEqual(["openid", "view:user"]);
    const before = await h.db.prisma.webhook.count();
    const refused = await api(tokens.access_token, "POST", "/v2/webhooks", {
      url: "https://hooks.roster.example/other",
      events: ["rankrecord.created"],
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { type: expect.any(String) } });
    expect(await h.db.prisma.webhook.count()).toBe(before);
    expect((await api(tokens.access_token, "GET", "/v2/webhooks")).status).toBe(403);

    expect((await api(token, "DELETE", `/v2/webhooks/${made.id}`)).status).toBe(200);
  });
});

describe("the token endpoint's CORS (clientBasedCORS)", () => {
  const tokenRequestFrom = (origin: string) =>
    fetch(`${h.base}/oauth/token`, {
      method: "POST",
      headers: {
        origin,
        authorization: `Basic ${Buffer.from(`${roster.client_id}:${roster.client_secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: "view:rank" }).toString(),
    });

  test("a token request from the client's registered origin is answered with CORS headers; from another origin, refused without them", async () => {
    const allowed = await tokenRequestFrom(ORIGIN);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(await allowed.json()).toMatchObject({ access_token: expect.any(String), scope: "view:rank" });

    const other = await tokenRequestFrom("https://evil.example");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({
      error: "invalid_request",
      error_description: expect.stringContaining("https://evil.example"),
    });
  });

  test("a preflight names no client, so it is answered for any origin: the request that follows is what is checked", async () => {
    const preflight = (origin: string) =>
      fetch(`${h.base}/oauth/token`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
    for (const origin of [ORIGIN, "https://evil.example"]) {
      const answer = await preflight(origin);
      expect(answer.status).toBe(204);
      expect(answer.headers.get("access-control-allow-origin")).toBe(origin);
      expect(answer.headers.get("access-control-allow-methods")).toContain("POST");
    }
  });
});

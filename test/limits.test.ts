import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness } from "./harness.ts";

/** The error a GraphQL document gets when it breaks a shape limit: code VALIDATION, naming the limit. */
const limitError = (
  body: { data?: unknown; errors: Array<{ extensions: unknown; message: string }> },
  pattern: RegExp,
) => {
  expect(body.data ?? null).toBeNull();
  expect(body.errors[0].extensions).toMatchObject({ code: "VALIDATION", status: 422, type: "ValidationException" });
  expect(body.errors[0].message).toMatch(pattern);
};

describe("with the default limits", () => {
  let h: Harness;
  let api: Client;
  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key());
    await api.post("/v2/ranks", { name: "Private" });
  });
  afterAll(() => h.close());

  test("GraphQL depth, aliases and tokens are capped with a 422-coded error, before anything runs", async () => {
    const deep =
      "{ users { nodes { rank { image { model { ... on Rank { image { model { ... on Rank { image { model { ... on Rank { image { id } } } } } } } } } } } } } }";
    limitError((await api.graphql(deep)).body, /depth limit of 10/);
    limitError(
      (await api.graphql(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: ranks { totalCount }`).join(" ")} }`)).body,
      /Aliases limit of 30/,
    );
    limitError((await api.graphql(`{ ranks { nodes { ${"id ".repeat(5001)} } } }`)).body, /Token limit of 5000/);
    expect((await api.graphql("{ ranks { nodes { id name } } }")).body.data.ranks.nodes).toHaveLength(1);
  });

  test("GraphQL batching (an array of operations in one request) is refused", async () => {
    const response = await h.app.yoga.fetch("http://muster.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await h.key()}` },
      body: JSON.stringify([{ query: "{ ranks { totalCount } }" }, { query: "{ ranks { totalCount } }" }]),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });

  test("include: at most 20 values of at most 4 levels", async () => {
    const many = await api.get(
      `/v2/users?include=${[
        "assignment_records",
        "attachments",
        "award_records",
        "combat_records",
        "fields",
        "position",
        "qualification_records",
        "rank",
        "rank_records",
        "service_records",
        "specialty",
        "status",
        "training_records",
        "unit",
        "primary_assignment_records",
        "secondary_assignment_records",
        "rank.image",
        "unit.users",
        "unit.image",
        "rank_records.rank",
        "award_records.award",
      ].join(",")}`,
    );
    expect(many.status).toBe(422);
    expect(many.body.error.errors.include).toEqual(["At most 20 include values may be given at once."]);
    const deep = await api.get("/v2/users?include=award_records.award.image.model.image");
    expect(deep.status).toBe(422);
    expect(deep.body.error.errors.include).toEqual([
      "The award_records.award.image.model.image include is nested deeper than 4 levels.",
    ]);
    expect((await api.get("/v2/users?include=award_records.award.image.model")).status).toBe(200);
  });

  test("a limit above the maximum page size is served as the maximum", async () => {
    expect((await api.get("/v2/ranks?limit=5000")).body.meta.per_page).toBe(100);
  });

  test("a JSON body over the cap is 413 in the error shape", async () => {
    const reply = await api.post("/v2/ranks", { name: "x".repeat(3 * 1024 * 1024) });
    expect(reply.status).toBe(413);
    expect(reply.body.error.type).toBe("HttpException");
  });
});

describe("with tight limits", () => {
  let h: Harness;
  let api: Client;
  beforeAll(async () => {
    h = await startHarness({ graphqlMaxCost: 60 });
    api = client(h, await h.key());
  });
  afterAll(() => h.close());

  test("the cost limit applies to the prepared REST documents too: 422 naming include, never a 500", async () => {
    const reply = await api.get("/v2/users?include=rank.image,unit.image,position,specialty,status");
    expect(reply.status).toBe(422);
    expect(reply.body.error.errors.include[0]).toMatch(/too large: .*cost/i);
  });
});

describe("operations in flight (MAX_CONCURRENT_OPERATIONS for reads, MAX_CONCURRENT_WRITES for writes)", () => {
  /** A request under a name: its answer is tracked by that name. */
  type Sent = [name: string, send: () => Promise<{ status: number }>];
  /** `first`, then, once it has run `statements` statements, `then`. */
  interface Scenario {
    first: Sent;
    statements: number;
    then: Sent[];
  }

  /** Runs `scenario` (and a health check) on 100 ranks under `limits`; the order the answers came in. */
  async function finishingOrder(
    limits: { maxConcurrentOperations: number; maxConcurrentWrites?: number },
    scenario: (api: Client) => Scenario,
  ) {
    const h = await startHarness(limits);
    try {
      const api = client(h, await h.key());
      const { first, statements, then } = scenario(api);
      await api.post("/v2/ranks/batch", {
        resources: Array.from({ length: 100 }, (_, i) => ({ name: `Seeded ${i}` })),
      });
      const done: string[] = [];
      const track = ([name, send]: Sent) => send().then((r) => (done.push(name), expect(r.status).toBe(200)));
      const before = h.db.statements.count;
      const running = track(first);
      while (h.db.statements.count < before + statements) await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([
        running,
        ...then.map(track),
        track(["health", async () => h.app.yoga.fetch("http://muster.test/health")]),
      ]);
      return done;
    } finally {
      await h.close();
    }
  }

  /** A 300-row batch create (once five of its statements have run), then a one-row create and a one-row read. */
  const longWrite = (api: Client): Scenario => ({
    first: [
      "batch",
      () => api.post("/v2/ranks/batch", { resources: Array.from({ length: 300 }, (_, i) => ({ name: `Rank ${i}` })) }),
    ],
    statements: 5,
    then: [
      ["write", () => api.post("/v2/ranks", { name: "One more" })],
      ["read", () => api.get("/v2/ranks?limit=1")],
    ],
  });
  /** Ranks with their images (two statements, one after the other; the read is sent once the first has gone out), then a one-row read. */
  const longRead = (api: Client): Scenario => ({
    first: ["ranks", () => api.get("/v2/ranks?include=image&limit=100")],
    statements: 2,
    then: [["read", () => api.get("/v2/ranks?limit=1")]],
  });

  test("past the write limit a write waits for a running one to finish; reads wait in a line of their own; health checks never wait", async () => {
    const order = await finishingOrder({ maxConcurrentOperations: 1, maxConcurrentWrites: 1 }, longWrite);
    expect(order.indexOf("write")).toBeGreaterThan(order.indexOf("batch"));
    expect(order.indexOf("read")).toBeLessThan(order.indexOf("batch"));
    expect(order.indexOf("health")).toBeLessThan(order.indexOf("batch"));
  });

  // Without the limit the one-row read finishes first on SQLite (its statement reaches the read thread before the long
  // read's second one); on PostgreSQL the two race.
  test("past the read limit a read waits for a running one to finish", async () => {
    const order = await finishingOrder({ maxConcurrentOperations: 1 }, longRead);
    expect(order.indexOf("read")).toBeGreaterThan(order.indexOf("ranks"));
    expect(order.indexOf("health")).toBeLessThan(order.indexOf("ranks"));
  });

  test("a request still sending its body holds no place in the line", async () => {
    const h = await startHarness({ maxConcurrentOperations: 1, maxConcurrentWrites: 1 });
    try {
      const key = await h.key();
      const encoder = new TextEncoder();
      let finish!: () => void;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode('{"name": "Slow'));
          finish = () => (controller.enqueue(encoder.encode(' rank"}')), controller.close());
        },
      });
      const slow = Promise.resolve(
        h.app.yoga.fetch("http://muster.test/v2/ranks", {
          method: "POST",
          body,
          duplex: "half",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        } as RequestInit),
      );
      expect((await client(h, key).post("/v2/ranks", { name: "Quick rank" })).status).toBe(200);
      finish();
      const created = await slow;
      expect(created.status).toBe(200);
      expect((await created.json()).data.name).toBe("Slow rank");
    } finally {
      await h.close();
    }
  });
});

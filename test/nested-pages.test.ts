import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";

/**
 * A page of a parent's children (`/users/{id}/rank-records`) reads the parent only when it comes back empty: rows
 * with a foreign key to the parent show it is there. What the caller sees is unchanged: rows, an empty page, or a 404
 * for a parent that is missing or another account's.
 */
let h: Harness;
let api: Client;
let other: Client;
let ids: Awaited<ReturnType<typeof seed>>;
let foreignUser: number;

const statementsOf = async (url: string, as = api) => {
  const sql: string[] = [];
  const listen = (text: string) => void sql.push(text);
  h.db.onReaderStatement.add(listen);
  const before = h.db.statements.count;
  const reply = await as.get(url);
  h.db.onReaderStatement.delete(listen);
  return { reply, count: h.db.statements.count - before, sql };
};

beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 100_000 });
  api = client(h, await h.key("alpha"));
  other = client(h, await h.key("beta"));
  ids = await seed(api);
  for (let i = 0; i < 3; i++) {
    const made = await api.post(`/v2/users/${ids.user.id}/rank-records`, {
      rank_id: ids.corporal.id,
      type: 0,
      text: `Record ${i}`,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
  }
  const theirs = await other.post("/v2/users", { name: "Cara Diaz", email: "cara@example.com" });
  foreignUser = theirs.body.data.id;
  expect(
    (
      await other.post(`/v2/users/${foreignUser}/rank-records`, {
        type: 0,
        rank_id: (await other.post("/v2/ranks", { name: "Major" })).body.data.id,
      })
    ).status,
  ).toBe(200);
}, 120_000);
afterAll(() => h.close());

describe("nested pages read their parent only when empty", () => {
  test("a page with rows answers them without reading the parent, and one statement fewer than an empty page", async () => {
    await statementsOf(`/v2/users/${ids.user.id}/rank-records?limit=2`);
    const withRows = await statementsOf(`/v2/users/${ids.user.id}/rank-records?limit=2`);
    expect(withRows.reply.status).toBe(200);
    expect(withRows.reply.body.data.map((r: { user_id: number }) => r.user_id)).toEqual([ids.user.id, ids.user.id]);
    expect(withRows.reply.body.meta.total).toBe(3);
    const empty = await statementsOf(`/v2/users/${ids.other.id}/rank-records?limit=2`);
    expect(empty.reply.status).toBe(200);
    expect(empty.reply.body.data).toEqual([]);
    expect(empty.reply.body.meta.total).toBe(0);
    expect(empty.count, [...empty.sql, "--", ...withRows.sql].join("\n")).toBe(withRows.count + 1);
  });

  test("a missing parent and another account's parent are 404, even with a page past the end", async () => {
    for (const url of [
      `/v2/users/${foreignUser}/rank-records`,
      `/v2/users/999999/rank-records`,
      `/v2/users/${foreignUser}/rank-records?page=5`,
    ]) {
      const { reply } = await statementsOf(url);
      expect(reply.status, url).toBe(404);
      expect(reply.body.error).toBeTruthy();
    }
    // The other account sees its own parent's rows.
    const theirs = await other.get(`/v2/users/${foreignUser}/rank-records`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toHaveLength(1);
  });

  test("a page past the end of an existing parent's rows is empty, with the total", async () => {
    const { reply } = await statementsOf(`/v2/users/${ids.user.id}/rank-records?limit=2&page=3`);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual([]);
    expect(reply.body.meta.total).toBe(3);
  });
});

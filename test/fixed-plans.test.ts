import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApp, type App } from "../src/server/app.ts";
import { fixedPlanStats } from "../src/graphql/fixed-plans.ts";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";
import { pngFile } from "./support/factory.ts";

/**
 * Plans made once per REST document (src/graphql/fixed-plans.ts): a route's second request reuses its first's Prisma
 * query, and every request still answers with its own account's rows, the same bytes as graphql-js planning per
 * request. GraphQL clients' documents, which may take arguments anywhere, are planned per request.
 */
let h: Harness;
let reference: App;
const accounts: Array<{ key: string; api: Client; user: number; rank: number }> = [];

beforeAll(async () => {
  h = await startHarness();
  reference = createApp({ db: h.db, config: { ...h.config, graphqlPlannedExecution: false } });
  for (const name of ["alpha", "bravo"]) {
    const key = await h.key(name);
    const api = client(h, key);
    const s = await seed(api);
    const form = new FormData();
    form.set("name", `${name} badge`);
    form.set("image", pngFile());
    expect((await api.post(`/v2/ranks/${s.corporal.id}/image`, form)).status).toBe(200);
    // Records written by a key of the user's: the author include has a row to show.
    const author = client(h, await h.key(name, "*", s.user.id));
    for (const text of ["First", "Second"]) {
      const r = await author.post(`/v2/users/${s.user.id}/rank-records`, {
        rank_id: s.corporal.id,
        type: 0,
        text: `${name} ${text}`,
        document_id: s.document.id,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    accounts.push({ key, api, user: s.user.id, rank: s.corporal.id });
  }
});
afterAll(() => h.close());

const PAGE = (user: number) => `/v2/users/${user}/rank-records?include=author,rank.image,document&limit=20`;

async function fetchText(app: App, key: string, url: string) {
  const response = await app.yoga.fetch(`http://muster.test${url}`, {
    headers: { authorization: `Bearer ${key}`, accept: "application/json" },
  });
  return {
    status: response.status,
    text: (await response.text()).replace(/"(request_id|trace_id)":"[^"]*"/g, '"$1":"…"'),
  };
}

describe("a REST route's plans", () => {
  test("are made by its first request and reused by the next, whichever account sends it", async () => {
    const [alpha, bravo] = accounts as [(typeof accounts)[0], (typeof accounts)[0]];
    const first = { ...fixedPlanStats };
    const a = await alpha.api.get(PAGE(alpha.user));
    expect(a.status).toBe(200);
    const made = fixedPlanStats.made - first.made;
    // The page's query, and the rank images' (polymorphic children, loaded apart).
    expect(made).toBe(2);

    const second = { ...fixedPlanStats };
    const b = await bravo.api.get(PAGE(bravo.user));
    expect(b.status).toBe(200);
    expect(fixedPlanStats.made - second.made).toBe(0);
    expect(fixedPlanStats.reused - second.reused).toBe(2);

    // Each account's own rows, relations and image, from the same plans.
    for (const [body, name, account] of [
      [a.body, "alpha", alpha],
      [b.body, "bravo", bravo],
    ] as const) {
      expect(body.data.map((r: { text: string }) => r.text)).toEqual([`${name} Second`, `${name} First`]);
      for (const record of body.data) {
        expect(record.author.id).toBe(account.user);
        expect(record.document.name).toBe("Promotion order");
        expect(record.rank.id).toBe(account.rank);
        expect(record.rank.image.name).toBe(`${name} badge`);
      }
    }
    expect(a.body.data[0].rank.image.id).not.toBe(b.body.data[0].rank.image.id);
  });

  test("answer the same bytes as graphql-js planning each request", async () => {
    for (const account of accounts) {
      const urls = [
        PAGE(account.user),
        `/v2/users/${account.user}/rank-records?include=rank,author&page=2&limit=1`,
        "/v2/comments?include=author",
        "/v2/ranks?include=image",
        `/v2/ranks/${account.rank}?include=image`,
        `/v2/users/${account.user}?include=rank,rank.image`,
      ];
      for (const url of urls) {
        const reused = fixedPlanStats.reused;
        const planned = await fetchText(h.app, account.key, url);
        const graphqlJs = await fetchText(reference, account.key, url);
        expect(planned.status, url).toBe(200);
        expect(planned.text, url).toBe(graphqlJs.text);
        // Every route here was asked for by the first account already, or just before by this one.
        if (account !== accounts[0] || url === PAGE(account.user))
          expect(fixedPlanStats.reused, url).toBeGreaterThan(reused);
      }
    }
  });

  test("are left alone by a request that runs on graphql-js", async () => {
    const before = { ...fixedPlanStats };
    const r = await fetchText(reference, accounts[0].key, PAGE(accounts[0].user));
    expect(r.status).toBe(200);
    expect(fixedPlanStats).toEqual(before);
  });
});

describe("a GraphQL client's document", () => {
  test("is planned per request, with its own arguments below the root", async () => {
    const { key, user } = accounts[0];
    const document = `query ($id: Int!, $first: Int!) { user(rowId: $id) { name rankRecords(first: $first) { nodes { text rank { name } } } } }`;
    const before = { ...fixedPlanStats };
    const texts: string[][] = [];
    for (const first of [1, 2]) {
      const response = await h.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ query: document, variables: { id: user, first } }),
      });
      const body = await response.json();
      expect(body.errors).toBeUndefined();
      texts.push(body.data.user.rankRecords.nodes.map((n: { text: string }) => n.text));
    }
    expect(texts).toEqual([["alpha Second"], ["alpha Second", "alpha First"]]);
    expect(fixedPlanStats).toEqual(before);
  });
});

/**
 * Names a client chooses — filter and sort fields, scopes, includes, batch and link ids, body keys, colour names — are
 * looked up among what exists, never among what every JavaScript object inherits: `constructor`, `toString`,
 * `hasOwnProperty`, `valueOf` and `__proto__` (sent in raw JSON, where JSON.parse makes it an own key) name nothing and
 * answer 422 naming the field, with every table as it was. Also: `PATCH .../batch` takes `resources` keyed by id only,
 * and a custom field's `options` is a list, `[]` when there are none.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, seed, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { DatabaseSnapshots, snapshotDiff } from "./support/snapshot.ts";
import { rejected } from "./support/checks.ts";
import { ApiError, FieldErrorBag } from "../src/core/errors.ts";

const PROTOTYPE_NAMES = ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"];
/** Names in the positions that take a dotted path: a to-one relation's column, a nested include. */
const DOTTED = ["rank.constructor", "rank.toString", "rank.__proto__"];
const ALL = [...PROTOTYPE_NAMES, ...DOTTED];

let h: Harness;
let api: Client;
let s: Awaited<ReturnType<typeof seed>>;
let snapshots: DatabaseSnapshots;
let key: string;

beforeAll(async () => {
  h = await startHarness();
  key = await h.key();
  api = client(h, key);
  s = await seed(api);
  snapshots = new DatabaseSnapshots(h.db);
});
afterAll(() => h?.close());

/** Sends `text` as it is, as a JSON body: `"__proto__"` in it arrives as an own key. */
async function sendJson(method: string, url: string, text: string): Promise<Reply> {
  const response = await h.app.yoga.fetch(`http://muster.test${url}`, {
    method,
    body: text,
    headers: { accept: "application/json", "content-type": "application/json", authorization: `Bearer ${key}` },
  });
  const body = await response.text();
  return { status: response.status, body: body ? JSON.parse(body) : null, headers: response.headers };
}

/** Runs `send`, expects a 422 naming exactly `keys`, and that no table changed. */
async function refusedUnchanged(send: () => Promise<Reply>, keys: string[], what: string): Promise<Reply> {
  const before = await snapshots.take();
  const reply = await send();
  rejected(reply, keys, what);
  expect(snapshotDiff(before, await snapshots.take()), what).toEqual([]);
  return reply;
}

/**
 * A GraphQL answer refused with the validation code, without data, its field errors keyed exactly `key` (the input
 * path as sent, the prototype name in it verbatim) and its message naming `name`.
 */
function graphqlRefused(reply: Reply, key: string, name: string, what: string): void {
  expect(reply.status, what).toBeLessThan(500);
  expect(reply.body.data?.result ?? null, `${what} ${JSON.stringify(reply.body)}`).toBeNull();
  const [error, ...more] = reply.body.errors ?? [];
  expect(more, what).toEqual([]);
  expect(error?.extensions?.code, `${what} ${JSON.stringify(reply.body)}`).toBe("VALIDATION");
  expect(Object.keys(error.extensions.errors), what).toEqual([key]);
  expect(error.message, what).toContain(name);
}

describe("search fields, scopes, includes and aggregates named after Object.prototype", () => {
  test.each(ALL)("POST /users/search with %s in each position", async (name) => {
    const field = JSON.stringify(name);
    await refusedUnchanged(
      () => sendJson("POST", "/v2/users/search", `{"filters":[{"field":${field},"operator":"=","value":1}]}`),
      ["filters.0.field"],
      "filter",
    );
    await refusedUnchanged(
      () =>
        sendJson(
          "POST",
          "/v2/users/search",
          `{"filters":[{"type":"or","nested":[{"field":"id","value":1},{"field":${field},"value":1}]}]}`,
        ),
      ["filters.0.nested.1.field"],
      "nested filter",
    );
    await refusedUnchanged(
      () => sendJson("POST", "/v2/users/search", `{"sort":[{"field":${field},"direction":"asc"}]}`),
      ["sort.0.field"],
      "sort",
    );
    await refusedUnchanged(
      () => sendJson("POST", "/v2/users/search", `{"scopes":[{"name":${field}}]}`),
      ["scopes.0.name"],
      "scope",
    );
    await refusedUnchanged(
      () => sendJson("POST", "/v2/forms/search", `{"scopes":[{"name":${field},"parameters":[1]}]}`),
      ["scopes.0.name"],
      "scope where some exist",
    );
    await refusedUnchanged(
      () => sendJson("POST", "/v2/users/search", `{"aggregates":[{"relation":${field},"type":"count"}]}`),
      ["aggregates.0.relation"],
      "aggregate",
    );
    // `rank.*` allows any one relation of a rank: a dotted name passes the allow-list and is refused, under its own key, as naming no relation.
    await refusedUnchanged(
      () => sendJson("POST", "/v2/users/search", `{"includes":[{"relation":${field}}]}`),
      ["includes.0.relation"],
      "search body include",
    );
    await refusedUnchanged(
      () => api.get(`/v2/users?include=${encodeURIComponent(name)}`),
      ["include"],
      "include on a list",
    );
    await refusedUnchanged(
      () => api.get(`/v2/users/${s.user.id}?include=rank,${encodeURIComponent(name)}`),
      ["include"],
      "include on a show",
    );
  });

  test.each(PROTOTYPE_NAMES)("a search term %s is a value: it matches no row and fails nothing", async (name) => {
    const reply = await sendJson("POST", "/v2/users/search", JSON.stringify({ search: { value: name } }));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.data).toEqual([]);
  });

  test.each([...PROTOTYPE_NAMES.map((n) => `pivot.${n}`), ...PROTOTYPE_NAMES])(
    "a many-to-many list refuses %s as a filter and a sort",
    async (name) => {
      const path = `/v2/forms/${s.form.id}/fields/search`;
      await refusedUnchanged(
        () => sendJson("POST", path, JSON.stringify({ filters: [{ field: name, value: 1 }] })),
        ["filters.0.field"],
        "filter",
      );
      await refusedUnchanged(
        () => sendJson("POST", path, JSON.stringify({ sort: [{ field: name }] })),
        ["sort.0.field"],
        "sort",
      );
    },
  );

  test.each(ALL)(
    "GraphQL where and orderBy refuse %s the same way, as a key (REST scopes have no GraphQL form)",
    async (name) => {
      // A dotted name is a key inside a relation: `rank.toString` filters `{ rank: { is: { toString } } }`, sorts `{ rank: { toString } }`.
      const [relation, key] = name.includes(".") ? (name.split(".") as [string, string]) : [null, name];
      const under = (at: string, inner: object) => (relation ? { [relation]: { [at]: inner } } : inner);
      /** Sends the variables as JSON text: a `__proto__` key arrives as an own key, as a client would send it. */
      const ask = async (variable: "where" | "orderBy", type: string, value: unknown) => {
        const text = JSON.stringify({
          query: `query Q($${variable}: ${type}) { result: users(${variable}: $${variable}) { nodes { id } } }`,
          variables: { [variable]: value },
        });
        expect(text).toContain(JSON.stringify(key));
        return sendJson("POST", "/graphql", text);
      };
      const leaf = { [key]: { equals: 1 } };
      const prefix = relation ? `where.${relation}.is.` : "where.";
      graphqlRefused(await ask("where", "UserWhere", under("is", leaf)), `${prefix}${key}`, key, "where");
      graphqlRefused(
        await ask("where", "UserWhere", { AND: [{ rowId: { equals: 1 } }, under("is", leaf)] }),
        `where.AND.1.${relation ? `${relation}.is.` : ""}${key}`,
        key,
        "where under AND",
      );
      graphqlRefused(
        await ask("where", "UserWhere", { rankRecords: { some: { NOT: leaf } } }),
        `where.rankRecords.some.NOT.${key}`,
        key,
        "where through a to-many relation",
      );
      graphqlRefused(
        await ask("where", "UserWhere", { name: { [key]: "x" } }),
        `where.name.${key}`,
        key,
        "an operator",
      );
      graphqlRefused(
        await ask("orderBy", "[UserOrderBy!]", [
          { name: "asc" },
          relation ? { [relation]: { [key]: "asc" } } : { [key]: "asc" },
        ]),
        `orderBy.1.${relation ? `${relation}.` : ""}${key}`,
        key,
        "orderBy",
      );
      // Written in the document itself, it is a field no input type defines.
      if (!key.startsWith("__")) {
        const literal = await api.graphql(
          `{ result: users(where: ${relation ? `{ ${relation}: { is: { ${key}: { equals: 1 } } } }` : `{ ${key}: { equals: 1 } }`}) { nodes { id } } }`,
        );
        expect(literal.body.data, JSON.stringify(literal.body)).toBeUndefined();
        expect(literal.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
          "GRAPHQL_VALIDATION_FAILED",
        ]);
        expect(literal.body.errors[0].message).toContain(`"${key}"`);
      }
    },
  );
});

describe("batch and link bodies keyed by Object.prototype names", () => {
  test.each(PROTOTYPE_NAMES)(
    "PATCH /ranks/batch with resources keyed %s, beside a good id: 422, no rank changed",
    async (name) => {
      const field = JSON.stringify(name);
      await refusedUnchanged(
        () =>
          sendJson(
            "PATCH",
            "/v2/ranks/batch",
            `{"resources":{"${s.private_.id}":{"name":"Renamed"},${field}:{"name":"Hacked"}}}`,
          ),
        [`resources.${name}`],
        "top-level batch update",
      );
      await refusedUnchanged(
        () =>
          sendJson(
            "PATCH",
            `/v2/forms/${s.form.id}/fields/batch`,
            `{"resources":{"${s.field.id}":{"name":"Renamed"},${field}:{"name":"Hacked"}}}`,
          ),
        [`resources.${name}`],
        "many-to-many batch update",
      );
      await refusedUnchanged(
        () => sendJson("DELETE", "/v2/ranks/batch", `{"resources":{${field}:[]}}`),
        [`resources.${name}`],
        "batch delete",
      );
    },
  );

  test.each(PROTOTYPE_NAMES)(
    "attach, sync, toggle and detach with resources keyed %s: 422, no link changed",
    async (name) => {
      const field = JSON.stringify(name);
      for (const [method, route] of [
        ["POST", "attach"],
        ["PATCH", "sync"],
        ["PATCH", "toggle"],
        ["DELETE", "detach"],
      ] as const) {
        await refusedUnchanged(
          () =>
            sendJson(
              method,
              `/v2/forms/${s.form.id}/fields/${route}`,
              `{"resources":{"${s.field2.id}":{"order":7},${field}:{"order":1}}}`,
            ),
          [`resources.${name}`],
          route,
        );
      }
    },
  );

  test.each(PROTOTYPE_NAMES)(
    "%s as a key of a body, a batch item, a link item or a pivot: 422 naming it, nothing written",
    async (name) => {
      const field = JSON.stringify(name);
      const links = `/v2/forms/${s.form.id}/fields`;
      await refusedUnchanged(
        () => sendJson("POST", "/v2/ranks", `{"name":"Major",${field}:{"name":"Hacked"}}`),
        [name],
        "create",
      );
      await refusedUnchanged(
        () => sendJson("PATCH", `/v2/ranks/${s.private_.id}`, `{"name":"Renamed",${field}:1}`),
        [name],
        "update",
      );
      await refusedUnchanged(
        () => sendJson("POST", "/v2/ranks/batch", `{"resources":[{"name":"Major"},{"name":"Colonel",${field}:1}]}`),
        [`resources.1.${name}`],
        "batch create",
      );
      await refusedUnchanged(
        () =>
          sendJson(
            "PATCH",
            "/v2/ranks/batch",
            `{"resources":{"${s.private_.id}":{"name":"Renamed",${field}:{"name":"Hacked"}}}}`,
          ),
        [`resources.${s.private_.id}.${name}`],
        "batch update item",
      );
      await refusedUnchanged(
        () => sendJson("PATCH", `${links}/${s.field.id}/pivot`, `{"pivot":{"order":5,${field}:{"order":99}}}`),
        [`pivot.${name}`],
        "pivot",
      );
      await refusedUnchanged(
        () => sendJson("POST", `${links}/attach`, `{"resources":[{"id":${s.field2.id},"order":3,${field}:1}]}`),
        [`resources.0.${name}`],
        "link item",
      );
      await refusedUnchanged(
        () =>
          sendJson(
            "PATCH",
            `${links}/sync`,
            `{"resources":{"${s.field.id}":{"order":3,${field}:1}},"detaching":false}`,
          ),
        [`resources.${s.field.id}.${name}`],
        "keyed link item",
      );
      await refusedUnchanged(
        () => sendJson("PATCH", `${links}/batch`, `{"resources":{"${s.field.id}":{"pivot":{${field}:1}}}}`),
        [`resources.${s.field.id}.pivot.${name}`],
        "batch pivot",
      );
      await refusedUnchanged(
        () => sendJson("POST", `/v2/users/${s.user.id}/attachments/attach`, `{"resources":[1],${field}:1}`),
        [name],
        "link body",
      );
    },
  );

  test("a pivot object holds link columns, and what a read shows of the link row", async () => {
    const links = `/v2/forms/${s.form.id}/fields`;
    await refusedUnchanged(
      () => api.patch(`${links}/${s.field.id}/pivot`, { pivot: { colour: "red" } }),
      ["pivot.colour"],
      "an unknown key",
    );
    await refusedUnchanged(
      () => api.post(`${links}/attach`, { resources: { [s.field2.id]: { rank: 1 } } }),
      [`resources.${s.field2.id}.rank`],
      "an unknown key in an attach",
    );
    const echoed = await api.patch(`${links}/${s.field.id}/pivot`, {
      pivot: {
        id: 1,
        form_id: s.form.id,
        field_id: s.field.id,
        created_at: "2024-01-01",
        updated_at: "2024-01-01",
        order: 4,
      },
    });
    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200);
    const fields = (await api.get(`${links}?limit=100&include=fields`)).body.data as Array<{
      id: number;
      fields: { order: number };
    }>;
    expect(fields.find((f) => f.id === s.field.id)?.fields.order).toBe(4);
  });
});

describe("PATCH .../batch takes resources keyed by id", () => {
  test.each([
    ["a list of ids", (id: number) => [id]],
    ["a list of objects", (id: number) => [{ id, name: "Renamed" }]],
    ["an empty list", () => []],
    ["a single id", (id: number) => id],
  ])("resources as %s: 422 naming resources, nothing written", async (_what, resources) => {
    await refusedUnchanged(
      () => api.patch("/v2/ranks/batch", { resources: resources(s.private_.id) }),
      ["resources"],
      "top-level",
    );
    await refusedUnchanged(
      () => api.patch(`/v2/forms/${s.form.id}/fields/batch`, { resources: resources(s.field.id) }),
      ["resources"],
      "many-to-many",
    );
    await refusedUnchanged(
      () => api.patch(`/v2/users/${s.user.id}/rank/batch`, { resources: resources(s.private_.id) }),
      ["resources"],
      "to-one",
    );
  });

  test("POST .../batch takes a list, and says so for an object", async () => {
    await refusedUnchanged(
      () => api.post("/v2/ranks/batch", { resources: { 1: { name: "New" } } }),
      ["resources"],
      "batch create",
    );
  });
});

describe("body keys", () => {
  const form = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();
  const sendForm = async (method: string, url: string, text: string): Promise<Reply> =>
    client(h, key, { "content-type": "application/x-www-form-urlencoded" }).send(method, url, text);

  test("form-encoded keys named after Object.prototype: 422 naming each", async () => {
    await refusedUnchanged(
      () =>
        sendForm(
          "POST",
          "/v2/ranks",
          form({ name: "Sergeant", abbreviation: "SGT", hasOwnProperty: "1", toString: "2", valueOf: "3" }),
        ),
      ["hasOwnProperty", "toString", "valueOf"],
      "form body",
    );
    const plain = await sendForm("POST", "/v2/ranks", form({ name: "Sergeant", abbreviation: "SGT", colour: "green" }));
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.data).toMatchObject({ name: "Sergeant", abbreviation: "SGT" });
  });

  test.each(["toString[a]", "valueOf[]", "constructor[prototype][polluted]", "__proto__[polluted]"])(
    "form key %s: 422 naming it",
    async (name) => {
      await refusedUnchanged(
        () => sendForm("POST", "/v2/ranks", `name=Major&${encodeURIComponent(name)}=1`),
        [name],
        name,
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  test.each(PROTOTYPE_NAMES)(
    "a custom field keyed %s is refused: its key would be a body key of every submission",
    async (name) => {
      await refusedUnchanged(
        () => api.post(`/v2/forms/${s.form.id}/fields`, { name: "Reserved", key: name, type: "text" }),
        ["key"],
        "create",
      );
      await refusedUnchanged(
        () => api.patch(`/v2/forms/${s.form.id}/fields/${s.field.id}`, { key: name }),
        ["key"],
        "update",
      );
    },
  );

  test("custom values under a JSON __proto__ key are not the form's values", async () => {
    await refusedUnchanged(
      () =>
        sendJson(
          "POST",
          "/v2/submissions",
          `{"form_id":${s.form.id},"user_id":${s.user.id},"__proto__":{"callsign":"Viper"}}`,
        ),
      ["__proto__"],
      "submission",
    );
  });

  test.each(PROTOTYPE_NAMES)(
    "an announcement colour named %s is an unknown name: shown as the default blue",
    async (name) => {
      const reply = await api.post("/v2/announcements", { title: "Notice", content: "Text", color: name });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.data.color).toBe("#2563eb");
    },
  );
});

describe("a custom field's options are a list", () => {
  let formId: number;
  beforeAll(async () => {
    const made = await api.post("/v2/forms", { name: "Options", slug: "options", is_public: true });
    formId = made.body.data.id;
  });
  const stored = async (id: number) => (await h.db.prisma.field.findUniqueOrThrow({ where: { id } })).options;
  const shownEverywhere = async (id: number): Promise<unknown[]> => {
    const listed = (await api.get("/v2/fields?limit=100")).body.data.find((f: { id: number }) => f.id === id);
    const shown = (await api.get(`/v2/fields/${id}`)).body.data;
    const nested = (await api.get(`/v2/forms/${formId}/fields`)).body.data.find((f: { id: number }) => f.id === id);
    const included = (await api.get(`/v2/forms/${formId}?include=fields`)).body.data.fields.find(
      (f: { id: number }) => f.id === id,
    );
    const gql = await api.graphql(
      `query F($id: Int!, $form: Int!) { field(rowId: $id) { options { label value } } form(rowId: $form) { fields(first: 100) { nodes { rowId options { label value } } } } }`,
      { id, form: formId },
    );
    expect(gql.body.errors, JSON.stringify(gql.body.errors)).toBeUndefined();
    const gqlNested = gql.body.data.form.fields.nodes.find((f: { rowId: number }) => f.rowId === id);
    return [
      listed.options,
      shown.options,
      nested.options,
      included.options,
      gql.body.data.field.options,
      gqlNested.options,
    ];
  };
  const create = async (body: Record<string, unknown>) => {
    const reply = await api.post(`/v2/forms/${formId}/fields`, { name: "Pick", type: "select", ...body });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.data as { id: number; options: unknown };
  };

  test("a field created without options, or with null or {}, shows [] in REST, includes and GraphQL", async () => {
    for (const [key, options] of [
      ["none", undefined],
      ["nulled", null],
      ["empty_object", {}],
      ["empty_list", []],
    ] as const) {
      const made = await create({ key, ...(options === undefined ? {} : { options }) });
      expect(made.options, key).toEqual([]);
      expect(await shownEverywhere(made.id), key).toEqual([[], [], [], [], [], []]);
      if (options !== undefined && options !== null) expect(await stored(made.id), key).toEqual([]);
    }
  });

  test("an update to {} stores []; options stored as null or {} by an older write read as []", async () => {
    const made = await create({ key: "older", options: [{ label: "A", value: "a" }] });
    const updated = await api.patch(`/v2/forms/${formId}/fields/${made.id}`, { options: {} });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data.options).toEqual([]);
    expect(await stored(made.id)).toEqual([]);
    await h.db.prisma.field.update({ where: { id: made.id }, data: { options: {} } });
    expect(await shownEverywhere(made.id)).toEqual([[], [], [], [], [], []]);
  });

  test("stored options that are not empty are shown as stored; PERSCOM's keyed form is shown as the list of its entries", async () => {
    const list = [
      { label: "Alpha", value: "a" },
      { label: "Bravo", value: "b" },
    ];
    const made = await create({ key: "kept", options: list });
    expect(await shownEverywhere(made.id)).toEqual(Array(6).fill(list));
    const keyed = { a: "Alpha", b: "Bravo" };
    await h.db.prisma.field.update({ where: { id: made.id }, data: { options: keyed } });
    expect(await shownEverywhere(made.id)).toEqual(Array(6).fill(list));
    const sent = await create({ key: "keyed", options: keyed });
    expect(sent.options).toEqual(list);
    expect(await stored(sent.id)).toEqual(list);
  });

  test("options that are not a list of {label, value} (nor a keyed object of labels): 422 naming options, nothing written", async () => {
    await refusedUnchanged(
      () =>
        api.post(`/v2/forms/${formId}/fields`, {
          name: "Pick",
          key: "unlabelled",
          type: "select",
          options: [{ value: "a" }],
        }),
      ["options"],
      "unlabelled",
    );
    await refusedUnchanged(
      () =>
        api.post(`/v2/forms/${formId}/fields`, {
          name: "Pick",
          key: "nested",
          type: "select",
          options: { a: { b: 1 } },
        }),
      ["options"],
      "nested",
    );
    await refusedUnchanged(
      () => api.post(`/v2/forms/${formId}/fields`, { name: "Pick", key: "scalar", type: "select", options: "abc" }),
      ["options"],
      "string",
    );
    await refusedUnchanged(
      () => api.post(`/v2/forms/${formId}/fields`, { name: "Pick", key: "number", type: "select", options: 5 }),
      ["options"],
      "number",
    );
  });
});

test("field errors keyed by names every object has stay plain keys of the error body", () => {
  const bag = new FieldErrorBag();
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"])
    bag.add(name, `The ${name} field is invalid.`);
  let thrown: unknown;
  try {
    bag.throwIfAny();
  } catch (error) {
    thrown = error;
  }
  const body = JSON.parse(JSON.stringify((thrown as ApiError).fieldErrors)) as Record<string, string[]>;
  expect(Object.keys(body)).toEqual(["constructor", "__proto__", "toString", "hasOwnProperty"]);
  expect(Object.getOwnPropertyDescriptor(body, "__proto__")?.value).toEqual(["The __proto__ field is invalid."]);
  expect((thrown as ApiError).message).toBe("The constructor field is invalid. (and 3 more errors)");
});

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { buildOpenApi, printOpenApi } from "../src/openapi/document.ts";
import { operations, type Operation } from "../src/resources/operations.ts";
import { routes } from "../src/rest/routes.ts";
import { resources } from "../src/resources/index.ts";
import { patternOf } from "../src/openapi/schema.ts";
import { snake } from "../src/core/names.ts";
import { client, seed, startHarness, type Client, type Harness } from "./harness.ts";

/**
 * An object of the OpenAPI document as these tests walk it: the members they read, each typed as it is where it is
 * present (a test reads only the members its object has, or checks for them first).
 */
interface Json {
  $ref: string;
  type: string | string[];
  name: string;
  in: string;
  description: string;
  operationId: string;
  pattern: string;
  schema: Json;
  items: Json;
  properties: Record<string, Json>;
  anyOf: Json[];
  allOf: Json[];
  required: string[];
  parameters: Json[];
  responses: Record<string, Json>;
  requestBody: Json;
  content: Record<string, Json>;
  security: unknown;
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
  [member: string]: unknown;
}

const doc = buildOpenApi() as unknown as Json;
const resolve = (node: Json): Json => {
  if (typeof node.$ref !== "string") return node;
  const target = node.$ref
    .slice(2)
    .split("/")
    .reduce((at: Json, key) => at?.[key] as Json, doc);
  if (!target) throw new Error(`dangling reference ${node.$ref}`);
  return resolve(target);
};
const operationOf = (method: string, path: string): Json => doc.paths[`/{version}${path}`]?.[method.toLowerCase()];
const parametersOf = (op: Operation): Json[] => operationOf(op.method, op.path).parameters.map(resolve);

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema(doc, "muster-openapi");
const schemaAt = (ref: string) => ajv.getSchema(`muster-openapi${ref}`)!;

describe("OpenAPI document", () => {
  test("the committed schema/openapi.json is the generated one", () => {
    const committed = readFileSync(new URL("../schema/openapi.json", import.meta.url), "utf8");
    expect(committed === printOpenApi(), "schema/openapi.json is stale: run `npm run generate`").toBe(true);
  });

  test("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  test("every component schema is valid JSON Schema 2020-12 whose references resolve", () => {
    for (const name of Object.keys(doc.components.schemas))
      expect(() => schemaAt(`#/components/schemas/${name}`), name).not.toThrow();
  });

  test("every operation of the catalogue appears with its method, path, scopes and GraphQL field as operationId", () => {
    expect(operations.length).toBeGreaterThan(0);
    for (const op of operations) {
      const documented = operationOf(op.method, op.path);
      expect(documented, `${op.method} ${op.path}`).toBeDefined();
      const shared = operations.some(
        (o) => o !== op && o.field === op.field && operations.indexOf(o) < operations.indexOf(op),
      );
      expect(documented.operationId).toBe(
        shared ? `${op.kind}${op.field.charAt(0).toUpperCase()}${op.field.slice(1)}` : op.field,
      );
      expect(documented["x-operation-kind"]).toBe(op.kind);
      // A public form's routes need no credential (issue 43).
      expect(documented.security).toEqual(
        op.anonymous ? [] : [{ bearerAuth: op.scopes }, { apiKeyQuery: op.scopes }, { oauth2: op.scopes }],
      );
    }
  });

  test("every route the server answers is documented, and operation ids are unique", () => {
    for (const route of routes)
      expect(
        operationOf(route.method, `/${route.segments.join("/")}`),
        `${route.method} ${route.segments.join("/")}`,
      ).toBeDefined();
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("path parameters are integers (a public route's account and form: slugs); the version is v1 or v2, v2 by default", () => {
    for (const op of operations) {
      const path = parametersOf(op).filter((p) => p.in === "path");
      const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(path.map((p) => p.name)).toEqual(["version", ...names]);
      expect(path[0].schema).toEqual({ type: "string", enum: ["v1", "v2"], default: "v2" });
      for (const p of path.slice(1))
        expect(resolve(p.schema).type).toBe(op.textParams?.includes(p.name) ? "string" : "integer");
    }
  });

  test("every include value of each operation is in its include enum", () => {
    for (const op of operations) {
      const include = parametersOf(op).find((p) => p.name === "include");
      if (op.includes.length === 0) {
        expect(include, op.field).toBeUndefined();
        continue;
      }
      expect(include, op.field).toMatchObject({
        in: "query",
        style: "form",
        explode: false,
        schema: { type: "array" },
      });
      expect(include!.schema.items.enum, op.field).toEqual(expect.arrayContaining(op.includes));
    }
  });

  test("lists and searches take page and limit", () => {
    for (const op of operations.filter((o) => o.kind === "list" || o.kind === "search")) {
      expect(
        parametersOf(op).map((p) => p.name),
        op.field,
      ).toEqual(expect.arrayContaining(["page", "limit"]));
    }
  });

  test("every documented error response has the Error schema, and each operation documents the errors it can give", () => {
    const error = doc.components.schemas.Error;
    expect(error.properties.error.required).toEqual(["message", "type", "request_id", "trace_id"]);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, documented] of Object.entries(item)) {
        const where = `${method} ${path}`;
        const statuses = Object.keys(documented.responses).map(Number);
        for (const status of statuses.filter((s) => s >= 400)) {
          const response = resolve(documented.responses[status]);
          expect(response.description, where).toBeTruthy();
          expect(response.content["application/json"].schema, `${where} ${status}`).toEqual({
            $ref: "#/components/schemas/Error",
          });
        }
        const hasBody = documented.requestBody !== undefined;
        const hasInclude = documented.parameters.map(resolve).some((p) => p.name === "include");
        // A public form's routes need no credential, so refuse none (issue 43).
        const expected = path.startsWith("/{version}/public/")
          ? [400, 429, 500, 503]
          : [400, 401, 402, 403, 429, 500, 503];
        if (/\{(?!version)\w+\}/.test(path)) expected.push(404);
        if (hasBody) expected.push(413, 422);
        if (hasInclude) expected.push(422);
        expect(statuses, where).toEqual(expect.arrayContaining([200, ...expected]));
        expect(resolve(documented.responses[200]).content["application/json"].schema, where).toBeDefined();
      }
    }
  });

  test("request bodies follow the operation kind", () => {
    const bodyOf = (op: Operation) => operationOf(op.method, op.path).requestBody as Json | undefined;
    for (const op of operations) {
      const body = bodyOf(op);
      if (
        ["list", "show", "delete", "dissociate", "command", "feed", "publicShow"].includes(op.kind) ||
        (op.kind === "action" && !op.action!.input)
      ) {
        expect(body, op.field).toBeUndefined();
        continue;
      }
      const schema = resolve(body!.content["application/json"].schema);
      if (["batchCreate", "batchUpdate", "batchDelete", "attach", "detach", "sync", "toggle"].includes(op.kind)) {
        expect(schema.required, op.field).toEqual(["resources"]);
      }
      if (op.kind === "pivot") expect(schema.required).toEqual(["pivot"]);
      if (op.kind === "publicSubmit") {
        expect(Object.keys(schema.properties), op.field).toContain("captcha_token");
        expect(schema.additionalProperties, op.field).toBeDefined();
      }
      if (op.kind === "associate") expect(schema.required).toEqual(["related_key"]);
      // An input with no required attribute has no `required` (OpenAPI 3.0 wants it non-empty when present).
      if (op.kind === "action")
        expect(schema.required ?? [], op.field).toEqual(
          Object.entries(op.action!.input!)
            .filter(([, f]) => f.required)
            .map(([k]) => snake(k)),
        );
      if (op.kind === "attach") expect(schema.properties.duplicates.type).toBe("boolean");
      if (op.kind === "sync") expect(schema.properties.detaching.type).toBe("boolean");
      if ((op.kind === "create" || op.kind === "update") && Object.keys(op.def.uploads ?? {}).length) {
        expect(Object.keys(body!.content), op.field).toContain("multipart/form-data");
      }
    }
  });

  test("a create body lists the writable fields with their rules", () => {
    const create = operations.find((o) => o.kind === "create" && !o.parent && o.def.name === "user")!;
    const schema = resolve(operationOf(create.method, create.path).requestBody.content["application/json"].schema);
    expect(schema.required).toEqual(expect.arrayContaining(["name", "email"]));
    expect(schema.properties.name).toMatchObject({ type: "string", maxLength: 255 });
    expect(schema.properties.rank_id.type).toEqual(["integer", "null"]);
    expect(schema.properties.email.pattern).toBeTypeOf("string");
    expect(schema.properties).not.toHaveProperty("notes_updated_at");
    const valid = schemaAt(operationOf(create.method, create.path).requestBody.content["application/json"].schema.$ref);
    expect(valid({ name: "Ann", email: "ann@example.com", rank_id: null })).toBe(true);
    expect(valid({ name: "Ann", email: "not an email" })).toBe(false);
  });
});

describe("a document every renderer can expand", () => {
  const walk = (node: unknown, visit: (n: Json) => void): void => {
    if (Array.isArray(node)) for (const item of node) walk(item, visit);
    else if (node && typeof node === "object") {
      visit(node as Json);
      for (const value of Object.values(node)) walk(value, visit);
    }
  };
  const refsOf = (node: unknown) => {
    const names = new Set<string>();
    walk(node, (n) => {
      if (typeof n.$ref === "string" && n.$ref.startsWith("#/components/schemas/"))
        names.add(n.$ref.split("/").at(-1)!);
    });
    return names;
  };

  test("no component schema reaches itself through references, and none is an allOf", () => {
    const schemas = doc.components.schemas;
    const edges = new Map(Object.entries(schemas).map(([name, schema]) => [name, [...refsOf(schema)]]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (name: string, path: string[]) => {
      if (state.get(name) === "done") return;
      if (state.get(name) === "open") {
        cycles.push([...path.slice(path.indexOf(name)), name].join(" → "));
        return;
      }
      state.set(name, "open");
      for (const next of edges.get(name) ?? []) visit(next, [...path, name]);
      state.set(name, "done");
    };
    for (const name of edges.keys()) visit(name, []);
    expect(cycles.slice(0, 3)).toEqual([]);
    const allOf: string[] = [];
    walk(doc, (n) => {
      if (n.allOf) allOf.push(JSON.stringify(n).slice(0, 80));
    });
    expect(allOf).toEqual([]);
  });

  /** The schema of a property of a row, through `nullable`'s `anyOf` and an array's items. */
  const propertyOf = (row: Json, name: string): Json => {
    let schema = resolve(row.properties[name]);
    if (schema.anyOf) schema = resolve(schema.anyOf.find((s) => s.type !== "null")!);
    return schema.type === "array" ? resolve(schema.items) : schema;
  };
  const rowOf = (method: string, path: string) => {
    const data = resolve(resolve(operationOf(method, path).responses[200]).content["application/json"].schema)
      .properties.data;
    return resolve(data.type === "array" ? data.items : data);
  };

  test("a row documents the relations its include list embeds, to the depth the list reaches, and no others", () => {
    const user = rowOf("GET", "/users/{user}");
    // rank.* embeds the rank's image; award_records.award.* the award's image under each award record.
    expect(Object.keys(propertyOf(propertyOf(user, "rank"), "image").properties)).toContain("path");
    expect(propertyOf(propertyOf(propertyOf(user, "award_records"), "award"), "image").properties).toHaveProperty(
      "path",
    );
    // rank_records.* embeds the relations of a rank record one level down, not theirs.
    const rankRecord = propertyOf(user, "rank_records");
    expect(rankRecord.properties).toHaveProperty("rank");
    expect(propertyOf(rankRecord, "rank").properties).not.toHaveProperty("image");
    // The plain component of a resource holds its columns only.
    expect(doc.components.schemas.Rank.properties).not.toHaveProperty("image");
    expect(doc.components.schemas.User.properties).not.toHaveProperty("rank");
    // A nested route's rows do not embed what its include list leaves out (the parent user).
    expect(rowOf("GET", "/users/{user}/rank-records").properties).not.toHaveProperty("user");
    expect(rowOf("GET", "/rank-records").properties).toHaveProperty("user");
    // Link rows carry their link columns beside the related row's own columns.
    const linked = rowOf("GET", "/categories/{category}/ranks");
    expect(linked.properties.pivot).toBeDefined();
    expect(linked.required).toEqual(expect.arrayContaining(["id", "name", "pivot"]));
  });

  test("the OAuth scheme: the provider's token endpoint, and every scope an access token may ask for, in words", () => {
    const printed = JSON.parse(printOpenApi()) as Json;
    const { authorizationCode } = (
      printed.components.securitySchemes.oauth2 as unknown as {
        flows: { authorizationCode: { tokenUrl: string; scopes: Record<string, string> } };
      }
    ).flows;
    expect(authorizationCode.tokenUrl).toBe("/oauth/token");
    expect(authorizationCode.scopes["view:rankrecord"]).toBe("View rank records");
    expect(authorizationCode.scopes["delete:oauthclient"]).toBe("Delete oauth clients");
    for (const op of operations)
      for (const scope of op.scopes) expect(authorizationCode.scopes).toHaveProperty([scope]);
  });

  test("the Bearer scheme comes first; the apikey query parameter is listed after it, marked as discouraged", () => {
    const printed = JSON.parse(printOpenApi()) as Json;
    expect(Object.keys(printed.components.securitySchemes)).toEqual([
      "bearerAuth",
      "apiKeyQuery",
      "oauth2",
      "openIdConnect",
    ]);
    expect(printed.security).toEqual([{ bearerAuth: [] }, { apiKeyQuery: [] }, { oauth2: [] }]);
    expect(printed.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(printed.components.securitySchemes.apiKeyQuery).toMatchObject({
      type: "apiKey",
      in: "query",
      name: "apikey",
    });
    expect(printed.components.securitySchemes.apiKeyQuery.description).toMatch(/discouraged.*logs/i);
  });
});

describe("patterns", () => {
  test("every field pattern, written without flags, accepts what the registry's expression accepts", () => {
    const samples = [
      "abc",
      "ABC",
      "aBc-9",
      "a_b",
      "a__b",
      "A-b_C",
      "",
      " a",
      "a b",
      "ann@example.com",
      "Ann@Example.COM",
      "x@y",
      "-a",
      "#ff00AA",
      "12",
    ];
    const patterns = resources.flatMap((r) => Object.values(r.fields)).flatMap((f) => (f.pattern ? [f.pattern] : []));
    expect(patterns.length).toBeGreaterThan(0);
    for (const re of patterns) {
      const written = new RegExp(patternOf(re), "u");
      for (const sample of samples) expect(written.test(sample), `${re} on "${sample}"`).toBe(re.test(sample));
    }
    expect(patternOf(/^[a-z]+(?:[-_][a-z0-9]+)*x$/i)).toBe("^[a-zA-Z]+(?:[-_][a-z0-9A-Z]+)*[xX]$");
    expect(patternOf(/^\d+\s[a-f]$/i)).toBe("^\\d+\\s[a-fA-F]$");
  });
});

describe("GET /openapi.json", () => {
  let h: Harness;
  let api: Client;
  let ids: Awaited<ReturnType<typeof seed>>;
  beforeAll(async () => {
    h = await startHarness();
    api = client(h, await h.key());
    ids = await seed(api);
  });
  afterAll(() => h.close());

  // Cross-origin reads of the document follow the API's CORS rule (issue 42, item 7; test/cors.test.ts): an origin no
  // client registered and CORS_ORIGINS does not list gets no CORS header (it was `*` for this document).
  test("answers the document without an API key; CORS as on every route", async () => {
    const response = await h.app.yoga.fetch("http://muster.test/openapi.json", {
      headers: { origin: "https://docs.example" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.has("access-control-allow-origin")).toBe(false);
    expect(await response.json()).toEqual(JSON.parse(printOpenApi()));
    const listed = await startHarness({ corsOrigins: ["https://docs.example"] });
    try {
      const answer = await listed.app.yoga.fetch("http://muster.test/openapi.json", {
        headers: { origin: "https://docs.example" },
      });
      expect(answer.headers.get("access-control-allow-origin")).toBe("https://docs.example");
    } finally {
      await listed.close();
    }
  });

  test("other methods answer 405 with the error body", async () => {
    const response = await h.app.yoga.fetch("http://muster.test/openapi.json", { method: "POST" });
    expect(response.status).toBe(405);
    expect((await response.json()).error.type).toBe("MethodNotAllowedHttpException");
  });

  /** Checks a live response against the schema the document gives for it. */
  const conforms = (method: string, path: string, status: number, body: unknown) => {
    const documented = operationOf(method, path);
    expect(documented, `${method} ${path}`).toBeDefined();
    const validate = schemaAt(`${documented.responses[status].$ref}/content/application~1json/schema`);
    const ok = validate(body);
    expect(validate.errors ?? [], `${method} ${path} ${status}`).toEqual([]);
    expect(ok).toBe(true);
  };

  /** Checks a request body against the documented request schema. */
  const accepted = (method: string, path: string, body: unknown) => {
    expect(operationOf(method, path)?.requestBody, `${method} ${path}`).toBeDefined();
    const pointer = [
      "paths",
      `/{version}${path}`,
      method.toLowerCase(),
      "requestBody",
      "content",
      "application/json",
      "schema",
    ];
    const validate = schemaAt(`#/${pointer.map((k) => k.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`);
    const ok = validate(body);
    expect(validate.errors ?? [], `${method} ${path} request`).toEqual([]);
    expect(ok).toBe(true);
  };

  test("live searches and batches match their documented schemas", async () => {
    const query = {
      filters: [{ field: "name", operator: "like", value: "%o%" }],
      sort: [{ field: "name", direction: "desc" }],
      includes: [{ relation: "image" }],
    };
    accepted("POST", "/ranks/search", query);
    const found = await api.post("/v2/ranks/search", query);
    expect(found.status).toBe(200);
    conforms("POST", "/ranks/search", 200, found.body);
    const batch = { resources: [{ name: "Sergeant", abbreviation: "SGT" }, { name: "Captain" }] };
    accepted("POST", "/ranks/batch", batch);
    const created = await api.post("/v2/ranks/batch", batch);
    expect(created.status).toBe(200);
    conforms("POST", "/ranks/batch", 200, created.body);
    const changes = { resources: { [created.body.data[0].id]: { name: "Staff Sergeant" } } };
    accepted("PATCH", "/ranks/batch", changes);
    const updated = await api.patch("/v2/ranks/batch", changes);
    expect(updated.status).toBe(200);
    conforms("PATCH", "/ranks/batch", 200, updated.body);
  });

  test("live responses match their documented schemas", async () => {
    const list = await api.get("/v2/users?include=rank,status,rank_records");
    expect(list.status).toBe(200);
    conforms("GET", "/users", 200, list.body);
    const user = await api.get(`/v2/users/${ids.user.id}?include=rank.image,unit`);
    conforms("GET", "/users/{user}", 200, user.body);
    const promotion = { rank_id: ids.corporal.id, type: 0, text: "Promoted" };
    accepted("POST", "/users/{user}/rank-records", promotion);
    const record = await api.post(`/v2/users/${ids.user.id}/rank-records`, promotion);
    expect(record.status).toBe(200);
    conforms("POST", "/users/{user}/rank-records", 200, record.body);
    const fields = await api.get(`/v2/forms/${ids.form.id}/fields`);
    conforms("GET", "/forms/{form}/fields", 200, fields.body);
    accepted("POST", "/users/{user}/status-records/attach", { resources: [ids.pending.id] });
    const attached = await api.post(`/v2/users/${ids.user.id}/status-records/attach`, { resources: [ids.pending.id] });
    expect(attached.status).toBe(200);
    conforms("POST", "/users/{user}/status-records/attach", 200, attached.body);
    const statuses = await api.get(`/v2/users/${ids.user.id}/status-records?include=record`);
    conforms("GET", "/users/{user}/status-records", 200, statuses.body);
  });

  test("live errors match the Error schema", async () => {
    const invalid = await api.post("/v2/ranks", { abbreviation: "X" });
    expect(invalid.status).toBe(422);
    conforms("POST", "/ranks", 422, invalid.body);
    const missing = await api.get("/v2/ranks/999999");
    expect(missing.status).toBe(404);
    conforms("GET", "/ranks/{rank}", 404, missing.body);
    const anonymous = await client(h, null).get("/v2/ranks");
    expect(anonymous.status).toBe(401);
    conforms("GET", "/ranks", 401, anonymous.body);
  });
});

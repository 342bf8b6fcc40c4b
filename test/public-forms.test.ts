/**
 * Public forms (issue 43, points 2 and 3): `GET /{version}/public/{account}/forms/{form}` and its submissions route,
 * GraphQL `publicForm` and `submitPublicForm`, with no Authorization header at all. A form that is not public, does not
 * exist or is another account's, and an account slug that names none, are the same 404. Submissions are checked field
 * by field (type, options, required, rules), get the form's default status and no user, emit `submission.created`,
 * and pass the captcha (a local siteverify verifier), the per-address and per-form rate limits and the body caps; a
 * refused one stores nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";

const BODY_MAX_BYTES = 64 * 1024;
const path = (account: string, form: string | number) => `/v2/public/${account}/forms/${form}`;

/** A visitor from `address` (TRUST_PROXY is on): no Authorization header. */
const visitor = (h: Harness, address: string) => client(h, null, { "x-forwarded-for": address });
let nextAddress = 1;
const freshVisitor = (h: Harness) => visitor(h, `198.51.100.${nextAddress++}`);

const ok = (r: Reply, what = "request") => {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

interface Setup {
  admin: Client;
  statusId: number;
  formId: number;
  privateFormId: number;
  bravoFormId: number;
}

/** Account alpha's public form `enlist` with a field of each kind, a private form, and bravo's public form. */
async function setUp(h: Harness): Promise<Setup> {
  const admin = client(h, await h.key("alpha"));
  const bravo = client(h, await h.key("bravo"));
  const statusId = ok(await admin.post("/v2/statuses", { name: "Pending", color: "#ffaa00" })).data.id;
  const form = ok(
    await admin.post("/v2/forms", {
      name: "Enlistment",
      slug: "enlist",
      is_public: true,
      submission_status_id: statusId,
      success_message: "Thank you.",
    }),
  ).data;
  const fields: Array<Record<string, unknown>> = [
    { name: "Name", key: "name", type: "text", required: true },
    { name: "Email", key: "email", type: "email", required: true },
    { name: "Age", key: "age", type: "number", rules: "integer|between:17,60" },
    { name: "Bio", key: "bio", type: "textarea", rules: "nullable|max:20" },
    {
      name: "Branch",
      key: "branch",
      type: "select",
      options: [
        { label: "Army", value: "army" },
        { label: "Navy", value: "navy" },
      ],
    },
    { name: "Agree", key: "agree", type: "boolean", required: true },
    { name: "Born", key: "born", type: "date" },
    { name: "Site", key: "site", type: "text", rules: "url" },
    { name: "Callsign", key: "callsign", type: "text", rules: "min:5|in:alpha,bravo,charlie" },
    { name: "Code", key: "code", type: "text", readonly: true, default: "X1" },
    { name: "Secret", key: "secret", type: "text", hidden: true },
    { name: "Count", key: "count", type: "text", rules: "numeric|min:2" },
  ];
  for (const f of fields) ok(await admin.post(`/v2/forms/${form.id}/fields`, f), `field ${String(f.key)}`);
  const privateFormId = ok(await admin.post("/v2/forms", { name: "Internal", slug: "internal", is_public: false })).data
    .id;
  const bravoFormId = ok(await bravo.post("/v2/forms", { name: "Bravo's", slug: "bravo-form", is_public: true })).data
    .id;
  return { admin, statusId, formId: form.id, privateFormId, bravoFormId };
}

const valid = { name: "Jane Doe", email: "jane@example.org", agree: true };
const submissions = (h: Harness, formId: number) => h.db.prisma.submission.count({ where: { formId } });

describe("public forms", () => {
  let h: Harness;
  let s: Setup;
  beforeAll(async () => {
    h = await startHarness({
      trustProxy: true,
      bodyMaxBytes: BODY_MAX_BYTES,
      publicSubmissionsPerAddress: 1000,
      publicSubmissionsPerForm: 1000,
    });
    s = await setUp(h);
  });
  afterAll(() => h.close());

  test("a public form reads by slug and by id, with its visible fields only, without any credential", async () => {
    const anonymous = freshVisitor(h);
    const bySlug = ok(await anonymous.get(path("alpha", "enlist"))).data;
    expect(ok(await anonymous.get(path("alpha", s.formId))).data).toEqual(bySlug);
    expect(Object.keys(bySlug).sort()).toEqual(
      ["description", "fields", "id", "instructions", "name", "slug", "success_message"].sort(),
    );
    expect(bySlug).toMatchObject({ id: s.formId, name: "Enlistment", slug: "enlist", success_message: "Thank you." });
    const keys = bySlug.fields.map((f: { key: string }) => f.key);
    expect(keys).toEqual([
      "name",
      "email",
      "age",
      "bio",
      "branch",
      "agree",
      "born",
      "site",
      "callsign",
      "code",
      "count",
    ]);
    expect(bySlug.fields.find((f: { key: string }) => f.key === "branch")).toMatchObject({
      type: "select",
      required: false,
      options: [
        { label: "Army", value: "army" },
        { label: "Navy", value: "navy" },
      ],
    });
    // Any key reads it alike, another account's included.
    const bravo = client(h, await h.key("bravo", "view:rank"));
    expect(ok(await bravo.get(path("alpha", "enlist"))).data).toEqual(bySlug);
  });

  test("a private form, a missing form, a missing account and another account's form are the same 404", async () => {
    const anonymous = freshVisitor(h);
    const replies = await Promise.all([
      anonymous.get(path("alpha", "internal")),
      anonymous.get(path("alpha", s.privateFormId)),
      anonymous.get(path("alpha", "nope")),
      anonymous.get(path("alpha", 999999)),
      anonymous.get(path("nobody", "enlist")),
      anonymous.get(path("alpha", s.bravoFormId)),
      anonymous.get(path("alpha", "bravo-form")),
      anonymous.post(`${path("alpha", "internal")}/submissions`, valid),
      anonymous.post(`${path("bravo", s.formId)}/submissions`, valid),
    ]);
    for (const r of replies) {
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({
        type: "NotFoundHttpException",
        message: "The requested resource or endpoint could not be found.",
      });
    }
    expect(ok(await anonymous.get(path("bravo", "bravo-form"))).data.id).toBe(s.bravoFormId);
    expect(await submissions(h, s.privateFormId)).toBe(0);
  });

  test("a submission gets the form's default status, no user, the submitter's name and email, and its event", async () => {
    const before = await submissions(h, s.formId);
    const reply = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, {
      ...valid,
      age: "30",
      branch: "navy",
      born: "2000-02-29",
      site: "https://example.org/me",
      callsign: "bravo",
      count: "7",
    });
    const data = ok(reply, "submit").data;
    expect(data).toMatchObject({ form_id: s.formId, success_message: "Thank you." });
    expect(await submissions(h, s.formId)).toBe(before + 1);
    const row = await h.db.prisma.submission.findUniqueOrThrow({
      where: { id: data.id },
      include: { statusRecords: true },
    });
    expect(row.userId).toBeNull();
    expect(row.data).toEqual({
      name: "Jane Doe",
      email: "jane@example.org",
      agree: true,
      age: 30,
      branch: "navy",
      born: "2000-02-29",
      site: "https://example.org/me",
      callsign: "bravo",
      count: "7",
      code: "X1",
    });
    expect(row.statusRecords.map((r) => r.statusId)).toEqual([s.statusId]);
    const feed = ok(await s.admin.get("/v2/changes?limit=100")).data as Array<{ event: string; record_id: number }>;
    expect(feed.some((e) => e.event === "submission.created" && e.record_id === data.id)).toBe(true);
    const shown = ok(await s.admin.get(`/v2/submissions/${data.id}`)).data;
    expect(shown).toMatchObject({ form_id: s.formId, user_id: null, name: "Jane Doe", email: "jane@example.org" });
  });

  test("each field's type, options, required and rules are checked, every problem at once, and nothing is stored", async () => {
    const before = await submissions(h, s.formId);
    const reply = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, {
      email: "not-an-email",
      age: "30.5",
      bio: "x".repeat(21),
      branch: "air force",
      agree: "maybe",
      born: "2001-02-29",
      site: "ftp://example.org",
      callsign: "zulu",
      count: "1",
    });
    expect(reply.status).toBe(422);
    expect(reply.body.error.type).toBe("ValidationException");
    expect(reply.body.error.errors).toEqual({
      name: ["The Name field is required."],
      email: ["The Email field must be a valid email address."],
      age: ["The Age field must be an integer."],
      bio: ["The Bio field must not be greater than 20 characters."],
      branch: ["The selected Branch is invalid."],
      agree: ["The Agree field must be true or false."],
      born: ["The Born field must be a valid date (YYYY-MM-DD)."],
      site: ["The Site field must be a valid URL."],
      callsign: ["The Callsign field must be at least 5 characters.", "The selected Callsign is invalid."],
      count: ["The Count field must be at least 2."],
    });
    const between = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, { ...valid, age: 12 });
    expect(between.body.error.errors).toEqual({ age: ["The Age field must be between 17 and 60."] });
    const typed = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, { ...valid, name: 5, age: "x" });
    expect(typed.body.error.errors).toEqual({
      name: ["The Name field must be a string."],
      age: ["The Age field must be a number."],
    });
    expect(await submissions(h, s.formId)).toBe(before);
  });

  test("unknown keys, hidden fields and read-only fields are refused by name", async () => {
    const before = await submissions(h, s.formId);
    const reply = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, {
      ...valid,
      rank_id: 1,
      user_id: 3,
      secret: "x",
      code: "Z9",
    });
    expect(reply.status).toBe(422);
    expect(reply.body.error.errors).toEqual({
      rank_id: ["The form has no field rank_id."],
      user_id: ["The form has no field user_id."],
      secret: ["The form has no field secret."],
      code: ["The Code field cannot be set on this form."],
    });
    expect(await submissions(h, s.formId)).toBe(before);
  });

  test("a field whose rules name a rule the server cannot apply is refused (422 on rules)", async () => {
    for (const rules of ["required|regex:/^a+$/", "sometimes", "max", "between:1", "min:x"]) {
      const reply = await s.admin.post(`/v2/forms/${s.formId}/fields`, {
        name: "Bad",
        key: "bad",
        type: "text",
        rules,
      });
      expect(reply.status, rules).toBe(422);
      expect(Object.keys(reply.body.error.errors), rules).toEqual(["rules"]);
    }
    expect(await h.db.prisma.field.count({ where: { key: "bad" } })).toBe(0);
  });

  test("a body over the cap is a 413 and stores nothing", async () => {
    const before = await submissions(h, s.formId);
    const reply = await freshVisitor(h).post(`${path("alpha", "enlist")}/submissions`, {
      ...valid,
      bio: "x".repeat(BODY_MAX_BYTES + 1024),
    });
    expect(reply.status).toBe(413);
    expect(await submissions(h, s.formId)).toBe(before);
  });

  test("GraphQL: publicForm and submitPublicForm without any credential", async () => {
    const anonymous = freshVisitor(h);
    const read = await anonymous.graphql(
      `query($a: String!, $f: String!) { publicForm(account: $a, form: $f) { id slug successMessage fields { key type options } } }`,
      { a: "alpha", f: "enlist" },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.publicForm).toMatchObject({ id: s.formId, slug: "enlist", successMessage: "Thank you." });
    expect(read.body.data.publicForm.fields.map((f: { key: string }) => f.key)).not.toContain("secret");
    const missing = await anonymous.graphql(`{ publicForm(account: "alpha", form: "internal") { id } }`);
    expect(missing.body).toMatchObject({ data: { publicForm: null } });

    const submit = `mutation($v: JSON!) { submitPublicForm(account: "alpha", form: "enlist", values: $v) { submission { id formId successMessage } } }`;
    const before = await submissions(h, s.formId);
    const made = await anonymous.graphql(submit, { v: valid });
    expect(made.body.errors).toBeUndefined();
    const id = made.body.data.submitPublicForm.submission.id;
    expect(made.body.data.submitPublicForm.submission).toMatchObject({
      formId: s.formId,
      successMessage: "Thank you.",
    });
    expect((await h.db.prisma.submission.findUniqueOrThrow({ where: { id } })).userId).toBeNull();

    const refused = await anonymous.graphql(submit, { v: { email: "x", color: "red" } });
    expect(refused.body.data.submitPublicForm).toBeNull();
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: "VALIDATION",
      errors: {
        "values.name": ["The Name field is required."],
        "values.email": ["The Email field must be a valid email address."],
        "values.agree": ["The Agree field is required."],
        "values.color": ["The form has no field color."],
      },
    });
    const gone = await anonymous.graphql(
      `mutation { submitPublicForm(account: "alpha", form: "internal", values: {}) { submission { id } } }`,
    );
    expect(gone.body.errors[0].extensions.code).toBe("NOT_FOUND");
    expect(await submissions(h, s.formId)).toBe(before + 1);
    // Every other root field still needs a key.
    const other = await anonymous.graphql(
      `{ publicForm(account: "alpha", form: "enlist") { id } ranks { totalCount } }`,
    );
    expect(other.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });
});

/** A siteverify endpoint: `good` passes, `slow` is never answered in time, anything else fails. */
async function startVerifier(): Promise<{ url: string; seen: URLSearchParams[]; close(): Promise<void> }> {
  const seen: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const form = new URLSearchParams(body);
      seen.push(form);
      const token = form.get("response");
      if (token === "slow") return; // left hanging: the server gives up at CAPTCHA_TIMEOUT_MS
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(token === "good" ? { success: true } : { success: false, "error-codes": ["invalid"] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("public forms behind a captcha", () => {
  let h: Harness;
  let down: Harness;
  let s: Setup;
  let verifier: Awaited<ReturnType<typeof startVerifier>>;
  beforeAll(async () => {
    verifier = await startVerifier();
    const limits = { trustProxy: true, publicSubmissionsPerAddress: 1000, publicSubmissionsPerForm: 1000 };
    h = await startHarness({
      ...limits,
      captcha: { verifyUrl: verifier.url, secret: "s3cret" },
      captchaTimeoutMs: 300,
    });
    s = await setUp(h);
    // A verifier that is not there: nothing listens on port 9 of the loopback.
    down = await startHarness({ ...limits, captcha: { verifyUrl: "http://127.0.0.1:9/siteverify", secret: "s3cret" } });
    await setUp(down);
  });
  afterAll(async () => {
    await h.close();
    await down.close();
    await verifier.close();
  });

  const submit = (target: Harness, body: Record<string, unknown>) =>
    visitor(target, "203.0.113.7").post(`${path("alpha", "enlist")}/submissions`, { ...valid, ...body });

  test("a passed captcha stores the submission; the verifier is asked with the secret, the token and the address", async () => {
    const before = await submissions(h, s.formId);
    ok(await submit(h, { captcha_token: "good" }), "captcha_token");
    ok(await submit(h, { "cf-turnstile-response": "good" }), "turnstile");
    ok(await submit(h, { "h-captcha-response": "good" }), "hcaptcha");
    ok(await submit(h, { "g-recaptcha-response": "good" }), "recaptcha");
    expect(await submissions(h, s.formId)).toBe(before + 4);
    const asked = verifier.seen.at(-1)!;
    expect(Object.fromEntries(asked)).toEqual({ secret: "s3cret", response: "good", remoteip: "203.0.113.7" });
    const graph = await visitor(h, "203.0.113.8").graphql(
      `mutation($v: JSON!, $t: String) { submitPublicForm(account: "alpha", form: "enlist", values: $v, captchaToken: $t) { submission { id } } }`,
      { v: valid, t: "good" },
    );
    expect(graph.body.errors).toBeUndefined();
  });

  test("a missing or refused token is a 422 on captcha_token, and nothing is stored", async () => {
    const before = await submissions(h, s.formId);
    const missing = await submit(h, {});
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.error.errors)).toEqual(["captcha_token"]);
    const refused = await submit(h, { captcha_token: "bad" });
    expect(refused.status).toBe(422);
    expect(refused.body.error.errors.captcha_token).toEqual([
      "The captcha was not passed: complete it again and submit again.",
    ]);
    const graph = await visitor(h, "203.0.113.8").graphql(
      `mutation($v: JSON!) { submitPublicForm(account: "alpha", form: "enlist", values: $v, captchaToken: "bad") { submission { id } } }`,
      { v: valid },
    );
    expect(graph.body.errors[0].extensions).toMatchObject({
      code: "VALIDATION",
      errors: { captchaToken: [expect.any(String)] },
    });
    expect(await submissions(h, s.formId)).toBe(before);
  });

  test("a verifier that times out or cannot be reached is a 503, and nothing is stored", async () => {
    const before = await submissions(h, s.formId);
    const slow = await submit(h, { captcha_token: "slow" });
    expect(slow.status).toBe(503);
    expect(JSON.stringify(slow.body)).not.toContain("s3cret");
    expect(await submissions(h, s.formId)).toBe(before);
    const formId = (await down.db.prisma.form.findFirstOrThrow({ where: { slug: "enlist" } })).id;
    const unreachable = await submit(down, { captcha_token: "good" });
    expect(unreachable.status).toBe(503);
    expect(unreachable.body.error.message).toMatch(/captcha could not be verified/);
    expect(await submissions(down, formId)).toBe(0);
  });
});

describe("public form rate limits", () => {
  let h: Harness;
  let s: Setup;
  beforeAll(async () => {
    h = await startHarness({ trustProxy: true, publicSubmissionsPerAddress: 2, publicSubmissionsPerForm: 3 });
    s = await setUp(h);
  });
  afterAll(() => h.close());

  test("per client address, then per form: 429 with Retry-After, nothing stored", async () => {
    const url = `${path("alpha", "enlist")}/submissions`;
    const one = visitor(h, "192.0.2.1");
    ok(await one.post(url, valid));
    ok(await one.post(url, valid));
    const third = await one.post(url, valid);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await submissions(h, s.formId)).toBe(2);
    ok(await visitor(h, "192.0.2.2").post(url, valid));
    const formFull = await visitor(h, "192.0.2.3").post(url, valid);
    expect(formFull.status).toBe(429);
    expect(formFull.body.error.type).toBe("ThrottleRequestsException");
    expect(Number(formFull.headers.get("retry-after"))).toBeGreaterThan(0);
    const graph = await visitor(h, "192.0.2.4").graphql(
      `mutation($v: JSON!) { submitPublicForm(account: "alpha", form: "enlist", values: $v) { submission { id } } }`,
      { v: valid },
    );
    expect(graph.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    expect(await submissions(h, s.formId)).toBe(3);
  });
});

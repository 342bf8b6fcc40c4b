import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { launchChromium } from "./support/chromium.ts";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signInWithPassword } from "../src/auth/passwords.ts";
import { createSignInLink } from "../src/auth/sign-in-links.ts";
import { createApp, type App } from "../src/server/app.ts";
import { client, startHarness, type Client, type Harness, type Reply } from "./harness.ts";
import { cliArgs } from "./support/built.ts";

/*
 * Passwords, invitations and resets (issue 42, item 3): set through REST, GraphQL and the CLI, then checked with
 * `signInWithPassword`; one-time links used through their page as a browser posts its form; resets by email through
 * a real SMTP server (smtp-server, on a free port) that the test reads the emails from.
 */

const run = promisify(execFile);
const artifacts = path.resolve("test-artifacts");

interface Mail {
  to: string[];
  text: string;
}

/** A local SMTP server keeping every message it receives, its body decoded from quoted-printable. */
async function startSmtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const text = raw
          .replace(/=\r?\n/g, "")
          .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { mails, url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Waits until `ready()` holds (the mail arrives after the page is answered); fails after a generous while. */
async function eventually<T>(ready: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = ready();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** A log destination keeping every line as written. */
function captureLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

let h: Harness;
let app: App;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let log: ReturnType<typeof captureLog>;
let admin: Client;
let accountId: number;
/** Every password a test chose: none may show in an answer, an event or a log line. */
const chosen: string[] = [];
/** Every answer body the tests read. */
const answers: string[] = [];

const pick = (label: string) => {
  const password = `${label}-${Math.random().toString(36).slice(2, 10)}-pw`;
  chosen.push(password);
  return password;
};

/** A page of the app, as a browser asks for it (or posts its form, from this origin). */
async function page(url: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
  const init: RequestInit = form
    ? {
        method: "POST",
        body: new URLSearchParams(form).toString(),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: "http://muster.test",
          "sec-fetch-site": "same-origin",
          ...headers,
        },
      }
    : { headers };
  const response = await app.yoga.fetch(`http://muster.test${url}`, init);
  const html = await response.text();
  answers.push(html);
  return { status: response.status, html, headers: response.headers };
}

/** The hidden fields of the set-password form on `html`. */
function hiddenFields(html: string): { token: string; form_token: string } {
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  return { token: value("token")!, form_token: value("form_token")! };
}

async function newPerson(name: string) {
  const email = `${name.toLowerCase()}@example.org`;
  const r = await admin.post("/v2/users", { name, email });
  expect(r.status).toBe(200);
  return { id: r.body.data.id as number, email };
}

/** A client of `app` with `key` whose every answer is kept, to look for passwords in. */
function api(key: string): Client {
  const c = client({ ...h, app }, key);
  const kept = async (reply: Promise<Reply>) => {
    const r = await reply;
    answers.push(JSON.stringify(r.body));
    return r;
  };
  return {
    ...c,
    get: (url) => kept(c.get(url)),
    post: (url, body) => kept(c.post(url, body)),
    patch: (url, body) => kept(c.patch(url, body)),
    put: (url, body) => kept(c.put(url, body)),
    delete: (url, body) => kept(c.delete(url, body)),
    graphql: (query, variables) => kept(c.graphql(query, variables)),
  };
}

const signsIn = (email: string, password: string) => signInWithPassword(h.db, accountId, email, password);
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

beforeAll(async () => {
  h = await startHarness();
  smtp = await startSmtp();
  log = captureLog();
  app = createApp({
    db: h.db,
    config: { ...h.config, smtpUrl: smtp.url, mailFrom: "Muster <muster@example.org>", logLevel: "debug" },
    logStream: log.stream,
  });
  admin = api(await h.key("alpha"));
  accountId = (await h.db.prisma.account.findUniqueOrThrow({ where: { name: "alpha" } })).id;
});

afterAll(async () => {
  await app.events.close();
  await h.close();
  await smtp.close();
});

describe("setting a password through the API", () => {
  test("REST POST /users/{user}/password sets it; the answer is the user, without it; the old one stops working", async () => {
    const person = await newPerson("Rest");
    const first = pick("rest1");
    const r = await admin.post(`/v2/users/${person.id}/password`, { password: first });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: person.id, email: person.email });
    expect(Object.keys(r.body.data).filter((k) => /password|hash/i.test(k))).toEqual([]);
    expect(await signsIn(person.email, first)).toBe(person.id);

    const second = pick("rest2");
    expect((await admin.post(`/v2/users/${person.id}/password`, { password: second })).status).toBe(200);
    expect(await signsIn(person.email, second)).toBe(person.id);
    expect(await signsIn(person.email, first)).toBeNull();
    const stored = await h.db.prisma.password.findUniqueOrThrow({ where: { userId: person.id } });
    expect(stored.hash).toMatch(/^scrypt\$/);
    expect(stored.hash).not.toContain(second);
  });

  test("GraphQL setUserPassword sets it and answers the user", async () => {
    const person = await newPerson("Graph");
    const password = pick("graph");
    const r = await admin.graphql(
      "mutation($id: Int!, $pw: String) { setUserPassword(rowId: $id, input: { password: $pw }) { user { rowId email } } }",
      { id: person.id, pw: password },
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.setUserPassword.user).toEqual({ rowId: person.id, email: person.email });
    expect(await signsIn(person.email, password)).toBe(person.id);
  });

  test("a short, missing or non-string password is a 422 naming it, and changes nothing", async () => {
    const person = await newPerson("Short");
    const kept = pick("kept");
    await admin.post(`/v2/users/${person.id}/password`, { password: kept });
    for (const body of [{ password: "short" }, {}, { password: 12345678 }, { password: "x".repeat(257) }]) {
      const r = await admin.post(`/v2/users/${person.id}/password`, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(r.body.error.errors ?? {}), JSON.stringify(r.body)).toContain("password");
    }
    const g = await admin.graphql(
      'mutation($id: Int!) { setUserPassword(rowId: $id, input: { password: "short" }) { user { rowId } } }',
      { id: person.id },
    );
    expect(g.body.errors?.[0]?.extensions?.code, JSON.stringify(g.body)).toBe("VALIDATION");
    expect(await signsIn(person.email, kept)).toBe(person.id);
  });

  test("without update:user it is a 403; another account's user is a 404", async () => {
    const person = await newPerson("Guarded");
    const viewer = api(await h.key("alpha", "view:user"));
    expect((await viewer.post(`/v2/users/${person.id}/password`, { password: pick("nope") })).status).toBe(403);
    expect((await viewer.post(`/v2/users/${person.id}/invitation`)).status).toBe(403);
    const other = api(await h.key("beta"));
    expect((await other.post(`/v2/users/${person.id}/password`, { password: pick("nope") })).status).toBe(404);
    expect((await other.post(`/v2/users/${person.id}/invitation`)).status).toBe(404);
    expect(await h.db.prisma.password.findUnique({ where: { userId: person.id } })).toBeNull();
    expect(await h.db.prisma.signInLink.count({ where: { userId: person.id } })).toBe(0);
  });
});

describe("the CLI", () => {
  const cli = (...args: string[]) =>
    run(process.execPath, [...cliArgs, ...args], { env: { ...process.env, DATABASE_URL: h.config.databaseUrl } });

  test("users:password sets the password; a short one or an unknown email is one line and exit 1", async () => {
    const person = await newPerson("Cli");
    const password = pick("cli");
    const { stdout } = await cli(
      "users:password",
      "--account",
      "alpha",
      "--email",
      person.email,
      "--password",
      password,
    );
    expect(stdout).not.toContain(password);
    expect(await signsIn(person.email, password)).toBe(person.id);
    for (const args of [
      ["--email", person.email, "--password", "short"],
      ["--email", "nobody@example.org", "--password", pick("unknown")],
    ]) {
      const failed = await cli("users:password", "--account", "alpha", ...args).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect((failed as { code: number }).code).toBe(1);
      expect((failed as { stderr: string }).stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(await signsIn(person.email, password)).toBe(person.id);
  });

  test("users:invite prints a link on its last line, whose page sets the password", async () => {
    const person = await newPerson("Invited");
    const { stdout } = await cli("users:invite", "--account", "alpha", "--email", person.email);
    const url = stdout.trim().split("\n").at(-1)!;
    expect(url).toMatch(/^http:\/\/localhost:\d+\/password\/set\?token=[A-Za-z0-9_-]{43}$/);
    const form = await page(`/password/set?token=${tokenOf(url)}`);
    expect(form.status).toBe(200);
    const password = pick("invited");
    const done = await page("/password/set", { ...hiddenFields(form.html), password, confirmation: password });
    expect(done.status).toBe(200);
    expect(await signsIn(person.email, password)).toBe(person.id);
  });
});

describe("invitations", () => {
  test("REST answers the link once; only its SHA-256 is stored; the page sets the password once", async () => {
    const person = await newPerson("Newcomer");
    const r = await admin.post(`/v2/users/${person.id}/invitation`);
    expect(r.status).toBe(200);
    const { url, expires_at } = r.body.data;
    expect(url).toMatch(/^http:\/\/muster\.test\/password\/set\?token=[A-Za-z0-9_-]{43}$/);
    const days = (Date.parse(expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const token = tokenOf(url);
    const stored = await h.db.prisma.signInLink.findFirstOrThrow({ where: { userId: person.id } });
    expect(stored).toMatchObject({ purpose: "invitation", usedAt: null });
    expect(stored.hash).toBe(createHash("sha256").update(token).digest("hex"));

    const form = await page(`/password/set?token=${token}`);
    expect(form.status).toBe(200);
    expect(form.headers.get("cache-control")).toBe("no-store");
    expect(form.html).toContain('<label for="password">');
    expect(form.html).toContain('<label for="confirmation">');
    expect(form.html).not.toContain("<script");

    const password = pick("newcomer");
    const done = await page("/password/set", { ...hiddenFields(form.html), password, confirmation: password });
    expect(done.status).toBe(200);
    expect(done.html).toContain("Your password is set");
    expect(await signsIn(person.email, password)).toBe(person.id);
    expect((await h.db.prisma.signInLink.findUniqueOrThrow({ where: { id: stored.id } })).usedAt).not.toBeNull();

    expect((await page(`/password/set?token=${token}`)).status).toBe(410);
    const again = pick("again");
    const reused = await page("/password/set", { ...hiddenFields(form.html), password: again, confirmation: again });
    expect(reused.status).toBe(410);
    expect(reused.html).toContain("already been used");
    expect(await signsIn(person.email, again)).toBeNull();
  });

  test("GraphQL createUserInvitation answers the URL once; a new invitation makes the earlier one unknown", async () => {
    const person = await newPerson("Twice");
    const mutation =
      "mutation($id: Int!) { createUserInvitation(rowId: $id) { signInLink { id rowId url expiresAt purpose userId } } }";
    const first = (await admin.graphql(mutation, { id: person.id })).body.data.createUserInvitation.signInLink;
    expect(first).toMatchObject({ purpose: "invitation", userId: person.id });
    const again = await admin.graphql("query($id: ID!) { node(id: $id) { ... on SignInLink { rowId url } } }", {
      id: first.id,
    });
    expect(again.body.data?.node?.url ?? null).toBeNull();
    // A key that may not update people learns nothing of their links.
    const ranks = api(await h.key("alpha", "view:rank"));
    const hidden = await ranks.graphql("query($id: ID!) { node(id: $id) { id } }", { id: first.id });
    expect(hidden.body.data?.node ?? null).toBeNull();
    const second = (await admin.graphql(mutation, { id: person.id })).body.data.createUserInvitation.signInLink;
    expect((await page(`/password/set?token=${tokenOf(first.url)}`)).status).toBe(400);
    expect((await page(`/password/set?token=${tokenOf(second.url)}`)).status).toBe(200);
  });

  test("an expired or unknown link is refused, and sets nothing", async () => {
    const person = await newPerson("Late");
    const link = await createSignInLink(h.db.store, { accountId, userId: person.id, purpose: "invitation" });
    const form = await page(`/password/set?token=${link.token}`);
    await h.db.prisma.signInLink.update({ where: { id: link.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await page(`/password/set?token=${link.token}`);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain("expired");
    const password = pick("late");
    expect((await page("/password/set", { ...hiddenFields(form.html), password, confirmation: password })).status).toBe(
      410,
    );
    expect((await page("/password/set?token=nonsense")).status).toBe(400);
    expect((await page(`/password/set?token=${"A".repeat(43)}`)).status).toBe(400);
    expect((await page("/password/set")).status).toBe(400);
    expect(await h.db.prisma.password.findUnique({ where: { userId: person.id } })).toBeNull();
  });

  test("two posts racing with one link: one sets the password, the other finds the link used", async () => {
    const person = await newPerson("Racer");
    const link = await createSignInLink(h.db.store, { accountId, userId: person.id, purpose: "invitation" });
    const fields = hiddenFields((await page(`/password/set?token=${link.token}`)).html);
    const [a, b] = [pick("racer-a"), pick("racer-b")];
    const results = await Promise.all([
      page("/password/set", { ...fields, password: a, confirmation: a }),
      page("/password/set", { ...fields, password: b, confirmation: b }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
    const winner = results[0].status === 200 ? a : b;
    const loser = winner === a ? b : a;
    expect(await signsIn(person.email, winner)).toBe(person.id);
    expect(await signsIn(person.email, loser)).toBeNull();
  });

  test("a form that does not match, or comes from another site, or bad input, changes nothing", async () => {
    const person = await newPerson("Careful");
    const link = await createSignInLink(h.db.store, { accountId, userId: person.id, purpose: "invitation" });
    const fields = hiddenFields((await page(`/password/set?token=${link.token}`)).html);
    const password = pick("careful");
    const mismatch = await page("/password/set", { ...fields, password, confirmation: `${password}x` });
    expect(mismatch.status).toBe(422);
    expect(mismatch.html).toContain("not the same");
    const short = await page("/password/set", { ...fields, password: "short", confirmation: "short" });
    expect(short.status).toBe(422);
    expect(short.html).toContain("at least 8 characters");
    const forged = await page("/password/set", {
      ...fields,
      form_token: "x".repeat(43),
      password,
      confirmation: password,
    });
    expect(forged.status).toBe(403);
    const crossSite = await page(
      "/password/set",
      { ...fields, password, confirmation: password },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    const notAForm = await app.yoga.fetch("http://muster.test/password/set", {
      method: "POST",
      body: JSON.stringify({ token: link.token, password }),
      headers: { "content-type": "application/json" },
    });
    expect(notAForm.status).toBe(400);
    expect((await app.yoga.fetch("http://muster.test/password/set", { method: "DELETE" })).status).toBe(405);
    expect(await h.db.prisma.password.findUnique({ where: { userId: person.id } })).toBeNull();
    expect((await h.db.prisma.signInLink.findUniqueOrThrow({ where: { id: link.id } })).usedAt).toBeNull();
    // The link still works.
    expect((await page("/password/set", { ...fields, password, confirmation: password })).status).toBe(200);
  });
});

describe("password reset by email", () => {
  test("a known email gets a working link by email; an unknown one gets the same page and no mail", async () => {
    const person = await newPerson("Forgetful");
    const form = await page(`/password/forgot?account=${accountId}`);
    expect(form.status).toBe(200);
    expect(form.html).toContain('<label for="email">');
    const before = smtp.mails.length;

    const unknown = await page("/password/forgot", { account: String(accountId), email: "nobody@example.org" });
    const known = await page("/password/forgot", { account: String(accountId), email: person.email });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(known.status);
    expect(unknown.html).toBe(known.html);
    expect(known.html).toContain("If the address belongs to someone");

    const mail = await eventually(
      () => smtp.mails.slice(before).find((m) => m.to.includes(person.email)),
      "the reset email",
    );
    expect(mail.text).toContain("From: Muster <muster@example.org>");
    const url = /http:\/\/muster\.test\/password\/set\?token=[A-Za-z0-9_-]{43}/.exec(mail.text)?.[0];
    expect(url, mail.text).toBeDefined();
    const link = await h.db.prisma.signInLink.findFirstOrThrow({ where: { userId: person.id, purpose: "reset" } });
    const minutes = (link.expiresAt.getTime() - link.createdAt.getTime()) / 60_000;
    expect(Math.round(minutes)).toBe(60);

    const invitation = await createSignInLink(h.db.store, { accountId, userId: person.id, purpose: "invitation" });
    const set = await page(new URL(url!).pathname + new URL(url!).search);
    expect(set.status).toBe(200);
    const password = pick("forgetful");
    expect((await page("/password/set", { ...hiddenFields(set.html), password, confirmation: password })).status).toBe(
      200,
    );
    expect(await signsIn(person.email, password)).toBe(person.id);
    // The person's other unused link stopped working with the password chosen.
    expect((await page(`/password/set?token=${invitation.token}`)).status).toBe(400);
    // The unknown address's request ran before the known one's, and sent nothing.
    expect(smtp.mails.slice(before).flatMap((m) => m.to)).toEqual([person.email]);
  });

  test("requests are limited per email (and answered 429), whoever the email is", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await page("/password/forgot", { account: String(accountId), email: "limited@example.org" })).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test("a failed send is logged without the link, and the answer is the same", async () => {
    const person = await newPerson("Unlucky");
    const quiet = captureLog();
    const broken = createApp({
      db: h.db,
      config: { ...h.config, smtpUrl: "smtp://127.0.0.1:9", logLevel: "info" },
      logStream: quiet.stream,
    });
    try {
      const r = await broken.yoga.fetch("http://muster.test/password/forgot", {
        method: "POST",
        body: new URLSearchParams({ account: String(accountId), email: person.email }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(r.status).toBe(200);
      expect(await r.text()).toContain("If the address belongs to someone");
      const line = await eventually(
        () => quiet.lines.find((l) => l.includes("the email was not sent")),
        "the log line of the failed send",
      );
      expect(line).not.toMatch(/token|password\/set/);
    } finally {
      await broken.events.close();
    }
  });

  test("without SMTP_URL the forgot page says resets by email are not configured", async () => {
    const r = await h.app.yoga.fetch(`http://muster.test/password/forgot?account=${accountId}`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("not configured");
  });
});

test("no password shows in any answer, change event or log line; no token in a log line", async () => {
  expect(chosen.length).toBeGreaterThan(10);
  const events = JSON.stringify(await h.db.prisma.changeEvent.findMany(), (_k, v: unknown) =>
    typeof v === "bigint" ? String(v) : v,
  );
  const hashes = (await h.db.prisma.password.findMany()).map((p) => p.hash);
  const tokens = (await h.db.prisma.signInLink.findMany()).map((l) => l.hash);
  expect(log.lines.length).toBeGreaterThan(10);
  const logText = log.lines.join("\n");
  for (const password of chosen) {
    for (const text of [...answers, events, logText]) expect(text.includes(password), password).toBe(false);
  }
  for (const secret of [...hashes, ...tokens]) expect(logText.includes(secret)).toBe(false);
  expect(logText).not.toMatch(/token=[A-Za-z0-9_-]{43}/);
});

describe("the pages in Chromium", () => {
  let server: Server;
  let origin: string;
  let browser: Browser;
  beforeAll(async () => {
    server = createServer((req, res) => void app.yoga(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    mkdirSync(artifacts, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => server?.close(r));
  });

  test("a person chooses a password with the keyboard alone; both pages screenshot", async () => {
    const person = await newPerson("Keyboard");
    const link = await createSignInLink(h.db.store, { accountId, userId: person.id, purpose: "invitation" });
    const tab = await browser.newPage();
    await tab.goto(`${origin}/password/forgot?account=${accountId}`);
    await tab.screenshot({ path: path.join(artifacts, "password-forgot.png") });
    await tab.goto(`${origin}/password/set?token=${link.token}`);
    await tab.screenshot({ path: path.join(artifacts, "password-set.png") });
    const password = pick("keyboard");
    // The first field has the focus; Tab moves to the second, then to the button; Enter sends the form.
    await tab.keyboard.type(password);
    await tab.keyboard.press("Tab");
    await tab.keyboard.type(password);
    await tab.keyboard.press("Tab");
    expect(await tab.evaluate(() => document.activeElement?.tagName)).toBe("BUTTON");
    await tab.keyboard.press("Enter");
    await tab.waitForURL(`${origin}/password/set`);
    expect(await tab.textContent("h1")).toBe("Your password is set");
    await tab.screenshot({ path: path.join(artifacts, "password-set-done.png") });
    expect(await signsIn(person.email, password)).toBe(person.id);
  });
});

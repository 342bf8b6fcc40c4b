/**
 * Issue 43's "done when": the README's embeddable page (its `html` block under "Public pages", run as written with
 * its four constants filled in), served from an origin of its own, in real headless Chromium: it reads the roster with
 * a publishable key and a public form without any credential, and submits the form anonymously; the same page from an
 * origin the key does not list is refused. Screenshots go to test/artifacts/.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { client, type Client } from "./harness.ts";
import { startOidcHarness, type OidcHarness } from "./support/oidc.ts";
import { browserDescribe, launchChromium } from "./support/chromium.ts";

const artifacts = path.resolve("test/artifacts");
const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
const section = /\n## Public pages\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
const embed = /```html\n([\s\S]*?)```/.exec(section)?.[1] ?? "";

/** The README's page with its constants set, as a unit would paste it into its site. */
const pageWith = (constants: Record<"MUSTER" | "KEY" | "ACCOUNT" | "FORM", string>) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>3rd Platoon</title>
<style>body { font: 15px sans-serif; margin: 2rem; } label { display: block; margin: .5rem 0; }
label span { display: inline-block; width: 8rem; } .error { color: #b00; margin-left: .5rem; }</style></head>
<body><h1>3rd Platoon</h1>${embed.replace(
    /const (MUSTER|KEY|ACCOUNT|FORM) = "[^"]*";/g,
    (_, name: keyof typeof constants) => `const ${name} = ${JSON.stringify(constants[name])};`,
  )}</body></html>`;

/** A static site on a port (an origin) of its own, serving one page. */
async function site(): Promise<{ origin: string; serve(html: string): void; close(): Promise<void> }> {
  let html = "";
  const server: Server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (page) => void (html = page),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const suite = await browserDescribe();

suite("the README's public page, in a browser on another origin", () => {
  let h: OidcHarness;
  let admin: Client;
  let browser: Browser;
  let listed: Awaited<ReturnType<typeof site>>;
  let unlisted: Awaited<ReturnType<typeof site>>;
  let formId: number;
  let key: string;

  beforeAll(async () => {
    expect(embed).toContain("const KEY =");
    mkdirSync(artifacts, { recursive: true });
    h = await startOidcHarness();
    admin = client(h, await h.key("alpha"));
    const ok = async (reply: Promise<{ status: number; body: { data: { id: number } } }>) => {
      const r = await reply;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data.id;
    };
    const rank = await ok(admin.post("/v2/ranks", { name: "Sergeant", abbreviation: "SGT" }));
    const unit = await ok(admin.post("/v2/units", { name: "Alpha Squad" }));
    await ok(admin.post("/v2/users", { name: "Dee Smith", email: "dee@example.com", rank_id: rank, unit_id: unit }));
    const group = await ok(admin.post("/v2/groups", { name: "3rd Platoon" }));
    expect((await admin.post(`/v2/groups/${group}/units/attach`, { resources: [unit] })).status).toBe(200);
    formId = await ok(
      admin.post("/v2/forms", {
        name: "Enlistment",
        slug: "enlistment",
        is_public: true,
        success_message: "Welcome aboard: we will write to you.",
      }),
    );
    for (const field of [
      { name: "Name", key: "name", type: "text", required: true },
      { name: "Email", key: "email", type: "email", required: true },
      {
        name: "Branch",
        key: "branch",
        type: "select",
        options: [
          { label: "Infantry", value: "infantry" },
          { label: "Armour", value: "armour" },
        ],
      },
      { name: "Age", key: "age", type: "number", rules: "integer|min:16" },
    ])
      await ok(admin.post(`/v2/forms/${formId}/fields`, field));

    [listed, unlisted] = [await site(), await site()];
    key = (
      await createApiKey(h.db.store, {
        account: "alpha",
        scopes: "view:group,view:unit,view:user,view:rank,view:position,view:specialty,view:status,view:image",
        publishable: true,
        origins: [listed.origin],
      })
    ).key;
    const account = (await h.db.prisma.account.findUniqueOrThrow({ where: { name: "alpha" } })).slug!;
    const page = pageWith({ MUSTER: h.base, KEY: key, ACCOUNT: account, FORM: "enlistment" });
    listed.serve(page);
    unlisted.serve(page);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await listed?.close();
    await unlisted?.close();
    await h?.close();
  });

  test("from a listed origin it shows the roster (no email), then the form, and submits it anonymously", async () => {
    const page = await browser.newPage();
    await page.goto(listed.origin);
    await page.locator("#roster li").first().waitFor({ timeout: 30_000 });
    expect(await page.locator("#roster").innerText()).toContain("SGT Dee Smith");
    expect(await page.locator("#roster h3").innerText()).toBe("Alpha Squad");
    await page.locator("#enlist button[type=submit]").waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(artifacts, "public-page.png"), fullPage: true });

    // A value the field's rule refuses: the 422's message shows beside the field, nothing is stored.
    await page.fill("#enlist [name=name]", "Sam Jones");
    await page.fill("#enlist [name=email]", "sam@example.org");
    await page.selectOption("#enlist [name=branch]", "armour");
    await page.fill("#enlist [name=age]", "12");
    await page.click("#enlist button[type=submit]");
    await page.locator("#error-age:not(:empty)").waitFor({ timeout: 30_000 });
    expect(await h.db.prisma.submission.count({ where: { formId } })).toBe(0);
    await page.screenshot({ path: path.join(artifacts, "public-page-refused-field.png"), fullPage: true });

    await page.fill("#enlist [name=age]", "19");
    await page.click("#enlist button[type=submit]");
    await page.waitForFunction(() => document.getElementById("outcome")?.textContent?.startsWith("Welcome"), null, {
      timeout: 30_000,
    });
    await page.screenshot({ path: path.join(artifacts, "public-page-submitted.png"), fullPage: true });
    const stored = await h.db.prisma.submission.findMany({ where: { formId } });
    expect(stored).toHaveLength(1);
    expect(stored[0].userId).toBeNull();
    expect(stored[0].data).toMatchObject({ name: "Sam Jones", email: "sam@example.org", branch: "armour", age: 19 });
    await page.close();
  });

  test("from an origin the key does not list, the browser is refused and the API answers 403", async () => {
    const page = await browser.newPage();
    await page.goto(unlisted.origin);
    await page.waitForFunction(
      () => /could not be loaded/.test(document.getElementById("roster")?.textContent ?? ""),
      null,
      {
        timeout: 30_000,
      },
    );
    await page.waitForFunction(
      () => /could not be loaded/.test(document.getElementById("outcome")?.textContent ?? ""),
      null,
      {
        timeout: 30_000,
      },
    );
    expect(await page.locator("#enlist").isHidden()).toBe(true);
    await page.screenshot({ path: path.join(artifacts, "public-page-unlisted.png"), fullPage: true });
    await page.close();
    // What the browser could not read: no CORS header for the origin, and the key refused from it.
    const preflight = await fetch(`${h.base}/v2/roster`, {
      method: "OPTIONS",
      headers: {
        origin: unlisted.origin,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const refused = await fetch(`${h.base}/v2/roster`, {
      headers: { origin: unlisted.origin, authorization: `Bearer ${key}`, accept: "application/json" },
    });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toMatch(/may not be used from/);
  });
});

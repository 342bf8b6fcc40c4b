import { accessSync, constants, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { client, startHarness, testProvider, type Harness } from "./harness.ts";
import { requireService } from "./services.ts";

// The pages a person opens in a browser, /docs (Swagger UI) and /graphql (GraphiQL), in real headless Chromium
// (Debian's `chromium`; CHROMIUM_PATH overrides) against the service on a real port. Both must load everything from
// this server alone: the machine, like many deployments, has no route to a CDN.

const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = path.resolve("test-artifacts");

const browserService = await requireService("Chromium", async () => {
  try {
    accessSync(executablePath, constants.X_OK);
  } catch {
    throw new Error(`no executable at ${executablePath}; install Debian's chromium or set CHROMIUM_PATH`);
  }
});

/** Every request a page makes, and those that failed, so a test can say the page used nothing but this server. */
function watch(page: Page, origin: string) {
  const requests: string[] = [];
  const failed: string[] = [];
  const errors: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("requestfailed", (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) errors.push(m.text());
  });
  return {
    requests, failed, errors,
    /** Requests that left this origin: anything but our own http(s) URLs and in-page data:/blob: resources. */
    foreign: () => requests.filter((u) => !u.startsWith(`${origin}/`) && !/^(data|blob):/.test(u)),
  };
}

describe("/docs without a browser", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  const get = (url: string, init: { method?: string } = {}) => h.app.yoga.fetch(`http://muster.test${url}`, init);

  test("the page and its assets are public, from this server only, under a same-origin content policy", async () => {
    const r = await get("/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    const policy = r.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    const html = await r.text();
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(["/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/docs/assets/init.js"]));
    for (const asset of assets) {
      const a = await get(asset);
      expect(a.status, asset).toBe(200);
      expect((await a.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    const init = await (await get("/docs/assets/init.js")).text();
    expect(init).toContain('url: "/openapi.json"');
    expect(init).toContain("validatorUrl: null");
    expect((await get("/docs/")).status).toBe(200);
  });

  test("only the listed assets are served; other methods are refused", async () => {
    for (const url of ["/docs/assets/package.json", "/docs/assets/../package.json", "/docs/assets/index.html", "/docs/assets/"]) {
      const r = await get(url);
      expect(r.status, url).toBe(404);
      expect((await r.json()).error.type).toBe("NotFoundHttpException");
    }
    const post = await get("/docs", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await get("/docs/assets/swagger-ui.css", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toContain("text/css");
  });
});

// The pages do not depend on the database: they run in the SQLite pass only.
const browserDescribe = testProvider === "postgresql"
  ? (title: string, body: () => void) => describe.skip(`${title} [skipped: database-independent, run in the SQLite pass]`, body)
  : browserService.describe;

browserDescribe("in a browser", () => {
  let h: Harness;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    h = await startHarness();
    key = await h.key("browser");
    const created = await client(h, key).post("/v2/ranks", { name: "Private", abbreviation: "PVT" });
    expect(created.status).toBe(200);
    server = createServer(h.app.yoga);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The flags keep Chromium from calling Google's services at start (a closed network refuses them, noisily).
    browser = await chromium.launch({
      executablePath,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await h?.close();
  });

  test("/docs renders the OpenAPI document with Swagger UI, served from this server alone, with no API key", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const seen = watch(page, origin);
    const response = await page.goto(`${origin}/docs`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await expect(page.locator(".info .title").innerText()).resolves.toContain("Muster");
    // Operations are listed by tag (Swagger UI draws tags as they scroll into view); the filter finds the ranks.
    await page.getByText("List announcements", { exact: true }).waitFor({ state: "visible", timeout: 30_000 });
    await page.locator("input.operation-filter-input").fill("ranks");
    const listRanks = page.locator(".opblock", { has: page.getByText("List ranks", { exact: true }) }).first();
    await listRanks.scrollIntoViewIfNeeded();
    await expect.poll(() => listRanks.isVisible()).toBe(true);
    await expect(listRanks.locator(".opblock-summary-path").innerText()).resolves.toBe("/{version}/ranks");
    await expect(page.getByText("List announcements", { exact: true }).count()).resolves.toBe(0);
    await page.screenshot({ path: path.join(artifacts, "docs.png") });
    expect(seen.requests).toContain(`${origin}/openapi.json`);
    expect(seen.failed).toEqual([]);
    expect(seen.foreign()).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.close();
  });

  test("/graphql: GraphiQL sends the key from its headers editor and shows the result", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const seen = watch(page, origin);
    const response = await page.goto(`${origin}/graphql`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    const editor = (name: string) => page.locator(`.monaco-editor[data-uri$="-${name}"]`);
    const queryEditor = editor("operation.graphql");
    await queryEditor.waitFor({ state: "visible", timeout: 30_000 });

    // The headers editor is open and pre-filled with a template for the key.
    const headersEditor = editor("request-headers.json");
    await headersEditor.waitFor({ state: "visible" });
    await expect.poll(() => textOf(headersEditor)).toContain("Bearer <your API key>");
    await replaceText(page, headersEditor, JSON.stringify({ Authorization: `Bearer ${key}` }));

    await replaceText(page, queryEditor, "{ ranks { totalCount } }");
    await expect.poll(() => textOf(queryEditor)).toContain("totalCount");

    const sent = page.waitForRequest((r) => r.url() === `${origin}/graphql` && r.method() === "POST");
    await page.locator(".graphiql-execute-button").click();
    const request = await sent;
    expect(request.headers()["authorization"]).toBe(`Bearer ${key}`);

    const result = editor("response.json");
    await expect.poll(() => textOf(result), { timeout: 30_000 }).toMatch(/"totalCount":\s*1/);
    expect(await textOf(result)).not.toContain("errors");
    await page.screenshot({ path: path.join(artifacts, "graphiql.png") });
    expect(seen.failed).toEqual([]);
    expect(seen.foreign()).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.close();
  });
});

/** Replaces a Monaco editor's contents: focus it, select all, and type the text in one input event. */
async function replaceText(page: Page, editor: ReturnType<Page["locator"]>, text: string) {
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

/** What a Monaco editor shows (its lines, without the gutter), with the non-breaking spaces it draws made plain. */
async function textOf(editor: ReturnType<Page["locator"]>) {
  return (await editor.locator(".view-lines").innerText()).replace(/\u00a0/g, " ");
}

import { createServer, type Server } from "node:http";
import { startHarness, type Harness } from "../harness.ts";
import { freePort } from "./spawn-server.ts";
import { createOidc, type Oidc } from "../../src/http/oidc.ts";
import { requestListener } from "../../src/server/http.ts";
import type { Config } from "../../src/core/config.ts";

/** The harness's app behind a real node HTTP server, with the OpenID provider mounted as src/server/main.ts does. */
export interface OidcHarness extends Harness {
  oidc: Oidc;
  /** `http://127.0.0.1:<port>`: the issuer and the API. */
  base: string;
}

export async function startOidcHarness(overrides: Partial<Config> = {}): Promise<OidcHarness> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const h = await startHarness({ publicUrl: base, ...overrides });
  const oidc = await createOidc({
    db: h.db,
    config: h.config,
    logger: h.app.observability.logger,
    signInAttempts: h.app.signInAttempts,
  });
  const server: Server = createServer(requestListener(h.app, oidc));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    ...h,
    oidc,
    base,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await h.close();
    },
  };
}

/** A page the browser was shown: its status, URL and HTML. */
export interface Page {
  status: number;
  url: string;
  html: string;
}

/**
 * A browser as far as the sign-in needs one, with fetch: a cookie jar, redirects followed by hand, forms posted. It
 * stops at a redirect that leaves `origin` (the client's redirect URI), which it answers as `{ redirectedTo }`.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  #remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*expires=/i.test(a) && new Date(a.split("=")[1]).getTime() < Date.now(),
      );
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async #send(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    headers.set("accept", "text/html");
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    this.#remember(response);
    return response;
  }

  /** Follows redirects from `response` until a page, or a redirect out of `origin`. */
  async #follow(response: Response, url: string): Promise<Page | { redirectedTo: string }> {
    for (let hops = 0; hops < 10; hops++) {
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        return { status: response.status, url, html: await response.text() };
      }
      await response.arrayBuffer();
      url = new URL(location, url).toString();
      if (!url.startsWith(this.origin)) return { redirectedTo: url };
      response = await this.#send(url);
    }
    throw new Error("too many redirects");
  }

  async open(url: string) {
    return this.#follow(await this.#send(url), url);
  }

  async post(url: string, fields: Record<string, string>) {
    const response = await this.#send(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    return this.#follow(response, url);
  }
}

/** The first form of `html` (or the one whose action matches): its action and its fields' values. */
export function formOf(
  html: string,
  page: string,
  actionIncludes = "",
): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)];
  const form = forms.find((f) => (/action="([^"]*)"/.exec(f[1])?.[1] ?? "").includes(actionIncludes));
  if (!form) throw new Error(`no form with action ${actionIncludes} in:\n${html}`);
  const action = new URL((/action="([^"]*)"/.exec(form[1])?.[1] ?? "").replace(/&amp;/g, "&"), page).toString();
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input\b([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input[1])?.[1];
    if (name)
      fields[name] = (/value="([^"]*)"/.exec(input[1])?.[1] ?? "").replace(/&#(\d+);/g, (_, c) =>
        String.fromCharCode(Number(c)),
      );
  }
  return { action, fields };
}

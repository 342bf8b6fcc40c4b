import { accessSync, constants } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { describe } from "vitest";
import { requireService } from "../services.ts";
import { testProvider } from "../harness.ts";

/*
 * Debian's Chromium (CHROMIUM_PATH overrides), driven by playwright-core, which never downloads a browser. Tests that
 * open pages share this: the check that it is installed, and one way to start it.
 */

export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** The service entry of test/services.ts: skipped (or failed under MUSTER_REQUIRE_SERVICES=1) without Chromium. */
export const chromiumService = () =>
  requireService("Chromium", async () => {
    try {
      accessSync(chromiumPath, constants.X_OK);
    } catch {
      throw new Error(`no executable at ${chromiumPath}; install Debian's chromium or set CHROMIUM_PATH`);
    }
  });

/** Headless, with the flags that keep Chromium from calling Google's services at start (a closed network refuses them, noisily). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });

/**
 * `describe` for a browser suite whose pages do not depend on the database's kind beyond what the other suites check:
 * run in the SQLite pass (skipped, or failed under MUSTER_REQUIRE_SERVICES=1, without Chromium), skipped in the
 * PostgreSQL pass.
 */
export async function browserDescribe(): Promise<(title: string, body: () => void) => void> {
  const service = await chromiumService();
  return testProvider === "postgresql"
    ? (title, body) => describe.skip(`${title} [skipped: database-independent, run in the SQLite pass]`, body)
    : service.describe;
}

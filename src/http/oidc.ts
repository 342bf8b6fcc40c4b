import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import type { KoaContextWithOIDC } from "oidc-provider";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import { signInWithPassword } from "../auth/passwords.ts";
import { scopeInWords } from "../resources/scope-words.ts";
import type { SignInAttempts } from "../auth/sign-in-attempts.ts";
import { nodeClientAddress } from "./client-address.ts";
import { personPermissions } from "../auth/permissions.ts";
import { cookieKeys } from "../auth/oidc/signing-keys.ts";
import {
  accountOfClient,
  createOidcProvider,
  DISCOVERY_PATH,
  interactionPath,
  OIDC_PREFIX,
} from "../auth/oidc/provider.ts";
import { oidcScopes } from "../resources/oauth-client.ts";
import type { Logger } from "./observability/index.ts";
import { consentPage, errorPage, signedOutPage, signInPage, signOutPage } from "./oidc-pages.ts";

/*
 * The OpenID provider on the node HTTP server: oidc-provider's own endpoints (discovery, /oauth/...) and our
 * interaction pages (/oauth/interaction/<uid>: sign-in, consent). Requests reach it before Yoga (src/server/http.ts).
 */

export interface Oidc {
  provider: Provider;
  issuer: string;
  /** Whether the provider answers `pathname` (else Yoga does). */
  handles(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/** The issuer: the service's public base URL (PUBLIC_URL), else its own address. */
export const issuerOf = (config: Config): string =>
  (config.publicUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, "");

const GENERIC_SIGN_IN_PROBLEM = "The email or password is not right.";
/** The sign-in page's words for a refusal by the attempt limits (src/auth/sign-in-attempts.ts). */
export const tooManyAttempts = (retryAfterSeconds: number): string => {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
};
const MAX_FORM_BYTES = 16 * 1024;

/** Whether the person's role permissions give `scope` (OpenID's own scopes are everyone's). */
const permits = (permitted: readonly string[], scope: string) =>
  (oidcScopes as readonly string[]).includes(scope) || permitted.includes("*") || permitted.includes(scope);

class FormTooLarge extends Error {}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new FormTooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendHtml(res: ServerResponse, status: number, html: string, formAction = "'self'") {
  res.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  });
  res.end(html);
}

export async function createOidc({
  db,
  config,
  logger,
  signInAttempts,
}: {
  db: Database;
  config: Config;
  logger: Logger;
  /** The app's failed sign-in counters (`App.signInAttempts`), shared by instances where the rate limits are. */
  signInAttempts: SignInAttempts;
}): Promise<Oidc> {
  const issuer = issuerOf(config);
  const [csrfKey] = await cookieKeys(db);
  /** A form's CSRF token: tied to the interaction (whose cookie the browser must also hold), the same on every instance. */
  const csrfOf = (uid: string) => createHmac("sha256", csrfKey).update(`csrf:${uid}`).digest("base64url");
  const csrfMatches = (uid: string, given: string | null) => {
    const expected = Buffer.from(csrfOf(uid));
    const actual = Buffer.from(given ?? "");
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };

  const provider = await createOidcProvider({
    db,
    issuer,
    pages: {
      renderError(ctx, out) {
        ctx.type = "html";
        ctx.set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
        ctx.body = errorPage(String(out.error), out.error_description ? String(out.error_description) : undefined);
      },
      logoutSource(ctx: KoaContextWithOIDC, form: string) {
        ctx.type = "html";
        ctx.body = signOutPage(form, ctx.oidc.client?.clientName);
      },
      postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
        ctx.type = "html";
        ctx.body = signedOutPage();
      },
    },
  });
  provider.on("server_error", (_ctx: unknown, error: Error) =>
    logger.error({ err: { message: error.message, name: error.name } }, "OpenID provider error"),
  );
  const callback = provider.callback();

  /** The interaction's page: sign-in or consent, whichever the provider asks for. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) {
    let details: Awaited<ReturnType<Provider["interactionDetails"]>>;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      return sendHtml(
        res,
        400,
        errorPage(
          "invalid_request",
          "This sign-in has expired or was started in another browser. Start again from the application.",
        ),
      );
    }
    if (details.uid !== uid)
      return sendHtml(res, 400, errorPage("invalid_request", "This sign-in is not the one under way."));
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    const accountId = accountOfClient(client as unknown as Record<string, unknown> | undefined);
    if (!client || accountId === undefined)
      return sendHtml(res, 400, errorPage("invalid_client", "The application is unknown or disabled."));
    const redirectUri = typeof details.params.redirect_uri === "string" ? details.params.redirect_uri : "";
    let redirectOrigin = "";
    try {
      redirectOrigin = new URL(redirectUri).origin;
    } catch {
      /* no redirect: only our own pages are form targets */
    }
    const formAction = ["'self'", redirectOrigin].filter(Boolean).join(" ");
    const clientName = client.clientName ?? clientId;
    const base = interactionPath(uid);

    if (req.method === "POST") {
      let form: URLSearchParams;
      try {
        form = await readForm(req);
      } catch (error) {
        if (error instanceof FormTooLarge)
          return sendHtml(res, 413, errorPage("invalid_request", "The form is too large."));
        throw error;
      }
      if (!csrfMatches(uid, form.get("csrf")))
        return sendHtml(
          res,
          403,
          errorPage("invalid_request", "The form has expired. Go back, reload the page and try again."),
        );
      if (action === "abort" || (action === "consent" && form.get("decision") === "deny")) {
        return provider.interactionFinished(
          req,
          res,
          { error: "access_denied", error_description: "The person did not allow the application in." },
          { mergeWithLastSubmission: false },
        );
      }
      if (action === "login" && details.prompt.name === "login") {
        const email = form.get("email") ?? "";
        const attempt = { accountId, email, address: nodeClientAddress(req, config.trustProxy) };
        const refusal = (status: number, problem: string) =>
          sendHtml(
            res,
            status,
            signInPage({
              action: `${base}/login`,
              cancelAction: `${base}/abort`,
              csrf: csrfOf(uid),
              clientName,
              email,
              problem,
              forgotPasswordUrl: `/password/forgot?account=${accountId}`,
            }),
            formAction,
          );
        // Refused before the password is looked at, whether or not it is right (nor whether the email is anyone's).
        const verdict = await signInAttempts.check(attempt);
        if (!verdict.allowed) {
          res.setHeader("Retry-After", String(verdict.retryAfterSeconds));
          return refusal(429, tooManyAttempts(verdict.retryAfterSeconds));
        }
        const userId = await signInWithPassword(db, accountId, email, form.get("password") ?? "");
        if (userId === null) {
          await signInAttempts.failed(attempt);
          return refusal(401, GENERIC_SIGN_IN_PROBLEM);
        }
        await signInAttempts.succeeded(attempt);
        return provider.interactionFinished(
          req,
          res,
          { login: { accountId: String(userId) } },
          { mergeWithLastSubmission: false },
        );
      }
      if (action === "consent" && details.prompt.name === "consent" && form.get("decision") === "allow") {
        const personId = Number(details.session?.accountId);
        const permitted = (await personPermissions(db, accountId, personId)) ?? [];
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: String(personId), clientId });
        if (!grant) return sendHtml(res, 400, errorPage("invalid_request", "The grant of this sign-in is gone."));
        const promptDetails = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
        const missing = promptDetails.missingOIDCScope ?? [];
        const given = missing.filter((scope) => permits(permitted, scope));
        const refused = missing.filter((scope) => !permits(permitted, scope));
        if (given.length) grant.addOIDCScope(given.join(" "));
        if (refused.length) grant.rejectOIDCScope(refused.join(" "));
        if (promptDetails.missingOIDCClaims?.length) grant.addOIDCClaims(promptDetails.missingOIDCClaims);
        const grantId = await grant.save();
        return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      }
      return sendHtml(res, 400, errorPage("invalid_request", "This step of the sign-in is not the one under way."));
    }

    if (details.prompt.name === "login") {
      return sendHtml(
        res,
        200,
        signInPage({
          action: `${base}/login`,
          cancelAction: `${base}/abort`,
          csrf: csrfOf(uid),
          clientName,
          forgotPasswordUrl: `/password/forgot?account=${accountId}`,
        }),
        formAction,
      );
    }
    const personId = Number(details.session?.accountId);
    const person = await db.prisma.user.findFirst({ where: { id: personId, accountId }, select: { name: true } });
    const permitted = (await personPermissions(db, accountId, personId)) ?? [];
    const asked = String(details.params.scope ?? "")
      .split(" ")
      .filter(Boolean);
    return sendHtml(
      res,
      200,
      consentPage({
        action: `${base}/consent`,
        csrf: csrfOf(uid),
        clientName,
        personName: person?.name ?? "",
        scopes: asked.map((scope) => ({ scope, words: scopeInWords(scope), granted: permits(permitted, scope) })),
      }),
      formAction,
    );
  }

  const interactionRoute = new RegExp(`^${OIDC_PREFIX}/interaction/([A-Za-z0-9_-]+)(?:/(login|consent|abort))?$`);
  return {
    provider,
    issuer,
    handles: (pathname) =>
      pathname === DISCOVERY_PATH || pathname === OIDC_PREFIX || pathname.startsWith(`${OIDC_PREFIX}/`),
    handle(req, res) {
      const pathname = new URL(req.url ?? "/", "http://x").pathname;
      const match = interactionRoute.exec(pathname);
      if (!match) return void callback(req, res);
      const [, uid, action] = match;
      if ((req.method === "POST") !== (action !== undefined) && !(req.method === "GET" && !action)) {
        res.writeHead(405, { Allow: action ? "POST" : "GET", "Content-Type": "text/plain; charset=utf-8" });
        return void res.end("Method Not Allowed");
      }
      interaction(req, res, uid, action).catch((error: unknown) => {
        logger.error({ err: { message: (error as Error).message } }, "OpenID interaction failed");
        if (!res.headersSent) sendHtml(res, 500, errorPage("server_error", "Something went wrong on our side."));
        else res.end();
      });
    },
  };
}

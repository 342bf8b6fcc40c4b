import type { Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import type { Config } from "../core/config.ts";
import type { Database } from "../db/prisma.ts";
import { ApiError } from "../core/errors.ts";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../core/password-rules.ts";
import { formToken, formTokenMatches, linkOf, SET_PASSWORD_PATH, setPasswordWithLink } from "../auth/sign-in-links.ts";
import { createMailer, prepareReset } from "../auth/password-reset.ts";
import { clientAddress, type NodeServerContext } from "./client-address.ts";
import { errorResponse } from "./errors.ts";
import { idsOf } from "./ids.ts";
import { escapeHtml, htmlPage, pageResponse } from "./pages.ts";
import type { RateLimit } from "./rate-limit.ts";

/*
 * The pages people reach without an API key: `/password/set?token=...`, where a one-time link (an invitation, a
 * reset) lets its person choose a password, and `/password/forgot?account=ID`, where they ask for a reset link by
 * email. Plain HTML forms, no script; the work is src/auth/sign-in-links.ts and src/auth/password-reset.ts.
 */

export const FORGOT_PASSWORD_PATH = "/password/forgot";

/** Posts of the set-password form one client address may make per window (a wrong token costs as much). */
const SET_POSTS_PER_ADDRESS = { points: 30, seconds: 15 * 60 };
/** Reset requests per client address, and per email (whoever asks), per window. */
const RESETS_PER_ADDRESS = { points: 10, seconds: 60 * 60 };
const RESETS_PER_EMAIL = { points: 3, seconds: 60 * 60 };

const FORM_TYPE = "application/x-www-form-urlencoded";

interface Options {
  db: Database;
  config: Config;
  logger: Logger;
  rateLimit: RateLimit;
}

const paragraph = (text: string, cls?: string) => `    <p${cls ? ` class="${cls}"` : ""}>${escapeHtml(text)}</p>`;
const heading = (text: string) => `    <h1>${escapeHtml(text)}</h1>`;

/** The page of a link that cannot be used: unknown (400), used or expired (410). */
function unusableLink(state: "unknown" | "used" | "expired", method: string) {
  const why = {
    unknown: "This link is not valid. Check that you opened the whole link from your email or invitation.",
    used: "This link has already been used to set a password. Each link works once.",
    expired: "This link has expired.",
  }[state];
  const body = [
    heading("This link cannot be used"),
    paragraph(why, "problem"),
    paragraph("Ask the person who invited you for a new invitation, or ask for a new password reset link."),
  ].join("\n");
  return pageResponse(htmlPage("Link cannot be used", body), state === "unknown" ? 400 : 410, method);
}

function setPasswordForm(token: string, link: { id: number; expiresAt: Date }, problem?: string) {
  const body = [
    heading("Choose your password"),
    paragraph(
      `Your new password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long. This link works once.`,
    ),
    ...(problem ? [`    <p class="problem" role="alert" id="problem">${escapeHtml(problem)}</p>`] : []),
    `    <form method="post" action="${SET_PASSWORD_PATH}">
      <input type="hidden" name="token" value="${escapeHtml(token)}">
      <input type="hidden" name="form_token" value="${escapeHtml(formToken(token, link))}">
      <label for="password">New password</label>
      <p class="hint" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
      <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="password-hint${problem ? " problem" : ""}" autofocus>
      <label for="confirmation">Repeat the new password</label>
      <input type="password" id="confirmation" name="confirmation" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}">
      <button type="submit">Set password</button>
    </form>`,
  ].join("\n");
  return htmlPage("Choose your password", body);
}

function forgotForm(accountId: string, problem?: string) {
  const body = [
    heading("Forgot your password?"),
    paragraph(
      "Give the email address you sign in with. If it belongs to someone, we send a link to choose a new password.",
    ),
    ...(problem ? [`    <p class="problem" role="alert">${escapeHtml(problem)}</p>`] : []),
    `    <form method="post" action="${FORGOT_PASSWORD_PATH}">
      <input type="hidden" name="account" value="${escapeHtml(accountId)}">
      <label for="email">Email address</label>
      <input type="email" id="email" name="email" autocomplete="email" required maxlength="255" autofocus>
      <button type="submit">Send me a link</button>
    </form>`,
  ].join("\n");
  return htmlPage("Forgot your password?", body);
}

const notice = (title: string, text: string, cls?: string) =>
  htmlPage(title, [heading(title), paragraph(text, cls)].join("\n"));

const RESET_NOT_CONFIGURED = notice(
  "Password resets are not available",
  "Resets by email are not configured on this server. Ask an administrator of your organisation to set your password or send you an invitation.",
  "problem",
);
const RESET_ON_ITS_WAY = notice(
  "Check your email",
  "If the address belongs to someone, a link to choose a new password is on its way. It works once, for an hour.",
  "done",
);
const TOO_MANY = notice(
  "Too many attempts",
  "There have been too many attempts from here or for this address. Wait a while, then try again.",
  "problem",
);
const CROSS_SITE = notice(
  "Form refused",
  "This form was sent from another site. Open the page on this server and send it again.",
  "problem",
);
const STALE_FORM = notice(
  "Form out of date",
  "This form does not belong to the link it was sent with. Open the link again and choose your password there.",
  "problem",
);
const PASSWORD_SET = notice(
  "Your password is set",
  "You can now sign in with your email address and your new password.",
  "done",
);
const ACCOUNT_MISSING = notice(
  "Which organisation?",
  "This page needs the organisation you sign in to: open it from the sign-in page.",
  "problem",
);

/** An account id as the forgot page carries it: a positive integer, or null. */
const accountIdOf = (value: string | null): number | null =>
  value && /^\d{1,15}$/.test(value) && Number(value) > 0 ? Number(value) : null;

/**
 * A form another site sent (a browser says so in Sec-Fetch-Site, or in an Origin not ours) is refused: there is no
 * session, but a person's browser should not be made to set a password or ask for resets by another page.
 */
function crossSite(request: Request, url: URL, config: Config): boolean {
  // A browser that sends Fetch Metadata says where the form came from; it sends `Origin: null` for our own forms,
  // since our pages' Referrer-Policy is no-referrer (their URL carries a token).
  const site = request.headers.get("sec-fetch-site");
  if (site) return site !== "same-origin" && site !== "none";
  const origin = request.headers.get("origin");
  if (!origin || origin === "null") return origin === "null";
  const ours = new Set([url.origin, ...(config.publicUrl ? [new URL(config.publicUrl).origin] : [])]);
  return !ours.has(origin);
}

async function formOf(request: Request): Promise<URLSearchParams | null> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== FORM_TYPE) return null;
  return new URLSearchParams(await request.text());
}

/** `/password/set` and `/password/forgot`. Public, no key. */
export function passwordPagesPlugin({ db, config, logger, rateLimit }: Options): Plugin {
  const mailer = createMailer(config);
  const setPosts = rateLimit.allowance("pw-set-ip", SET_POSTS_PER_ADDRESS.points, SET_POSTS_PER_ADDRESS.seconds);
  const resetsByAddress = rateLimit.allowance("pw-reset-ip", RESETS_PER_ADDRESS.points, RESETS_PER_ADDRESS.seconds);
  const resetsByEmail = rateLimit.allowance("pw-reset-email", RESETS_PER_EMAIL.points, RESETS_PER_EMAIL.seconds);

  /** Makes the link and sends the email after the page is answered: the answer does not wait for either. */
  function resetInBackground(accountId: number, email: string, baseUrl: string) {
    void (async () => {
      let mail;
      try {
        mail = await prepareReset(db.store, { accountId, email, baseUrl });
      } catch (error) {
        logger.error({ error: (error as Error).message }, "password reset: the link could not be made");
        return;
      }
      if (!mail) return;
      try {
        await mailer!.send(mail);
      } catch (error) {
        // Its message is nodemailer's (connection, SMTP reply); the link is only in the email, never here.
        logger.warn({ error: (error as Error).message, account: accountId }, "password reset: the email was not sent");
      }
    })();
  }

  async function setPage(request: Request, url: URL, address: string): Promise<Response> {
    if (request.method !== "POST") {
      const token = url.searchParams.get("token");
      const link = await linkOf(db.store, token);
      if (link.state !== "usable") return unusableLink(link.state, request.method);
      return pageResponse(setPasswordForm(token!, link), 200, request.method);
    }
    if (crossSite(request, url, config)) return pageResponse(CROSS_SITE, 403);
    if (!(await setPosts.take(address))) return pageResponse(TOO_MANY, 429);
    const form = await formOf(request);
    const token = form?.get("token") ?? null;
    const link = await linkOf(db.store, token);
    if (link.state !== "usable") return unusableLink(link.state, "POST");
    if (!formTokenMatches(token!, link, form!.get("form_token"))) return pageResponse(STALE_FORM, 403);
    const password = form!.get("password");
    if (password !== form!.get("confirmation"))
      return pageResponse(setPasswordForm(token!, link, "The two passwords are not the same."), 422);
    const used = await setPasswordWithLink(db.store, token, password);
    if (used.state === "set") return pageResponse(PASSWORD_SET);
    if (used.state === "invalid") return pageResponse(setPasswordForm(token!, link, used.problem), 422);
    return unusableLink(used.state, "POST");
  }

  async function forgotPage(request: Request, url: URL, address: string): Promise<Response> {
    if (request.method !== "POST") {
      const account = url.searchParams.get("account");
      if (!mailer) return pageResponse(RESET_NOT_CONFIGURED, 200, request.method);
      if (accountIdOf(account) === null) return pageResponse(ACCOUNT_MISSING, 400, request.method);
      return pageResponse(forgotForm(account!), 200, request.method);
    }
    if (!mailer) return pageResponse(RESET_NOT_CONFIGURED, 503);
    if (crossSite(request, url, config)) return pageResponse(CROSS_SITE, 403);
    const form = await formOf(request);
    const accountId = accountIdOf(form?.get("account") ?? null);
    if (accountId === null) return pageResponse(ACCOUNT_MISSING, 400);
    const email = (form!.get("email") ?? "").trim();
    if (email === "" || email.length > 255)
      return pageResponse(forgotForm(String(accountId), "Give your email address."), 422);
    const allowed =
      (await resetsByAddress.take(address)) && (await resetsByEmail.take(`${accountId}:${email.toLowerCase()}`));
    if (!allowed) return pageResponse(TOO_MANY, 429);
    resetInBackground(accountId, email, config.publicUrl ?? url.origin);
    return pageResponse(RESET_ON_ITS_WAY);
  }

  const pages: Record<string, typeof setPage> = { [SET_PASSWORD_PATH]: setPage, [FORGOT_PASSWORD_PATH]: forgotPage };

  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      const page = pages[url.pathname];
      if (!page) return;
      if (!["GET", "HEAD", "POST"].includes(request.method)) {
        endResponse(errorResponse(new ApiError("METHOD_NOT_ALLOWED"), idsOf(request), { Allow: "GET, HEAD, POST" }));
        return;
      }
      const address = clientAddress(request, serverContext as NodeServerContext, config.trustProxy);
      endResponse(await page(request, url, address));
    },
    onDispose: () => mailer?.close(),
  };
}

import type { RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import type { Config } from "../core/config.ts";
import { ApiError, rateLimited, validationError } from "../core/errors.ts";
import type { AnonymousWrites } from "../request/context.ts";
import { clientAddress, type NodeServerContext } from "./client-address.ts";
import type { RateLimit } from "./rate-limit.ts";

/*
 * The limits of writes without a credential (public form submissions): a number per client address and per form in a
 * window (PUBLIC_SUBMISSIONS_PER_ADDRESS, PUBLIC_SUBMISSIONS_PER_FORM, PUBLIC_SUBMISSION_WINDOW_MINUTES), counted where
 * the API's rate limits are (Redis when REDIS_URL is set), and the captcha when one is configured. The captcha is
 * checked by the siteverify protocol Turnstile, hCaptcha and reCAPTCHA share: a form-encoded POST of `secret`,
 * `response` (the token) and `remoteip`, answered `{"success": boolean, "error-codes": [...]}`.
 */

/** The limits of one app's anonymous writes; `of` gives one request's. */
export interface PublicWrites {
  of(request: Request, serverContext: NodeServerContext | undefined): AnonymousWrites;
}

/** Takes one unit of `key`'s allowance, or answers 429 with the time until its window frees one. */
async function take(counter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await counter.consume(key, 1);
  } catch (rejection) {
    if (rejection instanceof Error) throw rejection;
    throw rateLimited(
      (rejection as RateLimiterRes).msBeforeNext / 1000,
      "Too many submissions of public forms: please wait before trying again.",
    );
  }
}

const captchaRefused = (message: string) => validationError({ captcha_token: [message] });

/** Asks the verifier about `token`; true when it passed. Unreachable, slow or answering nonsense: UNAVAILABLE. */
async function siteverify(config: Config, verifyUrl: string, secret: string, token: string, remoteip: string) {
  const unavailable = () =>
    new ApiError("UNAVAILABLE", "The captcha could not be verified just now: nothing was stored. Please try again.");
  let answer: unknown;
  try {
    const response = await fetch(verifyUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ secret, response: token, remoteip }),
      signal: AbortSignal.timeout(config.captchaTimeoutMs),
      redirect: "error",
    });
    if (!response.ok) throw unavailable();
    answer = await response.json();
  } catch {
    throw unavailable();
  }
  if (typeof answer !== "object" || answer === null || typeof (answer as { success?: unknown }).success !== "boolean")
    throw unavailable();
  return (answer as { success: boolean }).success;
}

export function publicWrites(config: Config, rateLimit: RateLimit): PublicWrites {
  const seconds = config.publicSubmissionWindowMinutes * 60;
  const perAddress = rateLimit.counter("public-submissions:address", config.publicSubmissionsPerAddress, seconds);
  const perForm = rateLimit.counter("public-submissions:form", config.publicSubmissionsPerForm, seconds);
  return {
    of(request, serverContext) {
      const address = () => clientAddress(request, serverContext, config.trustProxy);
      return {
        async admit({ accountId, formId }) {
          await take(perAddress, address());
          await take(perForm, `${accountId}:${formId}`);
        },
        async verifyCaptcha(token) {
          const captcha = config.captcha;
          if (!captcha) return;
          if (!token) throw captchaRefused("The captcha token is required: complete the captcha and submit again.");
          if (!(await siteverify(config, captcha.verifyUrl, captcha.secret, token, address())))
            throw captchaRefused("The captcha was not passed: complete it again and submit again.");
        },
      };
    },
  };
}

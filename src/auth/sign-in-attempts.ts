import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";
import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Config } from "../core/config.ts";

/** One password sign-in: the account it is for, the email typed (known or not), the client address it came from. */
export interface SignInAttempt {
  accountId: number;
  email: string;
  address: string;
}

export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface SignInAttempts {
  /** Whether `attempt` may be tried now: refused while its person or its address is over its limit of failures. */
  check(attempt: SignInAttempt): Promise<AttemptVerdict>;
  /** Counts a failed attempt against its person and its address: a wrong password and an unknown email alike. */
  failed(attempt: SignInAttempt): Promise<void>;
  /** A successful sign-in forgets its person's failures (not its address's: one address may try many people). */
  succeeded(attempt: SignInAttempt): Promise<void>;
}

export interface SignInLimits {
  failuresPerPerson: number;
  failuresPerAddress: number;
  windowSeconds: number;
}

/** The limits `SIGN_IN_FAILURES_PER_PERSON`, `SIGN_IN_FAILURES_PER_ADDRESS` and `SIGN_IN_FAILURE_WINDOW_MINUTES` set. */
export const signInLimits = (config: Config): SignInLimits => ({
  failuresPerPerson: config.signInFailuresPerPerson,
  failuresPerAddress: config.signInFailuresPerAddress,
  windowSeconds: config.signInFailureWindowMinutes * 60,
});

/** A counter kept where the API's rate limits are (`RateLimit.counter`, src/http/rate-limit.ts), shared by instances. */
export type CounterFactory = (name: string, points: number, durationSeconds: number) => RateLimiterAbstract;

/**
 * Failed password sign-ins, counted per person (account and email, whether or not the email is anyone's, so a refusal
 * says nothing about it) and per client address, in fixed windows: past its limit a person or an address is refused
 * until its window ends. The person's key is a hash, so the store holds no email.
 */
export function createSignInAttempts(counter: CounterFactory, limits: SignInLimits): SignInAttempts {
  const byPerson = counter("sign-in:person", limits.failuresPerPerson, limits.windowSeconds);
  const byAddress = counter("sign-in:address", limits.failuresPerAddress, limits.windowSeconds);
  const keysOf = (attempt: SignInAttempt) => ({ person: personKey(attempt), address: addressKey(attempt.address) });

  return {
    async check(attempt) {
      const keys = keysOf(attempt);
      const [person, address] = await Promise.all([byPerson.get(keys.person), byAddress.get(keys.address)]);
      const over = [
        { res: person, limit: limits.failuresPerPerson },
        { res: address, limit: limits.failuresPerAddress },
      ].flatMap(({ res, limit }) => (res !== null && res.consumedPoints >= limit ? [res.msBeforeNext] : []));
      if (over.length === 0) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...over) / 1000)) };
    },
    async failed(attempt) {
      const keys = keysOf(attempt);
      await Promise.all([countFailure(byPerson, keys.person), countFailure(byAddress, keys.address)]);
    },
    async succeeded(attempt) {
      await byPerson.delete(personKey(attempt));
    },
  };
}

/** One more failure; past the limit rate-limiter-flexible rejects with the counter's state, which is no error here. */
async function countFailure(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key, 1);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
  }
}

/** The person an attempt is for, as the store's key: `Dee@Example.com ` and `dee@example.com` are one person. */
function personKey({ accountId, email }: SignInAttempt): string {
  const normalised = email.normalize("NFKC").trim().toLowerCase();
  return createHash("sha256").update(`${accountId}\n${normalised}`).digest("base64url");
}

/**
 * The address an attempt is counted against: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an IPv6
 * address by its /64, the least a single customer is usually given, so that one network cannot try again from each
 * of its addresses.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  const bare = address.split("%")[0];
  if (!isIPv6(bare)) return address;
  const groups = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const [head, tail] = bare.split("::");
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const all = [...before, ...Array<string>(8 - before.length - after.length).fill("0"), ...after];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

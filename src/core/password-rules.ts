/*
 * What a new password must be. The API reference (the registry's `setUserPassword` input) and the checks of every
 * way to set one (src/auth/passwords.ts) read these.
 */

export const PASSWORD_MIN_LENGTH = 8;
/** Longer input is refused rather than hashed: a password is not a place to send a megabyte. */
export const PASSWORD_MAX_LENGTH = 256;

/** Why a new password is not accepted, or null. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== "string") return "The password must be a string.";
  if (password.length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `The password must not be greater than ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

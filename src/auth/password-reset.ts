import { createTransport, type Transporter } from "nodemailer";
import type { Config } from "../core/config.ts";
import type { Store } from "../db/store.ts";
import { createSignInLink, linkUrl, RESET_LIFETIME_MS } from "./sign-in-links.ts";

/*
 * Password resets by email: the person asks on the forgot-password page (src/http/password-pages.ts), and, when the
 * address is one of the account's people's, gets a one-time link (a `reset` sign-in link, an hour) by email through
 * `SMTP_URL`. Whether the address is known shows nowhere: the page answers the same, and the work is done after it.
 */

/** The email a reset sends, once its link is committed. */
export interface ResetMail {
  to: string;
  url: string;
  accountName: string;
}

/**
 * The reset link of the account's person with this email, made and committed, and the email that carries it; null
 * when the email is no one's (or the account is unknown).
 */
export async function prepareReset(
  store: Store,
  request: { accountId: number; email: string; baseUrl: string },
): Promise<ResetMail | null> {
  const email = request.email.trim();
  if (email === "" || email.length > 255) return null;
  const [person, account] = await Promise.all([
    store.prisma.user.findFirst({ where: { accountId: request.accountId, email }, select: { id: true, email: true } }),
    store.prisma.account.findUnique({ where: { id: request.accountId }, select: { name: true } }),
  ]);
  if (!person || !account) return null;
  const link = await createSignInLink(store, { accountId: request.accountId, userId: person.id, purpose: "reset" });
  return { to: person.email, url: linkUrl(request.baseUrl, link.token), accountName: account.name };
}

export interface Mailer {
  send(mail: ResetMail): Promise<void>;
  close(): void;
}

/** The mailer of `SMTP_URL` (nodemailer's SMTP transport), or null when resets by email are off. */
export function createMailer(config: Pick<Config, "smtpUrl" | "mailFrom">): Mailer | null {
  if (!config.smtpUrl) return null;
  const transport: Transporter = createTransport(config.smtpUrl);
  const minutes = RESET_LIFETIME_MS / 60_000;
  return {
    async send(mail) {
      await transport.sendMail({
        from: config.mailFrom,
        to: mail.to,
        subject: `Choose a new password for ${mail.accountName}`,
        text: [
          `Someone asked to reset the password of ${mail.to} on ${mail.accountName}.`,
          "",
          `To choose a new password, open this link within ${minutes} minutes (it works once):`,
          "",
          mail.url,
          "",
          "If you did not ask for this, ignore this email: your password stays as it is.",
        ].join("\n"),
      });
    },
    close: () => transport.close(),
  };
}

import { createTransport, type Transporter } from "nodemailer";
import type { Config } from "../../core/config.ts";

/** One email of an automation's `email` action. */
export interface AutomationMail {
  to: string[];
  subject: string;
  text: string;
  /** The action's idempotency key: the Message-ID, the same on every attempt, so that a receiver can drop repeats. */
  key: string;
}

const transports = new Map<string, Transporter>();

/** The host part of the Message-ID: the public URL's host, or `muster` when the server has none. */
function messageIdHost(config: Pick<Config, "publicUrl">): string {
  try {
    return config.publicUrl ? new URL(config.publicUrl).hostname : "muster";
  } catch {
    return "muster";
  }
}

/** Sends `mail` over `SMTP_URL` (nodemailer's SMTP transport, one per URL); throws when it is refused or unset. */
export async function sendAutomationMail(
  config: Pick<Config, "smtpUrl" | "mailFrom" | "publicUrl" | "webhookTimeoutMs">,
  mail: AutomationMail,
): Promise<{ message_id: string; accepted: number }> {
  if (!config.smtpUrl) throw new Error("SMTP_URL is not set: the server sends no email.");
  let transport = transports.get(config.smtpUrl);
  // Bounded as a webhook action is: an SMTP server that hangs must not outlast the run's lease (nodemailer waits minutes).
  const timeout = config.webhookTimeoutMs;
  if (!transport)
    transports.set(
      config.smtpUrl,
      (transport = createTransport({
        url: config.smtpUrl,
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout,
      })),
    );
  const messageId = `<${mail.key}@${messageIdHost(config)}>`;
  const info = await transport.sendMail({
    from: config.mailFrom,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId,
  });
  return { message_id: messageId, accepted: Array.isArray(info.accepted) ? info.accepted.length : 0 };
}

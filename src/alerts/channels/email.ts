import nodemailer, { type Transporter } from 'nodemailer';
import { Type, type Static } from '@sinclair/typebox';
import { describe, type AlertMessage } from '../message.js';

export const EmailConfig = Type.Object({ address: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false });
export type EmailConfig = Static<typeof EmailConfig>;

const transports = new Map<string, Transporter>();

/** One transport per SMTP URL, kept for the process (nodemailer pools the connections). */
function transportFor(smtpUrl: string): Transporter {
  let t = transports.get(smtpUrl);
  if (!t) {
    t = nodemailer.createTransport(smtpUrl);
    transports.set(smtpUrl, t);
  }
  return t;
}

export async function sendEmail(config: EmailConfig, message: AlertMessage, smtp: { url: string | undefined; from: string }): Promise<string> {
  if (!smtp.url) throw new Error('SMTP_URL is not set: email channels cannot deliver');
  const info = await transportFor(smtp.url).sendMail({
    from: smtp.from,
    to: config.address,
    subject: `[${message.alertType}] ${message.title}`,
    text: describe(message),
    headers: { 'X-Alert-Id': message.alertId },
  });
  return `accepted by SMTP: ${info.response ?? info.messageId}`;
}

/** One plain-text mail through the service's SMTP (what status-page subscribers get). */
export async function sendMail(smtp: { url: string | undefined; from: string }, mail: { to: string; subject: string; text: string; headers?: Record<string, string> }): Promise<string> {
  if (!smtp.url) throw new Error('SMTP_URL is not set: mail cannot be sent');
  const info = await transportFor(smtp.url).sendMail({ from: smtp.from, to: mail.to, subject: mail.subject, text: mail.text, headers: mail.headers });
  return `accepted by SMTP: ${info.response ?? info.messageId}`;
}

export function closeEmailTransports(): void {
  for (const t of transports.values()) t.close();
  transports.clear();
}

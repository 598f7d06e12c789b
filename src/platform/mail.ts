import nodemailer, { type Transporter } from 'nodemailer';

/** The service's SMTP (SMTP_URL): one pooled transport per URL for the process; alert email and people's mail use it. */
const transports = new Map<string, Transporter>();

export function transportFor(smtpUrl: string): Transporter {
  let t = transports.get(smtpUrl);
  if (!t) {
    t = nodemailer.createTransport(smtpUrl);
    transports.set(smtpUrl, t);
  }
  return t;
}

/** One plain-text mail through the service's SMTP. */
export async function sendMail(
  smtp: { url: string | undefined; from: string },
  mail: { to: string; subject: string; text: string; headers?: Record<string, string> },
): Promise<string> {
  if (!smtp.url) throw new Error('SMTP_URL is not set: mail cannot be sent');
  const info = await transportFor(smtp.url).sendMail({ from: smtp.from, to: mail.to, subject: mail.subject, text: mail.text, headers: mail.headers });
  return `accepted by SMTP: ${info.response ?? info.messageId}`;
}

export function closeMailTransports(): void {
  for (const t of transports.values()) t.close();
  transports.clear();
}

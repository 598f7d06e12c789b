import { type Static, Type } from '@sinclair/typebox';
import { transportFor } from '../../platform/mail.js';
import { type AlertMessage, describe } from '../message.js';

export const EmailConfig = Type.Object({ address: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false });
export type EmailConfig = Static<typeof EmailConfig>;

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

export { closeMailTransports as closeEmailTransports, sendMail } from '../../platform/mail.js';

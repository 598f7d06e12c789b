import type { Logger } from '../platform/logger.js';
import { sendMail } from '../platform/mail.js';
import type { Sql } from '../storage/postgres.js';

/**
 * Mail to people (invitations, password resets): written in the transaction that makes it due (so a rolled-back
 * invitation mails nobody) and sent by the background sweep through the service's SMTP, retried with backoff up to
 * `attempts` times, its last error kept on the row.
 */
export async function queueMail(db: Sql, mail: { to: string; subject: string; body: string; kind: 'invitation' | 'password-reset' }): Promise<void> {
  await db`insert into account_mails (to_address, subject, body, kind) values (${mail.to}, ${mail.subject}, ${mail.body}, ${mail.kind})`;
}

export async function sendDuePeopleMail(
  sql: Sql,
  settings: { smtpUrl: string | undefined; from: string; attempts: number; retryBaseMs: number },
  logger?: Logger,
  batch = 50,
): Promise<{ sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  await sql.begin(async (tx) => {
    const due = await tx<{ id: string; to_address: string; subject: string; body: string; kind: string; attempts: number }[]>`
      select id, to_address, subject, body, kind, attempts from account_mails
      where sent_at is null and attempts < ${settings.attempts} and (queued_at is null or queued_at <= now())
      order by created_at limit ${batch} for update skip locked`;
    for (const mail of due) {
      try {
        await sendMail(
          { url: settings.smtpUrl, from: settings.from },
          { to: mail.to_address, subject: mail.subject, text: mail.body, headers: { 'X-Account-Mail': mail.kind } },
        );
        // The body held a one-time link: once delivered it is not kept.
        await tx`update account_mails set sent_at = now(), attempts = attempts + 1, last_error = null, body = '' where id = ${mail.id}`;
        sent++;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        await tx`update account_mails set attempts = attempts + 1, last_error = ${message.slice(0, 500)},
          queued_at = now() + ${`${settings.retryBaseMs * 2 ** mail.attempts} milliseconds`}::interval where id = ${mail.id}`;
        logger?.warn({ mail: mail.id, kind: mail.kind, attempt: mail.attempts + 1, err: message }, 'mail to a person not sent');
        failed++;
      }
    }
  });
  return { sent, failed };
}

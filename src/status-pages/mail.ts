import type { Logger } from 'pino';
import { sendMail } from '../alerts/index.js';
import type { Sql } from '../storage/postgres.js';
import { serviceSecret } from '../storage/service-secrets.js';
import { linkToken, pageAddress } from './links.js';

/**
 * Sends status-page subscriber mail (docs/status-pages.md): rows of status_page_mails that the transaction making
 * them due wrote (a confirm on sign-up, an incident or maintenance update with notifySubscribers). Each tick takes
 * due rows with `for update skip locked` (several workers share the work), sends each through the service's SMTP
 * (the alert email path) with the page's address and an unsubscribe link, and marks it sent; a failure is kept
 * on the row (attempts, last_error) and retried with backoff up to `attempts` times, then left visible there.
 */
export interface MailSettings {
  smtpUrl: string | undefined;
  from: string;
  /** The service's address for links (PUBLIC_URL). */
  publicUrl: string;
  attempts: number;
  retryBaseMs: number;
}

interface Due {
  id: string;
  kind: 'confirm' | 'incident' | 'maintenance';
  subject: string;
  body: string;
  attempts: number;
  subscription_id: string;
  address: string;
  page_url: string;
  page_name: string;
}

export async function sendDueMail(sql: Sql, settings: MailSettings, logger?: Logger, batch = 50): Promise<{ sent: number; failed: number }> {
  const secret = await serviceSecret(sql, 'status-page-links');
  let sent = 0;
  let failed = 0;
  await sql.begin(async (tx) => {
    const due = await tx<Due[]>`
      select m.id, m.kind, m.subject, m.body, m.attempts, s.id as subscription_id, s.address, p.url as page_url, p.data->>'name' as page_name
      from status_page_mails m
      join status_page_subscriptions s on s.id = m.subscription_id
      join status_pages p on p.id = s.status_page_id
      where m.sent_at is null and m.attempts < ${settings.attempts} and (m.queued_at is null or m.queued_at <= now())
      order by m.created_at
      limit ${batch}
      for update of m skip locked`;
    for (const mail of due) {
      const page = pageAddress(settings.publicUrl, { url: mail.page_url });
      const link = (purpose: 'confirm' | 'unsubscribe') =>
        `${page}/subscriptions/${mail.subscription_id}/${purpose}?token=${linkToken(secret, purpose, mail.subscription_id)}`;
      const text = [
        mail.body,
        mail.kind === 'confirm' ? `Confirm: ${link('confirm')}` : `Status page: ${page}`,
        `--\nYou get this mail because this address subscribed to ${mail.page_name}. Unsubscribe: ${link('unsubscribe')}`,
      ].join('\n\n');
      try {
        await sendMail(
          { url: settings.smtpUrl, from: settings.from },
          {
            to: mail.address,
            subject: mail.subject,
            text,
            headers: { 'List-Unsubscribe': `<${link('unsubscribe')}>`, 'X-Status-Page-Mail': mail.id },
          },
        );
        await tx`update status_page_mails set sent_at = now(), attempts = attempts + 1, last_error = null where id = ${mail.id}`;
        sent++;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const wait = settings.retryBaseMs * 2 ** mail.attempts;
        await tx`update status_page_mails set attempts = attempts + 1, last_error = ${message.slice(0, 500)},
          queued_at = now() + ${`${wait} milliseconds`}::interval where id = ${mail.id}`;
        logger?.warn({ mail: mail.id, attempt: mail.attempts + 1, err: message }, 'status page mail not sent');
        failed++;
      }
    }
  });
  return { sent, failed };
}

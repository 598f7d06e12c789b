import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { HttpError } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import type { RateLimits } from '../http/rate-limit.js';
import { definePage, mountPages, sendPage, TtlCache } from '../pages/index.js';
import type { Deps } from '../storage/deps.js';
import { transaction } from '../storage/postgres.js';
import { serviceSecret } from '../storage/service-secrets.js';
import { buildStatusPage, type StatusPageView } from './data.js';
import { feedAddress, type LinkPurpose, validLinkToken } from './links.js';
import { renderFeed, renderMessage, renderStatusPage, type Theme, themeOf } from './render.js';
import { confirmSubscription, endSubscription, type PageRow, pageSubscription, publishedPage, subscribe } from './repository.js';

/**
 * The public status pages (docs/status-pages.md): `/status/{url}[/…]`, and `/[…]` when the Host is a page's
 * customDomain. Each serves the page, `feed.atom` (its incidents), `subscribe` (a form posting an email: a
 * confirm mail follows) and the links of subscribers' mails (`subscriptions/{id}/confirm|unsubscribe`, each a
 * page with a button that posts, so a mail scanner opening links changes nothing). No script, nothing fetched from
 * elsewhere: the CSS is inline and the only images are SVG drawn on the server.
 */

const LOOKUP_TTL_MS = 5000;
const SUBSCRIBE_RULE = { points: 10, windowSeconds: 3600 };
const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;
/** A stand-in view for pages that do not exist: the default palette. */
const NO_PAGE = { page: { themeColors: null, defaultTheme: 'AUTO' } } as unknown as StatusPageView;

interface Target {
  page: PageRow;
  /** '' on the page's own domain, else /status/{url}. */
  base: string;
}

export function statusPages(deps: Deps, rateLimits: RateLimits): Middleware {
  const lookups = new TtlCache<PageRow | undefined>();
  const views = new TtlCache<StatusPageView>(200);
  const form = koaBody({ json: false, multipart: false, urlencoded: true, formLimit: '4kb', text: false });
  let secret: Promise<Buffer> | undefined;
  const linkSecret = () =>
    (secret ??= serviceSecret(deps.sql, 'status-page-links').catch((err) => {
      secret = undefined;
      throw err;
    }));

  // A page's view is built at most once per STATUS_PAGE_CACHE_SECONDS per API process, however many viewers ask.
  const view = (page: PageRow) =>
    views.get(`${page.id}:${page.updated_at?.getTime() ?? 0}`, deps.config.statusPageCacheSeconds * 1000, () => buildStatusPage(deps, page));

  const message = (
    ctx: Context,
    status: number,
    v: StatusPageView,
    theme: Theme,
    title: string,
    text: string,
    extra: Parameters<typeof renderMessage>[4] = {},
  ) => sendPage(ctx, { status, body: renderMessage(v, theme, title, text, extra), cache: 'no-store' });

  /** The page's view and the theme the viewer asked for (`?theme=`). */
  async function seen(ctx: Context, t: Target) {
    const v = await view(t.page);
    return { v, theme: themeOf(v, ctx.query.theme) };
  }

  async function subscribeForm(ctx: Context, t: Target, next: () => Promise<unknown>) {
    const { v, theme } = await seen(ctx, t);
    if (!ctx.is('application/x-www-form-urlencoded')) throw new HttpError(415, 'Content-Type must be application/x-www-form-urlencoded');
    await form(ctx, next as never);
    const email = String((ctx.request.body as Record<string, unknown> | undefined)?.email ?? '').trim();
    const back = `${t.base}/`;
    if (email.length > 320 || !EMAIL.test(email))
      return message(ctx, 400, v, theme, 'Not an email address', 'Enter the address the updates should go to.', { back });
    // Each address (and each client) may ask a few times an hour: the form cannot be used to flood an inbox.
    const wait =
      (await rateLimits.hit('status-subscribe', `${t.page.id}:${ctx.ip}`, SUBSCRIBE_RULE)) ??
      (await rateLimits.hit('status-subscribe-address', `${t.page.id}:${email.toLowerCase()}`, { points: 3, windowSeconds: 3600 }));
    if (wait) {
      ctx.set('Retry-After', String(wait));
      return message(ctx, 429, v, theme, 'Too many requests', 'Please try again later.', { back });
    }
    await transaction(deps.sql, (tx) => subscribe(tx, t.page.id, [email], false));
    // The same answer whether or not the address was subscribed already: the form tells nobody who is.
    return message(ctx, 200, v, theme, 'Check your inbox', `If ${email} is not subscribed yet, a mail with a link to confirm is on its way.`, { back });
  }

  /** A mail's link: a page with a button that posts (a mail scanner opening links changes nothing), then what it asks. */
  async function link(ctx: Context, t: Target, id: string, purpose: string) {
    const { v, theme } = await seen(ctx, t);
    const back = `${t.base}/`;
    const token = ctx.query.token;
    const sub =
      UUID.test(id) && (purpose === 'confirm' || purpose === 'unsubscribe') ? await pageSubscription(deps.sql, t.page.id, id.toLowerCase()) : undefined;
    if (!sub || !validLinkToken(await linkSecret(), purpose as LinkPurpose, sub.id, token)) {
      return message(ctx, 404, v, theme, 'Link not valid', 'This link is not valid any more (or the subscription has ended).', { back });
    }
    const action = `${t.base}/subscriptions/${sub.id}/${purpose}?token=${encodeURIComponent(String(token))}`;
    if (ctx.method !== 'POST') {
      return purpose === 'confirm'
        ? message(ctx, 200, v, theme, 'Confirm your subscription', `Get mail about incidents and maintenance on ${t.page.data.name}.`, {
            form: { action, button: 'Confirm' },
            back,
          })
        : message(ctx, 200, v, theme, 'Unsubscribe', `Stop mail about ${t.page.data.name}.`, { form: { action, button: 'Unsubscribe' }, back });
    }
    if (purpose === 'confirm') {
      await confirmSubscription(deps.sql, sub.id);
      return message(ctx, 200, v, theme, 'Subscribed', `You will get mail about incidents and maintenance on ${t.page.data.name}.`, { back });
    }
    await endSubscription(deps.sql, sub.id);
    return message(ctx, 200, v, theme, 'Unsubscribed', 'You will get no more mail from this status page.', { back });
  }

  const at = ({ target, base }: { target: PageRow; base: string }): Target => ({ page: target, base });
  return mountPages<PageRow>({
    prefix: 'status',
    slug: /[A-Za-z0-9][A-Za-z0-9-]{0,62}/,
    slugName: 'url',
    lookup: (by) =>
      'slug' in by
        ? lookups.get(`url:${by.slug}`, LOOKUP_TTL_MS, () => publishedPage(deps.sql, { url: by.slug }))
        : lookups.get(`host:${by.host}`, LOOKUP_TTL_MS, () => publishedPage(deps.sql, { domain: by.host })),
    pages: [
      definePage({
        method: 'GET',
        path: '/',
        handler: async (ctx, p) => {
          const t = at(p);
          const { v, theme } = await seen(ctx, t);
          sendPage(ctx, { body: renderStatusPage(v, t.base, theme) });
        },
      }),
      // Links from PUBLIC_URL (or the page's own domain), never from the request's Host: the feed is publicly cached.
      definePage({
        method: 'GET',
        path: '/feed.atom',
        handler: async (ctx, p) =>
          sendPage(ctx, {
            type: 'application/atom+xml; charset=utf-8',
            body: renderFeed(await view(p.target), feedAddress(deps.config.publicUrl!, p.target)),
            cache: 'public, max-age=60',
          }),
      }),
      definePage({ method: 'POST', path: '/subscribe', handler: (ctx, p) => subscribeForm(ctx, at(p), p.next) }),
      definePage({ method: 'GET', path: '/subscriptions/{id}/{purpose}', handler: (ctx, p) => link(ctx, at(p), p.params.id!, p.params.purpose!) }),
      definePage({ method: 'POST', path: '/subscriptions/{id}/{purpose}', handler: (ctx, p) => link(ctx, at(p), p.params.id!, p.params.purpose!) }),
    ],
    missing: async (ctx, found) => {
      if (!found) return message(ctx, 404, NO_PAGE, 'auto', 'Not found', 'There is no status page at this address.');
      const { v, theme } = await seen(ctx, at(found));
      return message(ctx, 404, v, theme, 'Not found', 'There is no such page on this status page.', { back: `${found.base}/` });
    },
  });
}

import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { TtlCache } from '../dashboards/index.js';
import { HttpError } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { Deps } from '../storage/deps.js';
import { transaction } from '../storage/postgres.js';
import { serviceSecret } from '../storage/service-secrets.js';
import { buildStatusPage, type StatusPageView } from './data.js';
import { feedAddress, type LinkPurpose, validLinkToken } from './links.js';
import { renderFeed, renderMessage, renderStatusPage, type Theme, themeOf } from './render.js';
import { type PageRow, publishedPage, subscribe } from './repository.js';

/**
 * The public status pages (docs/status-pages.md): `/status/{url}[/…]`, and `/[…]` when the Host is a page's
 * customDomain. Each serves the page, `feed.atom` (its incidents), `subscribe` (a form posting an email: a
 * confirm mail follows) and the links of subscribers' mails (`subscriptions/{id}/confirm|unsubscribe`, each a
 * page with a button that posts, so a mail scanner opening links changes nothing). No script, nothing fetched from
 * elsewhere: the CSS is inline and the only images are SVG drawn on the server.
 */

const SLUG_PATH = /^\/status\/([A-Za-z0-9][A-Za-z0-9-]{0,62})(\/.*)?$/;
const LINK_PATH = /^\/subscriptions\/([0-9a-fA-F-]{36})\/(confirm|unsubscribe)$/;
const LOOKUP_TTL_MS = 5000;
const SUBSCRIBE_RULE = { points: 10, windowSeconds: 3600 };
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;
/** A stand-in view for pages that do not exist: the default palette. */
const NO_PAGE = { page: { themeColors: null, defaultTheme: 'AUTO' } } as unknown as StatusPageView;

interface Target {
  page: PageRow;
  /** '' on the page's own domain, else /status/{url}. */
  base: string;
  rest: string;
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

  async function target(ctx: Context): Promise<Target | 'missing' | undefined> {
    const m = SLUG_PATH.exec(ctx.path);
    if (m) {
      const url = m[1]!.toLowerCase();
      const page = await lookups.get(`url:${url}`, LOOKUP_TTL_MS, () => publishedPage(deps.sql, { url }));
      return page ? { page, base: `/status/${page.url}`, rest: m[2] || '/' } : 'missing';
    }
    // On a page's own domain only its own paths are its; everything else is the API's.
    if (!(ctx.path === '/' || ctx.path === '/feed.atom' || ctx.path === '/subscribe' || LINK_PATH.test(ctx.path))) return undefined;
    const host = ctx.hostname.toLowerCase();
    if (!host || host.length > 253) return undefined;
    const page = await lookups.get(`host:${host}`, LOOKUP_TTL_MS, () => publishedPage(deps.sql, { domain: host }));
    return page && { page, base: '', rest: ctx.path };
  }

  // A page's view is built at most once per STATUS_PAGE_CACHE_SECONDS per API process, however many viewers ask.
  const view = (page: PageRow) =>
    views.get(`${page.id}:${page.updated_at?.getTime() ?? 0}`, deps.config.statusPageCacheSeconds * 1000, () => buildStatusPage(deps, page));

  function send(ctx: Context, status: number, type: string, body: string, cache = 'no-cache') {
    ctx.status = status;
    ctx.type = type;
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', cache);
    ctx.body = body;
  }
  const message = (
    ctx: Context,
    status: number,
    v: StatusPageView,
    theme: Theme,
    title: string,
    text: string,
    extra: Parameters<typeof renderMessage>[4] = {},
  ) => send(ctx, status, 'text/html; charset=utf-8', renderMessage(v, theme, title, text, extra), 'no-store');

  async function subscribeForm(ctx: Context, t: Target, v: StatusPageView, theme: Theme, next: () => Promise<unknown>) {
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

  async function link(ctx: Context, t: Target, v: StatusPageView, theme: Theme, id: string, purpose: LinkPurpose) {
    const back = `${t.base}/`;
    const token = ctx.query.token;
    const [sub] = UUID.test(id)
      ? await deps.sql<{ id: string; status: string }[]>`select id, status from status_page_subscriptions where id = ${id} and status_page_id = ${t.page.id}`
      : [];
    if (!sub || !validLinkToken(await linkSecret(), purpose, sub.id, token)) {
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
      await deps.sql`update status_page_subscriptions set status = 'VERIFIED', confirmed_at = coalesce(confirmed_at, now()), updated_at = now() where id = ${sub.id}`;
      return message(ctx, 200, v, theme, 'Subscribed', `You will get mail about incidents and maintenance on ${t.page.data.name}.`, { back });
    }
    await deps.sql`delete from status_page_subscriptions where id = ${sub.id}`;
    return message(ctx, 200, v, theme, 'Unsubscribed', 'You will get no more mail from this status page.', { back });
  }

  return async function statusPagesMiddleware(ctx, next) {
    const t = await target(ctx);
    if (t === undefined) return next();
    const get = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (t === 'missing') {
      if (!get) throw new HttpError(405, 'Method Not Allowed', undefined, { Allow: 'GET, HEAD' });
      ctx.state.pageRoute = '/status/{url}';
      return message(ctx, 404, NO_PAGE, 'auto', 'Not found', 'There is no status page at this address.');
    }
    const linkPath = LINK_PATH.exec(t.rest);
    ctx.state.pageRoute = `${t.base ? '/status/{url}' : ''}${linkPath ? `/subscriptions/{id}/${linkPath[2]}` : t.rest}`;
    const v = await view(t.page);
    const theme = themeOf(v, ctx.query.theme);
    if (t.rest === '/subscribe' && ctx.method === 'POST') return subscribeForm(ctx, t, v, theme, next);
    if (linkPath && (get || ctx.method === 'POST')) return link(ctx, t, v, theme, linkPath[1]!.toLowerCase(), linkPath[2] as LinkPurpose);
    if (!get) throw new HttpError(405, 'Method Not Allowed', undefined, { Allow: 'GET, HEAD' });
    if (t.rest === '/') return send(ctx, 200, 'text/html; charset=utf-8', renderStatusPage(v, t.base, theme));
    // Links from PUBLIC_URL (or the page's own domain), never from the request's Host: the feed is publicly cached.
    if (t.rest === '/feed.atom')
      return send(ctx, 200, 'application/atom+xml; charset=utf-8', renderFeed(v, feedAddress(deps.config.publicUrl!, t.page)), 'public, max-age=60');
    return message(ctx, 404, v, theme, 'Not found', 'There is no such page on this status page.', { back: `${t.base}/` });
  };
}

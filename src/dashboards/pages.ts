import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { HttpError } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import type { RateLimits } from '../http/rate-limit.js';
import { staticFiles } from '../http/static-files.js';
import { readResult } from '../ingest/index.js';
import { keptAssetsOf } from '../model/results.js';
import { definePage, mountPages, sendPage, TtlCache } from '../pages/index.js';
import type { Deps } from '../storage/deps.js';
import { cookieName, LOGIN_RULE, matchKey, SESSION_SECONDS, sessionToken, validSession } from './access.js';
import { sanitizeCss } from './css.js';
import { buildDashboardView, type DashboardView, type Status } from './data.js';
import { dashboardByDomain, dashboardByUrl, type PublishedDashboard } from './lookup.js';
import { renderDashboard, renderLogin, renderMessage, renderRun } from './render.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** How long a dashboard's settings are reused before they are read again (a change shows within this). */
const LOOKUP_TTL_MS = 5000;

interface Target {
  dashboard: PublishedDashboard;
  /** Where the page lives: `/dashboards/{customUrl}`, or '' on the dashboard's own domain. */
  base: string;
}

/**
 * One build of a dashboard's data, with what every viewer of it gets: the JSON document serialised once, and
 * the page rendered once per address it is served at (its custom URL, its domain). Rendering cost ~0.4 ms and
 * serialising ~0.2 ms per request for 20 checks; under 500 viewers that was most of each request's cost.
 */
class Built {
  readonly json: string;
  readonly etag: string;
  private readonly pages = new Map<string, string>();

  constructor(
    private readonly dashboard: PublishedDashboard,
    readonly view: DashboardView,
  ) {
    this.json = JSON.stringify(view);
    this.etag = `"${dashboard.id}-${dashboard.updatedAt}-${Date.parse(view.generatedAt)}"`;
  }

  page(base: string): string {
    let html = this.pages.get(base);
    if (html === undefined) {
      html = renderDashboard(this.dashboard.data, this.view, base, sanitizeCss(this.dashboard.data.customCSS));
      this.pages.set(base, html);
    }
    return html;
  }
}

/**
 * The rendered dashboards: `/dashboards/{customUrl}[/…]`, and `/[…]` when the Host is a dashboard's
 * customDomain. Each serves the page, `data.json` (what the page refreshes from, built once per refreshRate),
 * `login` (private dashboards) and `runs/{checkId}/{runId}` (when showCheckRunLinks).
 */
export function dashboardPages(deps: Deps, rateLimits: RateLimits): Middleware {
  const views = new TtlCache<Built>();
  const lookups = new TtlCache<PublishedDashboard | undefined>();
  const assets = staticFiles('/dashboards/assets', {
    'dashboard.css': path.join(here, 'assets/dashboard.css'),
    'dashboard.js': path.join(here, 'assets/dashboard.js'),
  });
  const form = koaBody({ json: false, multipart: false, urlencoded: true, formLimit: '4kb', text: false });

  const view = (d: PublishedDashboard) =>
    views.get(`${d.id}:${d.updatedAt}`, Math.min(d.data.refreshRate, deps.config.dashboardCacheSeconds) * 1000, async () => {
      deps.metrics.dashboardBuilds.inc();
      return new Built(d, await buildDashboardView(deps, d));
    });

  const html = (ctx: Context, status: number, body: string, isPrivate: boolean) =>
    sendPage(ctx, { status, body, cache: isPrivate ? 'private, no-store' : 'no-cache' });

  /** A private dashboard answers only a viewer holding one of its keys (cookie from the login, or `?key=`). */
  async function signedIn(ctx: Context, t: Target): Promise<boolean> {
    if (!t.dashboard.data.isPrivate) return true;
    return validSession(deps.sql, deps.sessionSecret, t.dashboard, ctx.cookies.get(cookieName(t.dashboard)));
  }

  /**
   * Checks a key someone typed or put in the URL. Only wrong keys are throttled (per client address): the
   * right key opens the dashboard even while that address is held back, so someone guessing from a shared
   * address cannot lock its rightful viewers out. Guessing stays pointless: keys carry 192 bits or more.
   */
  async function tryKey(ctx: Context, t: Target, key: string): Promise<'ok' | 'wrong' | number> {
    const throttle = `${t.dashboard.id}:${ctx.ip}`;
    const keyId = key.length <= 256 ? await matchKey(deps.sql, t.dashboard, key) : undefined;
    if (!keyId) {
      const wait = await rateLimits.blocked('dashboard-login', throttle, LOGIN_RULE);
      if (wait) return wait;
      const after = await rateLimits.hit('dashboard-login', throttle, LOGIN_RULE);
      return after ?? 'wrong';
    }
    ctx.cookies.set(cookieName(t.dashboard), await sessionToken(deps.sql, deps.sessionSecret, t.dashboard, keyId), {
      httpOnly: true,
      sameSite: 'lax',
      secure: ctx.protocol === 'https',
      path: t.base || '/',
      maxAge: SESSION_SECONDS * 1000,
      overwrite: true,
    });
    return 'ok';
  }

  function refused(ctx: Context, t: Target, outcome: 'wrong' | number) {
    if (typeof outcome === 'number') {
      ctx.set('Retry-After', String(outcome));
      return html(
        ctx,
        429,
        renderMessage('Too many attempts', `Too many wrong keys from your address. Try again in ${Math.ceil(outcome / 60)} minutes.`),
        true,
      );
    }
    return html(ctx, 401, renderLogin(t.dashboard.data, t.base, 'That key does not open this dashboard.'), true);
  }

  async function page(ctx: Context, t: Target) {
    const key = typeof ctx.query.key === 'string' ? ctx.query.key : undefined;
    if (t.dashboard.data.isPrivate && key !== undefined) {
      const outcome = await tryKey(ctx, t, key);
      if (outcome !== 'ok') return refused(ctx, t, outcome);
      // The key leaves the address bar (and any Referer) once the cookie holds the session.
      ctx.status = 303;
      ctx.redirect(`${t.base}/`);
      return;
    }
    if (!(await signedIn(ctx, t))) return html(ctx, 401, renderLogin(t.dashboard.data, t.base), true);
    html(ctx, 200, (await view(t.dashboard)).page(t.base), t.dashboard.data.isPrivate);
  }

  async function login(ctx: Context, t: Target, next: () => Promise<unknown>) {
    if (!t.dashboard.data.isPrivate) {
      ctx.status = 303;
      ctx.redirect(`${t.base}/`);
      return;
    }
    if (!ctx.is('application/x-www-form-urlencoded')) throw new HttpError(415, 'Content-Type must be application/x-www-form-urlencoded');
    await form(ctx, next as never);
    const key = (ctx.request.body as Record<string, unknown> | undefined)?.key;
    if (typeof key !== 'string' || !key) return html(ctx, 400, renderLogin(t.dashboard.data, t.base, 'Enter a key.'), true);
    const outcome = await tryKey(ctx, t, key);
    if (outcome !== 'ok') return refused(ctx, t, outcome);
    ctx.status = 303;
    ctx.redirect(`${t.base}/`);
  }

  /** A run's page (its status, error and screenshots), or one of its screenshots (a browser run's kept PNGs). */
  async function run(ctx: Context, t: Target, checkId: string, runId: string, screenshot: string | undefined) {
    if (!(await signedIn(ctx, t))) return html(ctx, 401, renderLogin(t.dashboard.data, t.base), true);
    const notFound = () => html(ctx, 404, renderMessage('Not found', 'This dashboard shows no such run.'), t.dashboard.data.isPrivate);
    if (!t.dashboard.data.showCheckRunLinks || !UUID.test(checkId) || !UUID.test(runId)) return notFound();
    const check = (await view(t.dashboard)).view.checks.find((c) => c.id === checkId.toLowerCase());
    if (!check) return notFound();
    const stored = await readResult(deps.store, t.dashboard.accountId, check.id, runId.toLowerCase());
    if (!stored) return notFound();
    const screenshots = keptAssetsOf(stored).filter((a) => a.type === 'screenshot');
    if (screenshot !== undefined) {
      const asset = screenshots.find((a) => a.name === screenshot);
      const blob = asset && (await deps.blobs.open(t.dashboard.accountId, asset.key));
      if (!asset || !blob)
        return html(ctx, 404, renderMessage('Not found', 'This run kept no such screenshot (or it is past its retention).'), t.dashboard.data.isPrivate);
      ctx.status = 200;
      ctx.type = asset.contentType;
      ctx.length = blob.size;
      // A kept file never changes (its key is its content's digest).
      ctx.set('Cache-Control', t.dashboard.data.isPrivate ? 'private, max-age=86400' : 'public, max-age=86400');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = blob.stream;
      return;
    }
    const status: Status = stored.hasFailures || stored.hasErrors ? 'failing' : stored.isDegraded ? 'degraded' : 'passing';
    html(
      ctx,
      200,
      renderRun(
        t.dashboard.data,
        t.base,
        sanitizeCss(t.dashboard.data.customCSS),
        check,
        stored,
        status,
        screenshots.map((a) => a.name),
      ),
      t.dashboard.data.isPrivate,
    );
  }

  async function data(ctx: Context, t: Target) {
    if (!(await signedIn(ctx, t))) throw new HttpError(401, 'This dashboard is private: sign in with one of its keys');
    ctx.set('Cache-Control', t.dashboard.data.isPrivate ? 'private, no-store' : `public, max-age=${Math.min(60, t.dashboard.data.refreshRate)}`);
    const built = await view(t.dashboard);
    // A viewer revalidating the document it has gets a 304 until the next build.
    ctx.set('ETag', built.etag);
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = built.json;
  }

  const home = (ctx: Context, t: Target) => {
    ctx.status = 303;
    ctx.redirect(`${t.base}/`);
  };
  const at = ({ target, base }: { target: PublishedDashboard; base: string }): Target => ({ dashboard: target, base });
  const pages = mountPages<PublishedDashboard>({
    prefix: 'dashboards',
    slug: /[A-Za-z0-9-]{1,63}/,
    slugName: 'customUrl',
    lookup: (by) =>
      'slug' in by
        ? lookups.get(`url:${by.slug}`, LOOKUP_TTL_MS, () => dashboardByUrl(deps.sql, by.slug))
        : lookups.get(`host:${by.host}`, LOOKUP_TTL_MS, () => dashboardByDomain(deps.sql, by.host)),
    pages: [
      definePage({ method: 'GET', path: '/', handler: (ctx, p) => page(ctx, at(p)) }),
      definePage({ method: 'GET', path: '/data.json', handler: (ctx, p) => data(ctx, at(p)) }),
      definePage({ method: 'GET', path: '/login', handler: (ctx, p) => home(ctx, at(p)) }),
      definePage({ method: 'POST', path: '/login', handler: (ctx, p) => login(ctx, at(p), p.next) }),
      definePage({ method: 'GET', path: '/runs/{checkId}/{runId}', handler: (ctx, p) => run(ctx, at(p), p.params.checkId!, p.params.runId!, undefined) }),
      definePage({
        method: 'GET',
        path: '/runs/{checkId}/{runId}/screenshots/{name}',
        handler: (ctx, p) => run(ctx, at(p), p.params.checkId!, p.params.runId!, p.params.name),
      }),
    ],
    missing: (ctx, found) =>
      found
        ? html(ctx, 404, renderMessage('Not found', 'There is no such page on this dashboard.'), found.target.data.isPrivate)
        : html(ctx, 404, renderMessage('Not found', 'There is no dashboard at this address.'), false),
  });

  return async function dashboardPagesMiddleware(ctx, next) {
    if (ctx.path.startsWith('/dashboards/assets/')) return assets(ctx, next);
    return pages(ctx, next);
  };
}

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { Context, Next } from 'koa';
import { HttpError } from '../http/errors.js';

/**
 * The kit of the server-rendered pages (dashboards, status pages, the API reference; docs/architecture.md, the `pages/` row of the folder order):
 * one content security policy, one way to send a page, one template set-up, and pages declared like the API's routes
 * (`definePage`), so the same rules (no SQL in a file that declares them) hold for both.
 */

/**
 * The one policy of every rendered page: their own scripts and styles (and inline styles, which the renderers and a
 * dashboard's custom CSS use), images of their own, data URIs and any https host (a dashboard's logo), their own
 * fetches and form posts, nothing framed, nothing else.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; font-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Sends a rendered page (or a page's document) with the page headers: the policy, no sniffing, no referrer. */
export function sendPage(ctx: Context, page: { status?: number; type?: string; body: string | Buffer; cache?: string }): void {
  ctx.status = page.status ?? 200;
  ctx.type = page.type ?? 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', page.cache ?? 'no-cache');
  ctx.body = page.body;
}

/** The templates of a feature's pages (`views/` beside the module that asks): escaped by default, compiled once. */
export function pageTemplates(moduleUrl: string): Eta {
  return new Eta({ views: path.join(path.dirname(fileURLToPath(moduleUrl)), 'views'), autoEscape: true, cache: true });
}

export type PageMethod = 'GET' | 'POST';

/** One page: its method and path (`{name}` segments), what it answers. HEAD is answered as GET. */
export interface PageRoute<T> {
  method: PageMethod;
  /** Below the mount: `/`, `/feed.atom`, `/subscriptions/{id}/{purpose}`. */
  path: string;
  /** A `{name}` segment takes at most this many characters of letters, digits and `.`, `_`, `-` (default 200). */
  handler: (ctx: Context, page: { target: T; params: Record<string, string>; base: string; next: Next }) => Promise<unknown> | unknown;
}

export const definePage = <T>(route: PageRoute<T>): PageRoute<T> => route;

interface Compiled<T> {
  route: PageRoute<T>;
  pattern: RegExp;
  names: string[];
}

function compile<T>(route: PageRoute<T>): Compiled<T> {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]!);
      return '([A-Za-z0-9._-]{1,200})';
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** What a set of pages answers a request with: the page and its parameters, or why not (no such path, another method). */
function matchPage<T>(compiled: Compiled<T>[], path: string, method: string) {
  const found = compiled.map((c) => ({ c, m: c.pattern.exec(path) })).filter((x) => x.m);
  const wanted = method === 'HEAD' ? 'GET' : method;
  const hit = found.find((x) => x.c.route.method === wanted);
  if (hit) return { route: hit.c.route, params: Object.fromEntries(hit.c.names.map((n, i) => [n, hit.m![i + 1]!])) };
  if (!found.length) return undefined;
  throw new HttpError(405, 'Method Not Allowed', undefined, {
    Allow: [...new Set(found.map((x) => (x.c.route.method === 'GET' ? 'GET, HEAD' : x.c.route.method)))].join(', '),
  });
}

/** Pages at fixed paths of the service (the API reference): the declared ones answer, anything else goes on. */
export function servePages(pages: PageRoute<undefined>[]) {
  const compiled = pages.map(compile);
  return async function pagesMiddleware(ctx: Context, next: Next) {
    const hit = matchPage(compiled, ctx.path, ctx.method);
    if (!hit) return next();
    ctx.state.pageRoute = hit.route.path;
    return hit.route.handler(ctx, { target: undefined, params: hit.params, base: '', next });
  };
}

/**
 * Pages mounted two ways: under `/{prefix}/{slug}` (a dashboard's `/dashboards/{customUrl}`, a status page's
 * `/status/{url}`), and at `/` on a host the feature's own lookup knows (a custom domain). `lookup` finds what a slug or
 * a host names; `missing` answers a slug that names nothing, or a path its target does not have. On a custom domain
 * only the declared paths are the feature's: anything else goes on to the API. A declared path asked with another
 * method is a 405 with Allow.
 */
export function mountPages<T>(mount: {
  prefix: string;
  /** The slug's pattern, and its name in the route a request is counted under (`customUrl`, `url`). */
  slug: RegExp;
  slugName: string;
  lookup: (by: { slug: string } | { host: string }) => Promise<T | undefined>;
  pages: PageRoute<T>[];
  missing: (ctx: Context, found: { target: T; base: string } | undefined) => Promise<unknown> | unknown;
}) {
  const compiled = mount.pages.map(compile);
  const under = new RegExp(`^/${mount.prefix}/(${mount.slug.source})(/.*)?$`);
  const mounted = `/${mount.prefix}/{${mount.slugName}}`;
  return async function mountedPagesMiddleware(ctx: Context, next: Next) {
    let base: string;
    let rest: string;
    let target: T | undefined;
    const m = under.exec(ctx.path);
    if (m) {
      const slug = m[1]!.toLowerCase();
      target = await mount.lookup({ slug });
      if (target === undefined) {
        if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new HttpError(405, 'Method Not Allowed', undefined, { Allow: 'GET, HEAD' });
        ctx.state.pageRoute = mounted;
        return mount.missing(ctx, undefined);
      }
      base = `/${mount.prefix}/${slug}`;
      rest = m[2] || '/';
    } else {
      // On a custom domain only the declared paths are the feature's; everything else is the API's.
      if (!compiled.some((c) => c.pattern.test(ctx.path))) return next();
      const host = ctx.hostname.toLowerCase();
      if (!host || host.length > 253) return next();
      target = await mount.lookup({ host });
      if (target === undefined) return next();
      base = '';
      rest = ctx.path;
    }
    const hit = matchPage(compiled, rest, ctx.method);
    if (!hit) {
      ctx.state.pageRoute = `${base ? mounted : ''}/*`;
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new HttpError(405, 'Method Not Allowed', undefined, { Allow: 'GET, HEAD' });
      return mount.missing(ctx, { target, base });
    }
    ctx.state.pageRoute = `${base ? mounted : ''}${hit.route.path}`;
    return hit.route.handler(ctx, { target, params: hit.params, base, next });
  };
}

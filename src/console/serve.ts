import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';

/** Where `npm run console:build` (vite) writes the console: index.html and hashed assets. */
export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/dist');

/**
 * The console's policy: scripts, styles and connections only from this origin (no inline script, nothing from a
 * CDN); images and media also from blob: (screenshots and videos fetched with the session).
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The policy of one answer: the code editor (CodeMirror) writes its styles into a `<style>` element, allowed by a
 * nonce made for this answer alone and handed to the page in `<meta name="style-nonce">`. Scripts stay own-origin only.
 */
export const consoleCsp = (nonce: string) => CONSOLE_CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'`);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The console's own addresses, each a screen of the single-page app (console/src/screens/index.ts; a test holds the
 * two lists together). Exact: a path of the API or of a page beside it (a check's trigger URL under /checks/…) is
 * never taken for a screen.
 */
export const PAGES =
  /^\/(|sign-in|reset-password|invitations\/accept|checks\/[^/]+(\/results\/[^/]+|\/edit)?|reports|alerts(\/[^/]+)?|maintenance(\/[^/]+)?|groups(\/[^/]+)?|variables(\/[^/]+)?|status-pages(\/[^/]+|\/incidents\/new)?|dashboards|edit\/dashboards\/[^/]+|private-locations|settings(\/(profile|keys|members|audit|account))?|test-sessions\/[^/]+(\/results\/[^/]+)?|accounts\/[^/]+\/test-sessions\/[^/]+)$/;
/** API paths the anchor CLI prints as links: a browser asking for HTML gets the console's screen, API clients keep getting JSON. */
export const LINKS = /^\/(v1\/test-sessions\/[^/]+(\/results\/[^/]+)?|v[12]\/check-sessions\/[^/]+)$/;

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

const wantsHtml = (accept: string) => /text\/html/.test(accept) && !/^application\/json/.test(accept);

/**
 * Hosts the console answers on: PUBLIC_URL's, `localhost` and address literals (the service reached directly). Any
 * other name may be a status page's or dashboard's domain, claimed or not yet proved: there `/` and the rest are
 * theirs or nothing, never a sign-in form under somebody else's name.
 */
export function consoleHost(publicUrl: string | undefined): (hostname: string) => boolean {
  const own = publicUrl ? new URL(publicUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '') : undefined;
  return (hostname) => {
    const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
    return host === own || host === 'localhost' || host.endsWith('.localhost') || isIP(host) !== 0;
  };
}

export function consolePages(config: { publicUrl: string | undefined; publicUrlGiven: boolean }, dist = CONSOLE_DIST): Middleware {
  const onConsoleHost = consoleHost(config.publicUrlGiven ? config.publicUrl : undefined);
  const built = existsSync(path.join(dist, 'index.html'));
  const index = built ? readFileSync(path.join(dist, 'index.html')) : undefined;
  const indexText = index?.toString('utf8');
  // Read once: a fixed set of files, so no path from a request reaches the file system.
  const assets = new Map<string, { body: Buffer; type: string }>();
  if (built && existsSync(path.join(dist, 'assets'))) {
    for (const name of readdirSync(path.join(dist, 'assets'))) {
      const type = TYPES[path.extname(name)];
      if (type) assets.set(`/_console/assets/${name}`, { body: readFileSync(path.join(dist, 'assets', name)), type });
    }
  }
  return async function consoleMiddleware(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const asset = assets.get(ctx.path);
    if (asset) {
      ctx.state.pageRoute = '/_console/assets/*';
      ctx.type = asset.type;
      // Hashed names: a new build is a new name.
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = asset.body;
      return;
    }
    if (!onConsoleHost(ctx.hostname)) return next();
    const page = PAGES.test(ctx.path) || (LINKS.test(ctx.path) && !ctx.get('authorization') && wantsHtml(ctx.get('accept')));
    if (!page) return next();
    // One address for people. Without PUBLIC_URL the service names itself by the address it listens on
    // (`localhost` for all interfaces): its sign-in links, mails and provider callbacks use it, and a browser keeps
    // `127.0.0.1`'s cookies apart from `localhost`'s. A screen asked for by another loopback spelling (the CLI
    // prints its links with the address it was pointed at) moves to that one, where the person is signed in.
    const own = !config.publicUrlGiven && config.publicUrl ? new URL(config.publicUrl) : undefined;
    const asked = ctx.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (own && LOOPBACK_NAMES.has(asked) && LOOPBACK_NAMES.has(own.hostname.replace(/^\[|\]$/g, '')) && asked !== own.hostname.replace(/^\[|\]$/g, '')) {
      // The port the browser used (a forwarded port stays as it is), under the service's own name.
      const port = /:(\d+)$/.exec(ctx.host)?.[1];
      ctx.status = 302;
      ctx.redirect(`${ctx.protocol}://${own.hostname}${port ? `:${port}` : ''}${ctx.url}`);
      return;
    }
    ctx.state.pageRoute = '/(console)';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Vary', 'Accept');
    if (!index) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run `npm run console:build` (npm start does), then restart the service. The API is at /docs.';
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    const nonce = randomBytes(16).toString('base64');
    ctx.set('Content-Security-Policy', consoleCsp(nonce));
    ctx.body = indexText!.replace('<head>', `<head>\n<meta name="style-nonce" content="${nonce}">`);
  };
}

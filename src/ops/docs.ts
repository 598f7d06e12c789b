import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { staticFiles } from '../http/static-files.js';
import { renderReference } from './reference.js';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const here = path.dirname(fileURLToPath(import.meta.url));

/** Pages served as HTML allow only their own scripts; inline styles are what the renderers use. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The reference page: its own stylesheet and one small script (opening the operation an address names), nothing inline. */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** /docs/try: Swagger UI over /openapi.json, one tag at a time (the whole document at once took it about 8 s). */
const TRY_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Monitoring Management API: try requests</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/**
 * GET /docs: the API reference, rendered once from the document (`ops/reference.ts`) and sent compressed with an
 * ETag; GET /docs/try: the interactive Swagger UI (from the npm registry, nothing fetched elsewhere).
 */
export function apiReference(getDocument: () => unknown): Middleware {
  const assets = staticFiles('/docs/assets', {
    'swagger-ui.css': path.join(swaggerDir, 'swagger-ui.css'),
    'swagger-ui-bundle.js': path.join(swaggerDir, 'swagger-ui-bundle.js'),
    'favicon-32x32.png': path.join(swaggerDir, 'favicon-32x32.png'),
    'init.js': path.join(here, 'assets/docs-init.js'),
    'reference.css': path.join(here, 'assets/reference.css'),
    'reference.js': path.join(here, 'assets/reference.js'),
  });
  let page: { html: string; etag: string } | undefined;
  const reference = () => {
    if (!page) {
      const html = renderReference(getDocument());
      page = { html, etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"` };
    }
    return page;
  };
  return async function apiReferenceMiddleware(ctx, next) {
    const read = ctx.method === 'GET' || ctx.method === 'HEAD';
    if ((ctx.path === '/docs' || ctx.path === '/docs/') && read) {
      const { html, etag } = reference();
      ctx.state.pageRoute = '/docs';
      ctx.set('Content-Security-Policy', REFERENCE_CSP);
      ctx.set('Cache-Control', 'no-cache');
      ctx.set('ETag', etag);
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (ctx.get('if-none-match') === etag) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = html;
      return;
    }
    if ((ctx.path === '/docs/try' || ctx.path === '/docs/try/') && read) {
      ctx.state.pageRoute = '/docs/try';
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.body = TRY_PAGE;
      return;
    }
    return assets(ctx, next);
  };
}

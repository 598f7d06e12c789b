import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { staticFiles } from '../http/static-files.js';
import { definePage, sendPage, servePages } from '../pages/index.js';
import { renderReference } from './reference.js';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const here = path.dirname(fileURLToPath(import.meta.url));

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
  const reference_ = definePage<undefined>({
    method: 'GET',
    path: '/docs',
    handler: (ctx) => {
      const { html, etag } = reference();
      ctx.set('ETag', etag);
      if (ctx.get('if-none-match') === etag) {
        ctx.status = 304;
        return;
      }
      sendPage(ctx, { body: html });
    },
  });
  const pages = servePages([
    reference_,
    { ...reference_, path: '/docs/' },
    definePage<undefined>({ method: 'GET', path: '/docs/try', handler: (ctx) => sendPage(ctx, { body: TRY_PAGE }) }),
    definePage<undefined>({ method: 'GET', path: '/docs/try/', handler: (ctx) => sendPage(ctx, { body: TRY_PAGE }) }),
  ]);
  return async function apiReferenceMiddleware(ctx, next) {
    return pages(ctx, () => assets(ctx, next));
  };
}

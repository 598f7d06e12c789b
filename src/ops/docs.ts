import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { staticFiles } from '../http/static-files.js';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const here = path.dirname(fileURLToPath(import.meta.url));

/** Pages served as HTML allow only their own scripts; inline styles are what the renderers use. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Monitoring Management API reference</title>
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

/** GET /docs: the interactive API reference (Swagger UI from the npm registry, nothing fetched elsewhere). */
export function apiReference(): Middleware {
  const assets = staticFiles('/docs/assets', {
    'swagger-ui.css': path.join(swaggerDir, 'swagger-ui.css'),
    'swagger-ui-bundle.js': path.join(swaggerDir, 'swagger-ui-bundle.js'),
    'favicon-32x32.png': path.join(swaggerDir, 'favicon-32x32.png'),
    'init.js': path.join(here, 'assets/docs-init.js'),
  });
  return async function apiReferenceMiddleware(ctx, next) {
    if ((ctx.path === '/docs' || ctx.path === '/docs/') && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.state.pageRoute = '/docs';
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.body = PAGE;
      return;
    }
    return assets(ctx, next);
  };
}

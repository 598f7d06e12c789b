import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * Serves a fixed set of files under `prefix` (name → absolute path), read once at start: no path from a
 * request ever reaches the file system. Cached by browsers for a day.
 */
export function staticFiles(prefix: string, files: Record<string, string>): Middleware {
  const served = new Map(
    Object.entries(files).map(([name, file]) => {
      const type = TYPES[path.extname(file)];
      if (!type) throw new Error(`staticFiles: no content type for ${file}`);
      return [`${prefix}/${name}`, { body: readFileSync(file), type }];
    }),
  );
  return async function staticFilesMiddleware(ctx, next) {
    const file = ctx.method === 'GET' || ctx.method === 'HEAD' ? served.get(ctx.path) : undefined;
    if (!file) return next();
    ctx.state.pageRoute = `${prefix}/*`;
    ctx.type = file.type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = file.body;
  };
}

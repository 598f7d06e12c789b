import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';

/** One route as the router registers it: its path (`/v1/checks/:id`), method, name and middleware chain. */
export interface RouteEntry {
  path: string;
  method: string;
  name: string;
  chain: Middleware[];
}

/** A segment that is not plain text (a parameter, a wildcard, a group) may match any text: it is tried for every value. */
const isParam = (segment: string) => /[:*{}()?+]/.test(segment);
/** The first two segments of a path, lower-cased (routes match in any letter case), or undefined if it has fewer. */
function firstTwo(path: string): [string, string] | undefined {
  const second = path.indexOf('/', 1);
  if (second < 0) return undefined;
  const third = path.indexOf('/', second + 1);
  const a = path.slice(1, second).toLowerCase();
  const b = path.slice(second + 1, third < 0 ? undefined : third).toLowerCase();
  return a && b ? [a, b] : undefined;
}

/**
 * The routes, found by the first two segments of the request's path before any pattern is tried. @koa/router tests
 * every route's pattern on every request, in order (about 200 here: a tenth of a read's CPU); here a request tries
 * only the routes whose first two segments can match its own: those literally equal, or a parameter. Within that
 * set the order is the registration order, so the route that answers is the one the whole router would pick. A path
 * with fewer than two segments, an empty one among them (a trailing slash), or a first segment no route has, goes to
 * the whole router. Each router answers 405 and OPTIONS for what it matched, as the whole one does.
 */
export function dispatchRoutes(entries: RouteEntry[]): { router: Router; middleware: Middleware } {
  const build = (subset: RouteEntry[]) => {
    const router = new Router();
    for (const e of subset) router.register(e.path, [e.method], e.chain, { name: e.name });
    return compose([router.routes() as Middleware, router.allowedMethods() as Middleware]);
  };
  const whole = new Router();
  for (const e of entries) whole.register(e.path, [e.method], e.chain, { name: e.name });
  const wholeMiddleware = compose([whole.routes() as Middleware, whole.allowedMethods() as Middleware]);

  const segments = entries.map((e) => {
    const [, a = '', b = ''] = e.path.split('/');
    return { entry: e, a: isParam(a) ? null : a.toLowerCase(), b: isParam(b) ? null : b.toLowerCase() };
  });
  /** By first segment: a router per literal second segment, and one for any other second segment. */
  const byFirst = new Map<string, { bySecond: Map<string, Middleware>; other: Middleware }>();
  for (const a of new Set(segments.flatMap((s) => (s.a === null ? [] : [s.a])))) {
    const sameFirst = segments.filter((s) => s.a === null || s.a === a);
    const bySecond = new Map<string, Middleware>();
    for (const b of new Set(sameFirst.flatMap((s) => (s.b === null ? [] : [s.b])))) {
      bySecond.set(b, build(sameFirst.filter((s) => s.b === null || s.b === b).map((s) => s.entry)));
    }
    byFirst.set(a, { bySecond, other: build(sameFirst.filter((s) => s.b === null).map((s) => s.entry)) });
  }

  const middleware: Middleware = (ctx, next) => {
    const key = firstTwo(ctx.path);
    const first = key && byFirst.get(key[0]);
    if (!key || !first) return wholeMiddleware(ctx, next);
    return (first.bySecond.get(key[1]) ?? first.other)(ctx, next);
  };
  return { router: whole, middleware };
}

import { OptionalKind, type TObject } from '@sinclair/typebox';
import type { Principal } from '../model/accounts.js';
import { notFound } from './errors.js';
import type { AnyRoute, Method, Reply } from './route.js';
import { compileValidator, validationError } from './validation.js';

/** A request's parts as they arrive: path and query values as text, the body parsed (or absent). */
export interface RawInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
  /** Whether the request carried a body at all. */
  hasBody: boolean;
  /** The body was parsed from a JSON text with no escape that can make U+0000 or a lone surrogate (body.ts): its strings need no check for them. */
  plainText?: boolean;
}

export interface RouteInput {
  params: unknown;
  query: unknown;
  headers: unknown;
  body: unknown;
}

/**
 * A route's validators, compiled once: what turns a request's parts into its handler's input (or one 400
 * naming each field). The HTTP router and in-process callers (a project deploy) go through the same checks.
 */
export function compileRouteInput(route: AnyRoute): { headerNames: string[]; parse(raw: RawInput): RouteInput } {
  const { params, query, body, headers } = route.schema;
  const headerNames = headers ? Object.keys((headers as TObject).properties) : [];
  const checkHeaders = headers && compileValidator('header', headers, { strings: true });
  const checkParams = params && compileValidator('path', params, { strings: true });
  // Integer path values in their one canonical spelling only: `05` or `+5` is not the id 5 (a 400, as any malformed id).
  const integerParams = params
    ? Object.entries((params as TObject).properties)
        .filter(([, schema]) => (schema as { type?: unknown }).type === 'integer')
        .map(([name]) => name)
    : [];
  const checkQuery = query && compileValidator('query', query, { strings: true });
  const checkBody = body && !route.rawBody ? compileValidator('body', body) : undefined;
  // A body schema marked optional (Type.Optional) may be left out entirely.
  const bodyOptional = body !== undefined && OptionalKind in body;
  return {
    headerNames,
    parse(raw) {
      // A path value no stored id can hold (NUL cannot be stored) names nothing: 404, as an unknown id would.
      if (Object.values(raw.params).some((v) => v.includes('\u0000'))) throw notFound();
      const spelled = integerParams.filter((name) => /^[+-]?0\d|^\+/.test(raw.params[name] ?? ''));
      if (spelled.length) {
        throw validationError(
          spelled.map((name) => ({ field: `path.${name}`, rule: 'type', message: 'must be an integer written without a sign or leading zeros' })),
        );
      }
      const input: RouteInput = {
        params: checkParams ? checkParams({ ...raw.params }) : {},
        query: checkQuery ? checkQuery(raw.query) : {},
        body: route.rawBody ? raw.body : undefined,
        headers: checkHeaders ? checkHeaders(raw.headers) : {},
      };
      if (checkBody && (raw.hasBody || !bodyOptional)) input.body = checkBody(raw.body, raw.plainText === true);
      return input;
    },
  };
}

/** Fills a path template's `{name}` segments. */
function pathOf(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? `{${name}}`);
}

export interface CallInput {
  params?: Record<string, string | number>;
  query?: Record<string, string | boolean | number>;
  body?: unknown;
}

/**
 * Calls routes in-process as a principal, through the same validation as over HTTP: a feature that writes
 * other features' resources (a project deploy) gets exactly their rules, defaults and errors without
 * knowing their tables.
 */
export class RouteCaller {
  private readonly byKey = new Map<string, { route: AnyRoute; input: ReturnType<typeof compileRouteInput> }>();

  constructor(routes: AnyRoute[], wanted?: ReadonlyArray<readonly [Method, string]>) {
    const keep = wanted && new Set(wanted.map(([m, p]) => `${m} ${p}`));
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (keep && !keep.has(key)) continue;
      this.byKey.set(key, { route, input: compileRouteInput(route) });
    }
  }

  async call(principal: Principal, method: Method, path: string, call: CallInput = {}): Promise<Reply> {
    const entry = this.byKey.get(`${method} ${path}`);
    if (!entry) throw new Error(`no route ${method} ${path}`);
    const params = Object.fromEntries(Object.entries(call.params ?? {}).map(([k, v]) => [k, String(v)]));
    const query = Object.fromEntries(Object.entries(call.query ?? {}).map(([k, v]) => [k, String(v)]));
    const input = entry.input.parse({
      params,
      query,
      headers: {},
      // Validation fills defaults into the body it checks: the caller's object stays as it was.
      body: call.body === undefined ? undefined : structuredClone(call.body),
      hasBody: call.body !== undefined,
    });
    const context = {
      requestId: `in-process ${method} ${pathOf(path, params)}`,
      signal: new AbortController().signal,
      method,
      path: pathOf(path, params),
      cookie: () => undefined,
      client: { address: 'in-process', userAgent: '', secure: false, origin: '' },
    };
    return entry.route.handler({ ...(input as object), principal, context } as unknown as Parameters<AnyRoute['handler']>[0]);
  }
}

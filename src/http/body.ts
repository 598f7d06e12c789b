import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import zlib from 'node:zlib';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { bodyParseError, HttpError } from './errors.js';
import { RiskyEscapes, Utf8Check } from './utf8-check.js';

const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPES = ['application/json'];
/** Deeper than any documented body; every recursive walk after parsing (validation, text checks, storage) stays far from the stack limit. */
export const MAX_BODY_DEPTH = 64;

/**
 * Follows the body's bytes (after content decoding) through a strict UTF-8 check while koa-body reads
 * them: its decoder would turn invalid sequences (0xff, overlong forms, encoded surrogates) into U+FFFD and
 * store them silently. `wellFormed` answers whether every byte so far was valid UTF-8; `plain`, whether the text
 * held no escape that could make U+0000 or a lone surrogate (RiskyEscapes), so that validation need not walk the
 * parsed body's strings for them. A compressed body is inflated here beside koa-body's own inflating: `settled`
 * resolves once this copy has been inflated to its end (koa-body may finish first), and both answers are read after it.
 */
function followBytes(req: IncomingMessage): { wellFormed: () => boolean; plain: () => boolean; settled: Promise<void> } {
  const check = new Utf8Check();
  const escapes = new RiskyEscapes();
  const feed = (chunk: Buffer) => {
    check.feed(chunk);
    escapes.feed(chunk);
  };
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  const inflater = encoding === 'gzip' || encoding === 'deflate' ? zlib.createUnzip() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  let settled = Promise.resolve();
  let whole = true;
  if (inflater) {
    // koa-body inflates the same bytes; a body that does not inflate fails there with its own 400.
    settled = new Promise((resolve) => {
      finished(inflater, (err) => {
        if (err) whole = false;
        resolve();
      });
    });
    inflater.on('error', () => {});
    inflater.on('data', feed);
    req.on('data', (chunk: Buffer) => inflater.write(chunk));
    req.once('end', () => inflater.end());
  } else {
    req.on('data', feed);
  }
  return { wellFormed: () => check.end(), plain: () => whole && !escapes.found(), settled };
}

/** Set on a request whose JSON body's text had no escape that can make U+0000 or a lone surrogate (`followBytes`). */
export const PLAIN_BODY_TEXT = 'plainBodyText';

/**
 * JSON bodies through koa-body, strictly: only UTF-8 (another charset is a 415), every byte valid UTF-8
 * (400 otherwise), at most `limitBytes` (413), or the larger limit `larger` gives a path (project deploys). Other content types are left unparsed; routes that take a
 * body answer them 415.
 */
/** A path's own body limit, and what is checked before its body is read (route.ts: bodyLimitBytes, beforeBody). */
export interface LargerBody {
  limitBytes: number;
  beforeBody?: (headers: Readonly<Record<string, string | string[] | undefined>>) => Promise<void>;
}

export function jsonBody(limitBytes: number, larger: ReadonlyMap<string, number | LargerBody> = new Map()): Middleware {
  const parser = (limit: number) =>
    koaBody({
      json: true,
      jsonStrict: true,
      jsonLimit: limit,
      urlencoded: false,
      text: false,
      multipart: false,
      patchNode: false,
      onError: (err) => {
        throw bodyParseError(err);
      },
    });
  const standard = parser(limitBytes);
  const byPath = new Map(
    [...larger].map(([path, l]) => {
      const own = typeof l === 'number' ? { limitBytes: l } : l;
      return [path, { parse: parser(own.limitBytes), before: own.beforeBody }] as const;
    }),
  );
  return async function jsonBodyMiddleware(ctx, next) {
    const own = byPath.get(ctx.path);
    const parse = own?.parse ?? standard;
    if (!PARSED_METHODS.has(ctx.method) || !ctx.is(JSON_TYPES)) return next();
    if (own?.before) await own.before(ctx.headers);
    const charset = ctx.request.charset;
    if (charset && !/^utf-?8$/i.test(charset)) throw new HttpError(415, `Unsupported charset ${charset}: send UTF-8 JSON`);
    const { wellFormed, plain, settled } = followBytes(ctx.req);
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      if (!wellFormed()) throw invalidUtf8();
      throw err;
    }
    // The whole body was read: a compressed one's own copy is inflated to its end before it is judged.
    await settled;
    if (!wellFormed()) throw invalidUtf8();
    if (plain()) ctx.state[PLAIN_BODY_TEXT] = true;
    if (deeperThan(ctx.request.body, MAX_BODY_DEPTH)) {
      const message = `must not nest arrays and objects more than ${MAX_BODY_DEPTH} levels deep`;
      throw new HttpError(400, `The body ${message}`, { errors: [{ field: 'body', rule: 'depth', message }] });
    }
    await next();
  };
}

function invalidUtf8(): HttpError {
  const message = 'The body is not valid UTF-8';
  return new HttpError(400, message, { errors: [{ field: 'body', rule: 'encoding', message: 'must be valid UTF-8' }] });
}

/**
 * Whether arrays and objects nest more than `limit` levels. Recursive, but never deeper than `limit` + 1 calls
 * (a deeper body answers true there), and it allocates nothing: the walk it replaced kept a pair on a stack for every
 * value, a large share of a 1,000-result batch's garbage (bench/README.md, "Ingest: where the main thread's time goes").
 */
function deeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeperThan(value[i], limit - 1)) return true;
    return false;
  }
  for (const key in value) if (Object.hasOwn(value, key) && deeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

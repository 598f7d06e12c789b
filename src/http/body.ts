import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import bourne from '@hapi/bourne';
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { bodyParseError, HttpError } from './errors.js';
import { hasRiskyEscape } from './risky-escapes.js';

const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPES = ['application/json'];
/** Deeper than any documented body; every recursive walk after parsing (validation, text checks, storage) stays far from the stack limit. */
export const MAX_BODY_DEPTH = 64;

/** Set on a request whose JSON body's text had no escape that can make U+0000 or a lone surrogate (hasRiskyEscape). */
export const PLAIN_BODY_TEXT = 'plainBodyText';

/** A path's own body limit, and what is checked before its body is read (route.ts: bodyLimitBytes, beforeBody). */
export interface LargerBody {
  limitBytes: number;
  beforeBody?: (headers: Readonly<Record<string, string | string[] | undefined>>) => Promise<void>;
}

/** The request's bytes as sent, or inflated from the content coding it names (gzip, deflate, br); another is a 415. */
function decoded(req: IncomingMessage): Readable {
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding === 'identity' || encoding === '') return req;
  let inflater: zlib.Gunzip | zlib.BrotliDecompress;
  if (encoding === 'gzip' || encoding === 'deflate') inflater = zlib.createUnzip();
  else if (encoding === 'br') inflater = zlib.createBrotliDecompress();
  else throw new HttpError(415, `Unsupported Content-Encoding ${encoding}: send identity, gzip, deflate or br`);
  // A pipe does not pass the request's end on when the client goes away mid-body, and the read listens to the
  // inflater alone: without this it would wait for the rest forever.
  req.once('close', () => {
    if (!req.complete) inflater.destroy(new Error('the request was aborted'));
  });
  // raw-body listens for the inflater's errors while it reads; one after it (the request aborted once its 413 was
  // decided) has nobody left to tell, and an error event nobody listens to would end the process.
  inflater.on('error', () => {});
  return req.pipe(inflater);
}

/** The bytes without a leading UTF-8 byte order mark, which JSON text may carry (and koa-body's decoder dropped). */
function withoutBom(bytes: Buffer): Buffer {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

/** Whether the first byte that is not JSON whitespace opens an object or an array (the strict JSON this API takes). */
function opensObjectOrArray(bytes: Buffer): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === 0x7b || b === 0x5b;
  }
  return false;
}

/**
 * JSON bodies, strictly: only UTF-8 (another charset is a 415), every byte valid UTF-8 (400 otherwise), an object or
 * an array, no `__proto__` key (@hapi/bourne), at most `limitBytes` after inflating (413), or the larger limit
 * `larger` gives a path (project deploys). Other content types are left unparsed; routes that take a body answer
 * them 415.
 *
 * The body is read as bytes (raw-body, as koa-body reads it), inflated once, checked whole (UTF-8 by simdutf, the
 * risky escapes by a native search) and made text once. koa-body decoded each chunk into a string and joined them,
 * and the bytes were followed beside it chunk by chunk for the checks, a compressed body inflated a second time for
 * them. What a large body costs stays about the same: its text is one large string, fresh memory V8 maps for it, and
 * touching those pages costs more than the copy (koa-body paid it when its strict test flattened the joined text; this
 * reader pays it in toString; bench/README.md, "Ingest: the body read as bytes").
 */
export function jsonBody(limitBytes: number, larger: ReadonlyMap<string, number | LargerBody> = new Map()): Middleware {
  const byPath = new Map([...larger].map(([path, l]) => [path, typeof l === 'number' ? { limitBytes: l } : l] as const));
  return async function jsonBodyMiddleware(ctx, next) {
    const own = byPath.get(ctx.path);
    if (!PARSED_METHODS.has(ctx.method) || !ctx.is(JSON_TYPES)) return next();
    if (own?.beforeBody) await own.beforeBody(ctx.headers);
    const charset = ctx.request.charset;
    if (charset && !/^utf-?8$/i.test(charset)) throw new HttpError(415, `Unsupported charset ${charset}: send UTF-8 JSON`);
    const stream = decoded(ctx.req);
    const length = stream === ctx.req ? ctx.request.length : undefined;
    let bytes: Buffer;
    try {
      bytes = await getRawBody(stream, { limit: own?.limitBytes ?? limitBytes, length });
    } catch (err) {
      throw bodyParseError(err);
    }
    if (!isUtf8(bytes)) throw invalidUtf8();
    ctx.request.body = parseStrict(withoutBom(bytes)) as typeof ctx.request.body;
    if (!hasRiskyEscape(bytes)) ctx.state[PLAIN_BODY_TEXT] = true;
    if (deeperThan(ctx.request.body, MAX_BODY_DEPTH)) {
      const message = `must not nest arrays and objects more than ${MAX_BODY_DEPTH} levels deep`;
      throw new HttpError(400, `The body ${message}`, { errors: [{ field: 'body', rule: 'depth', message }] });
    }
    await next();
  };
}

/** The body's value: `{}` for no bytes, else an object or an array without a `__proto__` key; a 400 otherwise. */
function parseStrict(bytes: Buffer): unknown {
  if (bytes.length === 0) return {};
  if (!opensObjectOrArray(bytes)) throw bodyParseError(new SyntaxError('only an object or an array'));
  try {
    return bourne.parse(bytes.toString('utf8'), { protoAction: 'error' });
  } catch (err) {
    throw bodyParseError(err);
  }
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

import { addAbortSignal, pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { type Dispatcher, request } from 'undici';

/**
 * One HTTP call of an API or URL check, made with undici's `request` (its plain streams and objects) with the rules of
 * WHATWG `fetch`, which API checks used before: the same request headers (`fetch`'s `Headers`: lower-case names, a
 * name given twice joined, no `Host`; its defaults), redirects (301, 302, 303, 307 and 308 only; at most 20; a POST
 * after a 301 or 302, and anything but GET or HEAD after a 303, becomes a GET without its body or its `content-*`
 * headers; `authorization`, `proxy-authorization` and `cookie` dropped on the way to another origin) and body decoding
 * (gzip, deflate with or without its zlib wrapper, br, zstd, in the order the response lists them, leniently: a body
 * cut short gives what it had). `fetch` built a web stream, a `Headers`, a `Request` and a `Response` for each call:
 * about 0.17 ms of CPU a call on this machine, a tenth to a fifth of a scheduled run (docs/performance.md). Kept
 * different on purpose (docs/runners.md, "API"): the ports browsers block (6000, 6667, …) can be checked; a repeated
 * `set-cookie` is kept whole; a URL's credentials are not repeated in the error; a 421 is not asked again.
 */

export interface HttpCall {
  method: string;
  /** The request's own headers (the check's, the run's); `fetch`'s defaults are added where the check has none. */
  headers: Record<string, string>;
  body?: string;
  redirect: 'follow' | 'manual';
  signal: AbortSignal;
  dispatcher: Dispatcher;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Lower-case names in order; a repeated header's values joined by ", ". */
  headers: Record<string, string>;
  /** The decoded body (empty for HEAD, 101, 204, 205 and 304 answers). */
  body: AsyncIterable<Uint8Array>;
}

/** The body of an answer that has none. */
const NOTHING: AsyncIterable<Uint8Array> = { async *[Symbol.asyncIterator]() {} };
/** zstd's decoder, where this Node has it (22.15 and later; fetch decodes zstd only there too). */
const zstd = zlib as unknown as {
  createZstdDecompress?: (options: { flush: number; finishFlush: number }) => Transform;
  constants: { ZSTD_e_continue?: number; ZSTD_e_end?: number };
};
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Answers that have no body whatever they declare. */
const NO_BODY = new Set([101, 204, 205, 304]);
const MAX_REDIRECTS = 20;
const MAX_CODINGS = 5;
/** The request headers that go with a body: dropped when a redirect turns the request into a GET. */
const BODY_HEADERS = new Set(['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length']);
/** Dropped on the way to another origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
/** Request headers that make `fetch` ask caches not to answer from store. */
const CONDITIONAL = ['if-modified-since', 'if-none-match', 'if-unmodified-since', 'if-match', 'if-range'];
/** Methods `fetch` refuses to send. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** A failure of the call itself (as `fetch` would have failed it): no answer to judge. */
export class HttpCallError extends Error {}

/**
 * The request's headers as `fetch`'s `Headers` held them: names in lower case, values trimmed, a name given twice (in
 * any letter case: the run's default `user-agent` and the check's own `User-Agent`, say) once with its values joined by
 * ", "; `host` left out (fetch never sent a check's own). Then `fetch`'s defaults where the check has none: `accept`,
 * `accept-language`, and `content-type` for a text body.
 */
function requestHeaders(headers: Record<string, string>, body: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (key === 'host') continue;
    const value = raw.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  }
  out.accept ??= '*/*';
  out['accept-language'] ??= '*';
  if (body !== undefined) out['content-type'] ??= 'text/plain;charset=UTF-8';
  return out;
}

/** What `fetch` adds on each hop: `sec-fetch-mode`, no-cache for a conditional request, the encodings it decodes. */
function hopHeaders(headers: Record<string, string>, url: URL): Record<string, string> {
  const out: Record<string, string> = { ...headers, 'sec-fetch-mode': 'cors' };
  if (CONDITIONAL.some((name) => name in out)) {
    out.pragma ??= 'no-cache';
    out['cache-control'] ??= 'no-cache';
  }
  if ('range' in out) out['accept-encoding'] = out['accept-encoding'] === undefined ? 'identity' : `${out['accept-encoding']}, identity`;
  else out['accept-encoding'] ??= url.protocol === 'https:' ? 'br, gzip, deflate' : 'gzip, deflate';
  return out;
}

const without = (headers: Record<string, string>, names: Set<string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !names.has(k)));

/** A header's value as one string: a repeated header's values joined by ", " (as `fetch`'s `Headers.get`). */
const joined = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : v);

/** Where a redirect goes, as `fetch` reads its `Location` (null: no location, the answer is the response). */
function locationOf(raw: string | undefined, current: URL): URL | null {
  if (raw === undefined) return null;
  // A location sent as UTF-8 bytes (read as Latin-1) is taken as UTF-8, as browsers and fetch do.
  const text = /[\u0080-\uffff]/.test(raw) ? Buffer.from(raw, 'latin1').toString('utf8') : raw;
  let next: URL;
  try {
    next = new URL(text, current);
  } catch {
    throw new HttpCallError(`The redirect's location is not a URL: ${raw}`);
  }
  if (!next.hash && current.hash) next.hash = current.hash;
  return next;
}

/** The call, following redirects per `call.redirect`. Rejects with the network's error or an HttpCallError. */
export async function httpCall(url: URL, call: HttpCall): Promise<HttpAnswer> {
  if (url.username || url.password) throw new HttpCallError('Request cannot be constructed from a URL that includes credentials');
  if (FORBIDDEN_METHODS.has(call.method.toUpperCase())) throw new HttpCallError(`'${call.method}' HTTP method is unsupported.`);
  let current = url;
  let method = call.method;
  let body = call.body === '' ? undefined : call.body;
  let headers = requestHeaders(call.headers, body);
  for (let redirects = 0; ; redirects++) {
    const res = await request(current, {
      method: method as Dispatcher.HttpMethod,
      headers: hopHeaders(headers, current),
      body,
      signal: call.signal,
      dispatcher: call.dispatcher,
    });
    const location = call.redirect === 'follow' && REDIRECTS.has(res.statusCode) ? locationOf(joined(res.headers.location), current) : null;
    if (!location) return answer(res, method, call.signal);
    // The redirect's own body is not read: its connection goes (fetch closes it too).
    discard(res.body);
    if (location.protocol !== 'http:' && location.protocol !== 'https:') throw new HttpCallError('URL scheme must be a HTTP(S) scheme');
    if (redirects === MAX_REDIRECTS) throw new HttpCallError('redirect count exceeded');
    if (location.username || location.password) throw new HttpCallError('cross origin not allowed for request mode "cors"');
    if (((res.statusCode === 301 || res.statusCode === 302) && method === 'POST') || (res.statusCode === 303 && method !== 'GET' && method !== 'HEAD')) {
      method = 'GET';
      body = undefined;
      headers = without(headers, BODY_HEADERS);
    }
    if (location.origin !== current.origin) headers = without(headers, CREDENTIAL_HEADERS);
    current = location;
  }
}

/** A body not to be read: destroyed, the abort that makes in undici heard and let go. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

function answer(res: Dispatcher.ResponseData, method: string, signal: AbortSignal): HttpAnswer {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(res.headers).sort()) {
    const value = joined(res.headers[name]);
    if (value !== undefined) headers[name] = value;
  }
  if (method === 'HEAD' || NO_BODY.has(res.statusCode)) {
    discard(res.body);
    return { status: res.statusCode, statusText: res.statusText ?? '', headers, body: NOTHING };
  }
  return { status: res.statusCode, statusText: res.statusText ?? '', headers, body: decoded(res.body, headers['content-encoding'], signal) };
}

/** The body through its decoders (the last coding listed is undone first); an unknown coding leaves it as it came. */
function decoded(body: Readable, encoding: string | undefined, signal: AbortSignal): AsyncIterable<Uint8Array> {
  const codings = encoding ? encoding.toLowerCase().split(',') : [];
  if (codings.length > MAX_CODINGS) {
    discard(body);
    throw new HttpCallError(`too many content-encodings in response: ${codings.length}, maximum allowed is ${MAX_CODINGS}`);
  }
  const decoders: Transform[] = [];
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!.trim();
    const decoder =
      coding === 'gzip' || coding === 'x-gzip'
        ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
        : coding === 'deflate'
          ? new Inflate()
          : coding === 'br'
            ? zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
            : coding === 'zstd' && zstd.createZstdDecompress
              ? zstd.createZstdDecompress({ flush: zstd.constants.ZSTD_e_continue!, finishFlush: zstd.constants.ZSTD_e_end! })
              : undefined;
    if (!decoder) {
      for (const d of decoders) d.destroy();
      return body;
    }
    decoders.push(decoder);
  }
  if (!decoders.length) return body;
  // Through a pipeline: an error on either side ends both, and a reader that stops early destroys the response too.
  // The run's deadline ends the decoders too (undici stops listening to it once the response's own stream is done).
  return addAbortSignal(signal, pipeline([body, ...decoders], () => {}) as Transform);
}

/**
 * `deflate` as servers send it: with its zlib wrapper (RFC 1950) or without (raw RFC 1951, which some servers send
 * under that name), told apart by the first byte, as browsers and `fetch` do.
 */
class Inflate extends Transform {
  private inner?: zlib.Inflate | zlib.InflateRaw;
  /** The inner stream ends by itself where its data does, before any bytes after it (which are let go, as fetch did). */
  private innerEnded = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.inner) {
      if (chunk.length === 0) {
        done();
        return;
      }
      const options = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
      this.inner = (chunk[0]! & 0x0f) === 0x08 ? zlib.createInflate(options) : zlib.createInflateRaw(options);
      this.inner.on('data', (data: Buffer) => this.push(data));
      this.inner.once('end', () => (this.innerEnded = true));
      this.inner.on('error', (err) => this.destroy(err));
    }
    if (this.innerEnded) {
      done();
      return;
    }
    this.inner.write(chunk, done);
  }

  override _flush(done: TransformCallback): void {
    if (!this.inner || this.innerEnded) {
      done();
      return;
    }
    this.inner.once('end', () => done());
    this.inner.end();
  }

  override _destroy(err: Error | null, done: (error: Error | null) => void): void {
    this.inner?.destroy();
    done(err);
  }
}

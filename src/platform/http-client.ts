import { type Dispatcher, fetch } from 'undici';
import { OUTBOUND_BLOCKED } from './outbound.js';

export interface BoundedRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The whole exchange, headers and body, ends after this. */
  timeoutMs: number;
  /** The most body bytes read; the rest is never read (the connection is dropped). */
  maxBytes: number;
  /** 'manual': a redirect is the answer; 'follow': each hop goes through the dispatcher (and its policy). */
  redirect?: 'manual' | 'follow';
  /** Where connections come from: an outbound policy's dispatcher for calls made for an account. */
  dispatcher?: Dispatcher;
}

export interface BoundedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The body was longer than maxBytes: `body` is its first maxBytes. */
  truncated: boolean;
  /** Where the answer came from (after redirects). */
  url: string;
}

/** What went wrong, in words an operator reads (`fetch failed` says nothing): the policy's refusal, a timeout, the socket's error. */
export function requestFailure(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; cause?: { message?: string; code?: string; cause?: { message?: string } } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const cause = e?.cause;
  if (cause?.code === OUTBOUND_BLOCKED || e?.code === OUTBOUND_BLOCKED)
    return (cause?.code === OUTBOUND_BLOCKED ? cause.message : e.message) ?? 'blocked by outbound policy';
  if (cause?.message) return cause.code && !cause.message.includes(cause.code) ? `${cause.code}: ${cause.message}` : cause.message;
  return e?.message ?? String(err);
}

/**
 * One HTTP exchange that reads at most `maxBytes` of the answer and ends at `timeoutMs` whatever the far end
 * does (a slow or endless body included). Rejects with the reason in its message (requestFailure).
 */
export async function boundedFetch(url: string | URL, req: BoundedRequest): Promise<BoundedResponse> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  let res: Awaited<ReturnType<typeof fetch>>;
  try {
    res = await fetch(url, {
      method: req.method ?? 'GET',
      headers: req.headers,
      body: req.body,
      redirect: req.redirect ?? 'manual',
      signal,
      dispatcher: req.dispatcher,
    });
  } catch (err) {
    throw new Error(requestFailure(err), { cause: err });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    if (res.body) {
      for await (const chunk of res.body) {
        const buf = Buffer.from(chunk as Uint8Array);
        if (size + buf.length > req.maxBytes) {
          chunks.push(buf.subarray(0, req.maxBytes - size));
          size = req.maxBytes;
          truncated = true;
          break;
        }
        chunks.push(buf);
        size += buf.length;
      }
    }
  } catch (err) {
    // A body cut short by the timeout still answers with what arrived.
    if (!signal.aborted) throw new Error(requestFailure(err), { cause: err });
    truncated = true;
  } finally {
    if (truncated) await res.body?.cancel().catch(() => {});
  }
  const headers: Record<string, string> = {};
  res.headers.forEach((value, key) => (headers[key] = value));
  return { status: res.status, statusText: res.statusText, headers, body: Buffer.concat(chunks, size), truncated, url: res.url || String(url) };
}

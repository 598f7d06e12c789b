import { errors } from 'undici';
import type { ApiRequest, StoredRequest } from '../../checks/index.js';
import { overlay } from '../../model/collections.js';
import { type ConnectTimings, runDispatcher } from '../../platform/outbound.js';
import { evaluate, jsonPathValues, regexCapture } from '../assertions.js';
import { interpolate, maskSecretValues, runVariables } from '../interpolate.js';
import { type LogLine, runScript, type ScriptRequest, type ScriptResponse } from '../scripts.js';
import { newTraceContext, traceIdOf } from '../trace.js';
import { type CheckRunner, isNetworkError, judge, limitsOf, messageOf, type RunContext, type RunOutcome } from './common.js';
import { httpCall } from './http-call.js';

/** Why a run's connections are closed when it ends (one error for every run: never shown, never thrown at a caller). */
const RUN_OVER = new errors.ClientDestroyedError();

/** The most of a response body read for assertions and teardown; the rest is never read. */
export const BODY_READ_BYTES = 5 * 1024 * 1024;
/** The most of a response body kept with the result. */
export const BODY_KEEP_CHARS = 16 * 1024;
/** API checks are cut off here whatever their maxResponseTime (the anchor's hard cap). */
export const HTTP_HARD_TIMEOUT_MS = 30_000;

type HttpRequestDef = StoredRequest<typeof ApiRequest>;

const CONTENT_TYPES: Record<string, string> = { JSON: 'application/json', GRAPHQL: 'application/json', FORM: 'application/x-www-form-urlencoded' };

const lowerKeys = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));

/** Reads at most BODY_READ_BYTES of a body. */
async function readBody(body: AsyncIterable<Uint8Array>): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.from(chunk);
    if (size + buf.length > BODY_READ_BYTES) {
      chunks.push(buf.subarray(0, BODY_READ_BYTES - size));
      return { text: Buffer.concat(chunks).toString('utf8'), truncated: true };
    }
    chunks.push(buf);
    size += buf.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}

/**
 * One HTTP run: the request built from the check (variables rendered), the setup script, the call through the
 * outbound policy (each connection timed), the teardown script, the assertions. `kind` URL: GET, no scripts or
 * variables, status-code assertions only.
 */
async function runHttp(ctx: RunContext, kind: 'API' | 'URL'): Promise<RunOutcome> {
  const { check } = ctx;
  const def = (check.data.request ?? {}) as HttpRequestDef;
  const limits = limitsOf(check.data, kind === 'API' ? { degraded: 5000, max: 20_000 } : { degraded: 3000, max: 5000 });
  const startedAt = Date.now();
  const context: Record<string, unknown> = overlay(
    check.variables,
    runVariables({
      accountId: check.accountId,
      checkId: check.id,
      checkName: check.name,
      checkType: check.checkType,
      location: ctx.location,
      resultId: ctx.resultId,
    }),
  );
  const logs: Record<'setup' | 'request' | 'teardown', LogLine[]> = { setup: [], request: [], teardown: [] };
  const render = (text: string) => (kind === 'API' ? interpolate(text, context) : text);
  let request: ScriptRequest;
  try {
    context.REQUEST_URL = def.url ?? '';
    request = {
      method: (kind === 'URL' ? 'GET' : (def.method ?? 'GET')).toUpperCase(),
      url: render(def.url ?? ''),
      body: kind === 'API' && def.bodyType !== 'NONE' && def.body ? render(def.body) : '',
      headers: Object.fromEntries((def.headers ?? []).map((h) => [h.key, render(h.value)])),
      queryParameters: Object.fromEntries((def.queryParameters ?? []).map((q) => [q.key, render(q.value)])),
    };
  } catch (err) {
    return failed(ctx, startedAt, `The request could not be rendered: ${messageOf(err)}`, {}, logs);
  }
  const env: Record<string, string> = {};
  for (const k in context) if (Object.hasOwn(context, k)) env[k] = String(context[k]);
  const setup = kind === 'API' ? check.setupScript : undefined;
  if (setup) {
    const outcome = await runScript(setup, { request, env });
    logs.setup = outcome.logs;
    if (outcome.error) return failed(ctx, startedAt, `Setup script failed: ${outcome.error}`, request, logs, true);
    request = outcome.request;
    Object.assign(env, outcome.env);
  }

  let url: URL;
  try {
    url = new URL(request.url);
    for (const [k, v] of Object.entries(request.queryParameters)) url.searchParams.append(k, v);
  } catch {
    return failed(ctx, startedAt, `${request.url} is not a URL`, request, logs);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed(ctx, startedAt, `${url.protocol} URLs are not requested`, request, logs);
  const lower = lowerKeys(request.headers);
  // The runner's user agent unless the check names its own (in any letter case).
  const headers: Record<string, string> = 'user-agent' in lower ? { ...request.headers } : { 'user-agent': 'monitoring-service-runner/1', ...request.headers };
  // Trace context: a new trace per run, unless the check sends its own traceparent (then its trace id is kept).
  const own = traceIdOf(lower.traceparent);
  const trace = own ? undefined : newTraceContext();
  if (trace) {
    // One traceparent header: a check's own that is not valid (in any letter case) gives way to the run's.
    for (const k of Object.keys(headers)) if (k.toLowerCase() === 'traceparent') delete headers[k];
    headers.traceparent = trace.traceparent;
    if (!lower.tracestate) headers.tracestate = trace.tracestate;
  }
  const traceId = own ?? trace!.traceId;
  if (kind === 'API' && def.bodyType && CONTENT_TYPES[def.bodyType] && request.body && !lower['content-type'])
    headers['content-type'] = CONTENT_TYPES[def.bodyType];
  if (kind === 'API' && def.basicAuth?.username) {
    headers.authorization = `Basic ${Buffer.from(`${render(def.basicAuth.username)}:${render(def.basicAuth.password ?? '')}`).toString('base64')}`;
  }
  const connections: { timings: ConnectTimings }[] = [];
  const timeoutMs = Math.min(HTTP_HARD_TIMEOUT_MS, Math.max(limits.max, 1000) + 250);
  const dispatcher = runDispatcher(
    ctx.policy,
    { rejectUnauthorized: def.skipSSL !== true, family: def.ipFamily === 'IPv6' ? 6 : def.ipFamily === 'IPv4' ? 4 : 0, timeoutMs },
    (c) => connections.push(c),
  );
  const t0 = performance.now();
  let status = 0;
  let statusText = '';
  const responseHeaders: Record<string, string> = {};
  let body = '';
  let truncated = false;
  let tHeaders = t0;
  let tEnd = t0;
  let requestError: string | undefined;
  let networkError = false;
  // A timer cleared when the call ends: AbortSignal.timeout's fires for every run, timeoutMs after it, whether or not
  // the call is over (with its weak reference, 2.6 times the CPU of this in a loop of 100,000).
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException(`The request timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  try {
    const res = await httpCall(url, {
      method: request.method,
      headers,
      body: request.body && request.method !== 'GET' && request.method !== 'HEAD' ? request.body : undefined,
      redirect: def.followRedirects === false ? 'manual' : 'follow',
      signal: deadline.signal,
      dispatcher,
    });
    tHeaders = performance.now();
    status = res.status;
    statusText = res.statusText;
    Object.assign(responseHeaders, res.headers);
    ({ text: body, truncated } = await readBody(res.body));
    tEnd = performance.now();
  } catch (err) {
    tEnd = performance.now();
    const e = err as { name?: string };
    requestError = e?.name === 'TimeoutError' || e?.name === 'AbortError' ? `The request timed out after ${timeoutMs} ms` : messageOf(err);
    networkError = e?.name === 'TimeoutError' || isNetworkError(err) || isNetworkError((err as { cause?: unknown }).cause);
  } finally {
    clearTimeout(timer);
    // Its connections go at once (the answer is read, or the run gave up on it). With a reason given, undici makes no
    // error of its own at each of its three levels (agent, pool, client): their stack traces were 1 % of a run's CPU.
    void dispatcher.destroy(RUN_OVER).catch(() => {});
  }
  const first = connections[0]?.timings ?? { dns: 0, tcp: 0, tls: 0 };
  const total = round(tEnd - t0);
  const firstByte = round(Math.max(0, tHeaders - t0 - first.dns - first.tcp - first.tls));
  const timingPhases = { wait: first.tls, dns: first.dns, tcp: first.tcp, firstByte, download: round(Math.max(0, tEnd - tHeaders)), total };

  let response: ScriptResponse = { statusCode: status, statusText, body, headers: responseHeaders, timings: {}, timingPhases };
  const teardown = kind === 'API' ? check.teardownScript : undefined;
  if (teardown && !requestError) {
    const outcome = await runScript(teardown, { request, response, env });
    logs.teardown = outcome.logs;
    if (outcome.response && typeof outcome.response.body === 'string') response = { ...response, body: outcome.response.body };
  }

  const assertions = requestError
    ? []
    : evaluate(def.assertions ?? [], (a) => {
        switch (a.source) {
          case 'STATUS_CODE':
            return [status];
          case 'RESPONSE_TIME':
            return [total];
          case 'HEADERS': {
            const value = responseHeaders[(a.property ?? '').toLowerCase()];
            return [a.regex && value !== undefined ? regexCapture(value, a.regex) : value];
          }
          case 'TEXT_BODY':
            return [a.property ? regexCapture(response.body, a.property) : response.body];
          case 'JSON_BODY': {
            let json: unknown;
            try {
              json = JSON.parse(response.body);
            } catch {
              throw new Error('The body is not JSON');
            }
            return jsonPathValues(json, a.property ?? '$');
          }
          default:
            throw new Error(`${a.source} is not a source of ${kind} checks`);
        }
      });
  const assertionFailed = assertions.some((a) => a.error);
  const hasStatusAssertion = (def.assertions ?? []).some((a) => a.source === 'STATUS_CODE');
  const { overMax, degraded } = judge(requestError ? undefined : total, limits);
  const hasFailures = Boolean(requestError) || assertionFailed || overMax || (!hasStatusAssertion && status >= 400);
  const apiCheckResult = maskSecretValues(
    {
      request: { method: request.method, url: url.toString(), data: request.body, headers, params: request.queryParameters },
      response: requestError
        ? null
        : {
            status,
            statusText,
            body: response.body.length > BODY_KEEP_CHARS ? `${response.body.slice(0, BODY_KEEP_CHARS)}…` : response.body,
            ...(truncated ? { bodyTruncated: true } : {}),
            headers: responseHeaders,
            timingPhases,
          },
      assertions,
      requestError: requestError ?? null,
      traceId,
      // The span id the request named as its parent: the run's own span when runs are exported (docs/traces.md).
      ...(trace ? { spanId: trace.spanId } : {}),
      jobLog: logs,
    },
    check.secrets,
  );
  return {
    startedAt,
    stoppedAt: Date.now(),
    hasFailures,
    hasErrors: false,
    isDegraded: !hasFailures && degraded,
    metrics: requestError ? {} : { responseTime: total, statusCode: status || undefined, timings: timingPhases },
    detail: { apiCheckResult },
    networkError,
    error:
      requestError ??
      (assertionFailed ? assertions.find((a) => a.error)!.error : overMax ? `Over maxResponseTime (${total} ms > ${limits.max} ms)` : undefined),
  };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** A run that ended before or without a response (the request could not be made, a setup script failed). */
function failed(
  ctx: RunContext,
  startedAt: number,
  why: string,
  request: Partial<ScriptRequest>,
  logs: Record<string, LogLine[]>,
  setupFailed = false,
): RunOutcome {
  return {
    startedAt,
    stoppedAt: Date.now(),
    hasFailures: true,
    hasErrors: false,
    isDegraded: false,
    metrics: {},
    detail: {
      apiCheckResult: maskSecretValues(
        { request, response: null, assertions: [], requestError: why, jobLog: logs, ...(setupFailed ? { setupFailed } : {}) },
        ctx.check.secrets,
      ),
    },
    error: why,
  };
}

export const runApi: CheckRunner = (ctx) => runHttp(ctx, 'API');
export const runUrl: CheckRunner = (ctx) => runHttp(ctx, 'URL');

import type IsolatedVm from 'isolated-vm';

/**
 * Setup and teardown scripts of API checks, run in an isolated-vm isolate: a V8 heap of its own with a memory
 * limit, a wall-clock limit, and nothing of the runner in reach (no require, no process, no file system, no
 * network; `node:vm` would not be a sandbox). What the anchor documents is there: `request` (setup may change
 * method, url, body, headers, queryParameters), `response` (teardown may change body), `process.env` (the
 * check's variables, writable for the run) and `console` (kept as the run's logs). Top-level `await` works.
 */

export const SCRIPT_TIMEOUT_MS = 10_000;
export const SCRIPT_MEMORY_MB = 64;

export interface ScriptRequest {
  method: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  queryParameters: Record<string, string>;
}

export interface ScriptResponse {
  statusCode: number;
  statusText: string;
  body: string;
  headers: Record<string, string>;
  timings: Record<string, number>;
  timingPhases: Record<string, number>;
}

export interface LogLine {
  level: 'INFO' | 'WARN' | 'ERROR' | 'DEBUG';
  msg: string;
  time: number;
}

export interface ScriptOutcome {
  request: ScriptRequest;
  response?: ScriptResponse;
  env: Record<string, string>;
  logs: LogLine[];
  /** Why the script failed (an exception, its time or memory limit); undefined when it ran through. */
  error?: string;
}

/**
 * isolated-vm, loaded on the first script: it is a native module built for one Node.js ABI, so a runner on another
 * Node (an agent copied to a machine with another major version) still starts, runs every check without scripts,
 * and fails a scripted run with what to do (`scriptSupport` says it at start).
 */
let isolatedVm: Promise<typeof IsolatedVm> | undefined;
function loadIsolatedVm(): Promise<typeof IsolatedVm> {
  isolatedVm ??= import('isolated-vm').then(
    (m) => (m as { default?: typeof IsolatedVm }).default ?? (m as unknown as typeof IsolatedVm),
    (err: Error) => {
      isolatedVm = undefined;
      throw new Error(
        `setup and teardown scripts need isolated-vm built for Node.js ${process.versions.node} (${err.message.split('\n')[0]}): run \`npm install isolated-vm@5\` beside the agent`,
      );
    },
  );
  return isolatedVm;
}

/** Whether this process can run scripts, and if not, why (an agent says so at start). */
export async function scriptSupport(): Promise<{ ok: true } | { ok: false; why: string }> {
  try {
    await loadIsolatedVm();
    return { ok: true };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
}

const MAX_LOG_LINES = 200;
const MAX_LOG_CHARS = 2000;

/** Runs one script; never throws for what the script does (its failure is `error`). */
export async function runScript(
  code: string,
  input: { request: ScriptRequest; response?: ScriptResponse; env: Record<string, string> },
  limits: { timeoutMs?: number; memoryMb?: number } = {},
): Promise<ScriptOutcome> {
  const logs: LogLine[] = [];
  let ivm: typeof IsolatedVm;
  try {
    ivm = await loadIsolatedVm();
  } catch (err) {
    return { request: input.request, response: input.response, env: input.env, logs, error: (err as Error).message };
  }
  const isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb ?? SCRIPT_MEMORY_MB });
  try {
    const context = await isolate.createContext();
    const jail = context.global;
    await jail.set('globalThis', jail.derefInto());
    await jail.set('__input', new ivm.ExternalCopy(input).copyInto());
    await jail.set(
      '__log',
      new ivm.Reference((level: LogLine['level'], text: string) => {
        if (logs.length < MAX_LOG_LINES) logs.push({ level, msg: String(text).slice(0, MAX_LOG_CHARS), time: Date.now() });
      }),
    );
    const prelude = `
      const request = __input.request;
      const response = __input.response;
      const process = { env: __input.env };
      const fmt = (args) => args.map((a) => typeof a === 'string' ? a : (() => { try { return JSON.stringify(a); } catch { return String(a); } })()).join(' ');
      const console = {
        log: (...a) => __log.applySync(undefined, ['INFO', fmt(a)]),
        info: (...a) => __log.applySync(undefined, ['INFO', fmt(a)]),
        debug: (...a) => __log.applySync(undefined, ['DEBUG', fmt(a)]),
        warn: (...a) => __log.applySync(undefined, ['WARN', fmt(a)]),
        error: (...a) => __log.applySync(undefined, ['ERROR', fmt(a)]),
      };
      globalThis.__output = () => JSON.stringify({ request, response, env: process.env });
    `;
    await context.eval(prelude, { timeout: 1000 });
    const wrapped = `(async () => {\n${code}\n})().then(() => __output())`;
    const started = Date.now();
    const timeoutMs = limits.timeoutMs ?? SCRIPT_TIMEOUT_MS;
    const output = (await Promise.race([
      context.eval(wrapped, { timeout: timeoutMs, promise: true, copy: true }),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`Script timed out after ${timeoutMs} ms`)), timeoutMs + 50).unref()),
    ])) as string;
    void started;
    const parsed = JSON.parse(output) as { request: ScriptRequest; response?: ScriptResponse; env: Record<string, string> };
    return { request: normaliseRequest(parsed.request, input.request), response: parsed.response ?? input.response, env: stringValues(parsed.env), logs };
  } catch (err) {
    const message = isolate.isDisposed ? 'Script exceeded its memory limit' : (err as Error).message || String(err);
    const error = /Array buffer allocation failed|memory limit|disposed/i.test(message)
      ? `Script exceeded its memory limit of ${limits.memoryMb ?? SCRIPT_MEMORY_MB} MB`
      : message;
    logs.push({ level: 'ERROR', msg: error, time: Date.now() });
    return { request: input.request, response: input.response, env: input.env, logs, error };
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}

const stringValues = (o: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(o && typeof o === 'object' ? (o as object) : {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

/** What a script left in `request`, kept to the documented fields and types. */
function normaliseRequest(r: Partial<ScriptRequest> | undefined, before: ScriptRequest): ScriptRequest {
  if (!r || typeof r !== 'object') return before;
  return {
    method: typeof r.method === 'string' ? r.method.toUpperCase() : before.method,
    url: typeof r.url === 'string' ? r.url : before.url,
    body: typeof r.body === 'string' ? r.body : r.body === undefined || r.body === null ? '' : JSON.stringify(r.body),
    headers: stringValues(r.headers ?? before.headers),
    queryParameters: stringValues(r.queryParameters ?? before.queryParameters),
  };
}

import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import type { KeptAsset } from '../../model/results.js';
import type { BlobKind } from '../../storage/blobs.js';
import { maskSecretValues, runVariables } from '../interpolate.js';
import { browserSupport, runInSandbox, type PlaywrightResult, type PlaywrightStep, type SandboxRun } from '../browser/sandbox.js';
import { messageOf, type CheckRunner, type RunContext, type RunOutcome } from './common.js';

/** What a script that defines no test is told. */
const NO_TEST = 'The script defines no test: write it as a Playwright Test spec (import { test, expect } from "@playwright/test"; test("…", async ({ page }) => { … }))';

/** The anchor's limits for browser and multi-step runs: degraded over 15 s, failed over 120 s (its hard cap 240 s). */
const DEFAULTS = { degraded: 15_000, max: 120_000 };
const HARD_TIMEOUT_MS = 240_000;

/** Browser runs of one runner process at once (each is a Chromium); the rest wait their turn. */
let active = 0;
const waiting: (() => void)[] = [];
async function slot<T>(limit: number, fn: () => Promise<T>): Promise<T> {
  if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  try {
    return await fn();
  } finally {
    active--;
    waiting.shift()?.();
  }
}

export interface BrowserSettings {
  /** Browser runs at once in this process. */
  concurrency: number;
  /** Memory of one run's processes together (Chromium and Node), in bytes. */
  memoryBytes: number;
}
let settings: BrowserSettings = { concurrency: 1, memoryBytes: 1536 * 1024 * 1024 };
/** Set by the process that runs checks (from BROWSER_CONCURRENCY and BROWSER_MEMORY_MB). */
export function configureBrowserRuns(next: BrowserSettings): void {
  settings = next;
}

/** The most a kept file may weigh; a larger one is left out, saying so in the run's log. */
const ASSET_LIMIT_BYTES = 50 * 1024 * 1024;
const ASSET_KINDS: Record<string, { type: 'screenshot' | 'trace' | 'video'; kind: BlobKind }> = {
  'image/png': { type: 'screenshot', kind: 'screenshots' },
  'application/zip': { type: 'trace', kind: 'traces' },
  'video/webm': { type: 'video', kind: 'videos' },
};

const assetPath = (ctx: RunContext, name: string) => `${ctx.assetBase ?? `/v1/check-results/${ctx.check.id}/${ctx.resultId}/assets`}/${encodeURIComponent(name)}`;

/** Puts a run's screenshots, traces and videos in the blob store; each named by its file, unique in the run. */
async function keepAssets(ctx: RunContext, attachments: PlaywrightResult['attachments'], hostPath: (p: string) => string | null): Promise<{ kept: KeptAsset[]; notes: string[] }> {
  const kept: KeptAsset[] = [];
  const notes: string[] = [];
  if (!ctx.blobs) return { kept, notes };
  const names = new Set<string>();
  for (const a of attachments) {
    const kind = ASSET_KINDS[a.contentType];
    const file = a.path ? hostPath(a.path) : null;
    if (!kind || !file) continue;
    let name = path.basename(file);
    for (let i = 2; names.has(name); i++) name = `${path.parse(file).name}-${i}${path.extname(file)}`;
    names.add(name);
    try {
      const stored = await ctx.blobs.put(ctx.check.accountId, kind.kind, createReadStream(file), ASSET_LIMIT_BYTES);
      kept.push({ type: kind.type, name, contentType: a.contentType, key: stored.key, size: stored.size });
    } catch (err) {
      // Too large or unreadable: the run's log says so; the rest of the run stands.
      notes.push(`${name} was not kept: ${messageOf(err)}`);
    }
  }
  return { kept, notes };
}

/** A step tree as the result keeps it: title, duration, its error, its steps. */
function stepsOf(steps: PlaywrightStep[] | undefined): Record<string, unknown>[] {
  return (steps ?? []).map((s) => ({ title: s.title, duration: s.duration, ...(s.error?.message ? { error: strip(s.error.message) } : {}), steps: stepsOf(s.steps) }));
}

/** Terminal colours out of Playwright's messages. */
const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

function firstResult(report: NonNullable<Awaited<ReturnType<typeof runInSandbox>>['report']>): PlaywrightResult | undefined {
  const stack = [...report.suites];
  while (stack.length) {
    const suite = stack.shift()!;
    for (const spec of suite.specs ?? []) for (const test of spec.tests) if (test.results[0]) return test.results[0];
    stack.push(...(suite.suites ?? []));
  }
  return undefined;
}

/**
 * A BROWSER or MULTI_STEP run: the check's script as a Playwright Test spec in Chromium, in a sandbox
 * (src/runners/browser/sandbox.ts), its variables as process.env. Failed: a failed expectation or error, a run
 * over maxResponseTime (the test's timeout). Errored: the sandbox could not run it. Secrets are masked in what is
 * kept (errors, logs, steps).
 */
async function runBrowser(ctx: RunContext, key: 'browserCheckResult' | 'multiStepCheckResult'): Promise<RunOutcome> {
  const { check } = ctx;
  const startedAt = Date.now();
  const support = browserSupport();
  const fail = (why: string, hasErrors: boolean): RunOutcome => ({
    startedAt,
    stoppedAt: Date.now(),
    hasFailures: true,
    hasErrors,
    isDegraded: false,
    metrics: {},
    detail: { [key]: maskSecretValues({ errors: [{ message: why }], jobLog: [], steps: [], jobAssets: [] }, check.secrets) },
    error: maskSecretValues(why, check.secrets),
  });
  if (!support.ok) return fail(support.why, true);
  const script = typeof check.data.script === 'string' ? check.data.script : '';
  if (!script.trim()) return fail('The check has no script', true);
  const max = Math.min(HARD_TIMEOUT_MS, Number(check.data.maxResponseTime ?? DEFAULTS.max) || DEFAULTS.max);
  const degraded = Number(check.data.degradedResponseTime ?? DEFAULTS.degraded) || DEFAULTS.degraded;
  const env = {
    ...check.variables,
    ...runVariables({ accountId: check.accountId, checkId: check.id, checkName: check.name, checkType: check.checkType, location: ctx.location, resultId: ctx.resultId }),
  };
  const run: SandboxRun = { script, env, timeoutMs: max, memoryBytes: settings.memoryBytes, policy: ctx.policy, trace: 'retain-on-failure', screenshot: 'only-on-failure', video: 'off' };
  let sandbox: Awaited<ReturnType<typeof runInSandbox>>;
  try {
    sandbox = await runInSandbox(run);
  } catch (err) {
    return fail(`The browser sandbox could not start: ${messageOf(err)}`, true);
  }
  try {
    const stoppedAt = Date.now();
    if (sandbox.killed === 'memory') return fail(`The run used more than ${Math.round(settings.memoryBytes / 1024 / 1024)} MB and was stopped`, false);
    if (sandbox.killed === 'timeout') return fail(`The run did not end within ${max} ms and was stopped`, false);
    const result = sandbox.report && firstResult(sandbox.report);
    if (!result) {
      const why = sandbox.report?.errors?.map((e) => strip(e.message ?? '')).find(Boolean) ?? (strip(sandbox.output).trim().split('\n').slice(-5).join('\n') || 'The script ran no test');
      // A script that is not a Playwright Test spec (no `test(...)`, or one that does not load) runs no test.
      return fail(/No tests found/i.test(why) ? NO_TEST : `${NO_TEST}. Loading it said: ${why.split('\n')[0]}`, false);
    }
    const jobLog = [
      ...result.stdout.map((o) => ({ level: 'INFO', msg: o.text ?? Buffer.from(o.buffer ?? '', 'base64').toString('utf8') })),
      ...result.stderr.map((o) => ({ level: 'ERROR', msg: o.text ?? Buffer.from(o.buffer ?? '', 'base64').toString('utf8') })),
    ].map((l) => ({ ...l, msg: strip(l.msg).replace(/\n$/, '') }));
    const errors = result.errors.map((e) => ({ message: strip(e.message ?? ''), stack: e.stack ? strip(e.stack) : undefined, location: e.location ? { line: e.location.line, column: e.location.column } : undefined }));
    const { kept: assets, notes } = await keepAssets(ctx, result.attachments, sandbox.hostPath);
    jobLog.push(...notes.map((msg) => ({ level: 'WARN', msg })));
    const passed = result.status === 'passed';
    const duration = result.duration;
    const timedOut = result.status === 'timedOut';
    const why = timedOut ? `The script did not finish within ${max} ms` : errors[0]?.message.split('\n')[0];
    const detail = {
      type: 'PLAYWRIGHT_TEST',
      runtimeVersion: typeof check.data.runtimeId === 'string' ? check.data.runtimeId : null,
      startTime: Date.parse(result.startTime),
      endTime: Date.parse(result.startTime) + duration,
      errors,
      jobLog,
      steps: stepsOf(result.steps),
      // What the run kept, each at its download route (GET /v1/check-results/{checkId}/{resultId}/assets/{name}).
      assets,
      jobAssets: assets.map((a) => assetPath(ctx, a.name)),
      playwrightTestTraces: assets.filter((a) => a.type === 'trace').map((a) => assetPath(ctx, a.name)),
      playwrightTestVideos: assets.filter((a) => a.type === 'video').map((a) => assetPath(ctx, a.name)),
      // Playwright's own report of the run, as the anchor keeps it (attachment paths are the sandbox's).
      playwrightTestJsonReport: sandbox.report ? JSON.parse(readFileSync(`${sandbox.outDir}/report.json`, 'utf8')).stats : null,
    };
    return {
      startedAt,
      stoppedAt,
      hasFailures: !passed,
      hasErrors: false,
      isDegraded: passed && duration > degraded,
      metrics: { responseTime: duration },
      detail: { [key]: maskSecretValues(detail, check.secrets) },
      error: passed ? undefined : maskSecretValues(why ?? `The test ended ${result.status}`, check.secrets),
    };
  } finally {
    sandbox.cleanup();
  }
}

// A run waits for its turn before it starts its clock: its times are the browser's, not the queue's.
export const runBrowserCheck: CheckRunner = (ctx) => slot(settings.concurrency, () => runBrowser(ctx, 'browserCheckResult'));
export const runMultiStepCheck: CheckRunner = (ctx) => slot(settings.concurrency, () => runBrowser(ctx, 'multiStepCheckResult'));

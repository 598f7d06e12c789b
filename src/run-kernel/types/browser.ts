import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { KeptAsset } from '../../model/results.js';
import { sandboxCompileCache } from '../browser/compile-cache.js';
import {
  browserSupport,
  type PlaywrightResult,
  type PlaywrightStep,
  runInSandbox,
  SANDBOX_LIMITS,
  SANDBOX_NODE,
  type SandboxProgram,
  type SandboxRun,
  type ScriptFile,
  workPath,
} from '../browser/sandbox.js';
import { readTestCommand } from '../browser/suite.js';
import { maskSecretValues, runVariables } from '../interpolate.js';
import { type CheckRunner, messageOf, type RunContext, type RunFileKind, type RunOutcome } from './common.js';

/** What a script that defines no test is told. */
const NO_TEST =
  'The script defines no test: write it as a Playwright Test spec (import { test, expect } from "@playwright/test"; test("…", async ({ page }) => { … }))';

/** The anchor's limits for browser and multi-step runs: degraded over 15 s, failed over 120 s (its hard cap 240 s). */
const DEFAULTS = { degraded: 15_000, max: 120_000 };
const HARD_TIMEOUT_MS = 240_000;
/** Check suites: degraded over 5 min, failed over 10 min, at most 30 min (a suite runs many tests). */
const SUITE_DEFAULTS = { degraded: 300_000, max: 600_000 };
const SUITE_HARD_TIMEOUT_MS = 1_800_000;
/** The Playwright the runner carries, read when a run needs it (an agent without browser support has none). */
const playwrightVersion = () => (createRequire(import.meta.url)('@playwright/test/package.json') as { version: string }).version;

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
  /** The Node.js and Chromium runs use (default: the sandbox's, SANDBOX_NODE and CHROMIUM_BINARY). */
  node?: string;
  chromium?: string;
  /** Runs with the sandbox's compile cache (browser/compile-cache.ts) where their Node has one; default true. */
  compileCache?: boolean;
}
let settings: BrowserSettings = { concurrency: 1, memoryBytes: 1536 * 1024 * 1024 };
/** Set by the process that runs checks (from BROWSER_CONCURRENCY and BROWSER_MEMORY_MB). */
export function configureBrowserRuns(next: BrowserSettings): void {
  settings = next;
}

/** The most a kept file may weigh; a larger one is left out, saying so in the run's log. */
const ASSET_LIMIT_BYTES = 50 * 1024 * 1024;
const ASSET_KINDS: Record<string, { type: 'screenshot' | 'trace' | 'video'; kind: RunFileKind }> = {
  'image/png': { type: 'screenshot', kind: 'screenshots' },
  'application/zip': { type: 'trace', kind: 'traces' },
  'video/webm': { type: 'video', kind: 'videos' },
};

const assetPath = (ctx: RunContext, name: string) =>
  `${ctx.assetBase ?? `/v1/check-results/${ctx.check.id}/${ctx.resultId}/assets`}/${encodeURIComponent(name)}`;

/** Puts a run's screenshots, traces and videos in the blob store; each named by its file, unique in the run. */
async function keepAssets(
  ctx: RunContext,
  attachments: PlaywrightResult['attachments'],
  hostPath: (p: string) => string | null,
): Promise<{ kept: KeptAsset[]; notes: string[] }> {
  const kept: KeptAsset[] = [];
  const notes: string[] = [];
  if (!ctx.blobs) return { kept, notes };
  const names = new Set<string>();
  for (const a of attachments) {
    const kind = ASSET_KINDS[a.contentType];
    const file = a.path ? hostPath(a.path) : null;
    if (!kind || !file) continue;
    // Named as the script named it (`shop.png`), not as the host stored it (its outputs are file-0, file-1…).
    const own = path.posix.basename(a.path!);
    let name = own;
    for (let i = 2; names.has(name); i++) name = `${path.posix.parse(own).name}-${i}${path.posix.extname(own)}`;
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
  return (steps ?? []).map((s) => ({
    title: s.title,
    duration: s.duration,
    ...(s.error?.message ? { error: strip(s.error.message) } : {}),
    steps: stepsOf(s.steps),
  }));
}

/** Terminal colours out of Playwright's messages. */
const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

type Report = NonNullable<Awaited<ReturnType<typeof runInSandbox>>['report']>;
/** Every test of a report with its final attempt's result and its title path (file › describe › test). */
function testsOf(report: Report): { title: string; result: PlaywrightResult }[] {
  const out: { title: string; result: PlaywrightResult }[] = [];
  const walk = (suites: Report['suites'], titles: string[]) => {
    for (const suite of suites) {
      const path = suite.title ? [...titles, suite.title] : titles;
      for (const spec of suite.specs ?? [])
        for (const test of spec.tests) {
          const result = test.results.at(-1);
          if (result) out.push({ title: [...path, spec.title].join(' › '), result });
        }
      walk(suite.suites ?? [], path);
    }
  };
  walk(report.suites, []);
  return out;
}

/** What a run runs, or why it cannot run; `notes` go to its log. */
type Prepared = { program: SandboxProgram; notes: string[]; cleanup?: () => void } | { error: string };

/** A BROWSER or MULTI_STEP script: its entry at its scriptPath, the files it imports beside it, snippets under ./snippets. */
function specProgram(check: RunContext['check']): Prepared {
  const script = typeof check.data.script === 'string' ? check.data.script : '';
  if (!script.trim()) return { error: 'The check has no script' };
  const scriptPath =
    typeof check.data.scriptPath === 'string' && /\.(?:[cm]?[jt]s)$/.test(check.data.scriptPath) && workPath('/w', check.data.scriptPath)
      ? check.data.scriptPath
      : 'check.spec.ts';
  const dependencies = Array.isArray(check.data.dependencies) ? (check.data.dependencies as ScriptFile[]) : [];
  const dir = path.posix.dirname(path.posix.normalize(scriptPath));
  const snippets = (check.snippets ?? []).map((s) => ({
    path: path.posix.join(dir, 'snippets', /\.[cm]?[jt]s$/.test(s.name) ? s.name : `${s.name}.js`),
    content: s.script,
  }));
  return { program: { kind: 'spec', entry: scriptPath, files: [...snippets, ...dependencies, { path: scriptPath, content: script }] }, notes: [] };
}

/**
 * A PLAYWRIGHT check suite: its code bundle (uploaded by the CLI's deploy) unpacked in the sandbox and run by its
 * testCommand with its own config. Its installCommand is not run: the sandbox provides @playwright/test (the
 * runtime's), and anything else the suite imports travels in the bundle (docs/browser-checks.md).
 */
async function suiteProgram(ctx: RunContext): Promise<Prepared> {
  const { check } = ctx;
  const key = typeof check.data.codeBundlePath === 'string' ? check.data.codeBundlePath : '';
  if (!key) return specProgram(check);
  const command = readTestCommand(check.data.testCommand as string | undefined, check.data.workingDir as string | undefined);
  if (!command.ok) return { error: command.why };
  const bundle = ctx.blobs ? await ctx.blobs.open(check.accountId, key) : undefined;
  if (!bundle) return { error: `The code bundle ${key} is not in the blob store: deploy the project again` };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-bundle-'));
  const file = path.join(dir, 'bundle.tar.gz');
  try {
    await pipeline(bundle.stream, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { error: `The code bundle could not be read: ${messageOf(err)}` };
  }
  const install = typeof check.data.installCommand === 'string' && check.data.installCommand.trim();
  const notes = install
    ? [`installCommand "${install}" was not run: @playwright/test ${playwrightVersion()} comes with the runner; other packages must be in the code bundle`]
    : [];
  const cwd = path.posix.normalize(((check.data.workingDir as string | undefined) ?? '.') || '.');
  return {
    program: { kind: 'suite', bundle: file, config: command.config, cwd, args: command.args },
    notes,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A browser run: a spec or a check suite in Chromium, in a sandbox (src/run-kernel/browser/sandbox.ts), the check's
 * variables as process.env. Failed: a failed expectation or error, a run over maxResponseTime (the test's timeout).
 * Errored: the sandbox could not run it. Secrets are masked in what is kept (errors, logs, steps).
 */
async function runBrowser(ctx: RunContext, key: 'browserCheckResult' | 'multiStepCheckResult' | 'playwrightCheckResult'): Promise<RunOutcome> {
  const { check } = ctx;
  const node = settings.node ?? SANDBOX_NODE;
  const support = browserSupport(node, settings.chromium);
  // Made once per process, before the first run's clock starts.
  const cache = settings.compileCache === false || !support.ok ? null : await sandboxCompileCache(ctx.policy, node, settings.chromium);
  const startedAt = Date.now();
  const fail = (why: string, hasErrors: boolean, jobLog: { level: string; msg: string }[] = []): RunOutcome => ({
    startedAt,
    stoppedAt: Date.now(),
    hasFailures: true,
    hasErrors,
    isDegraded: false,
    metrics: {},
    detail: { [key]: maskSecretValues({ errors: [{ message: why }], jobLog, steps: [], jobAssets: [] }, check.secrets) },
    error: maskSecretValues(why, check.secrets),
  });
  if (!support.ok) return fail(support.why, true);
  const suite = key === 'playwrightCheckResult';
  const prepared = suite ? await suiteProgram(ctx) : specProgram(check);
  if ('error' in prepared) return fail(prepared.error, true);
  const defaults = suite ? SUITE_DEFAULTS : DEFAULTS;
  const max = Math.min(suite ? SUITE_HARD_TIMEOUT_MS : HARD_TIMEOUT_MS, Number(check.data.maxResponseTime ?? defaults.max) || defaults.max);
  const degraded = Number(check.data.degradedResponseTime ?? defaults.degraded) || defaults.degraded;
  const env = {
    ...check.variables,
    ...runVariables({
      accountId: check.accountId,
      checkId: check.id,
      checkName: check.name,
      checkType: check.checkType,
      location: ctx.location,
      resultId: ctx.resultId,
    }),
  };
  const run: SandboxRun = {
    program: prepared.program,
    env,
    timeoutMs: max,
    memoryBytes: settings.memoryBytes,
    policy: ctx.policy,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    video: 'off',
    node,
    chromium: settings.chromium,
    compileCache: cache ? { dir: cache, write: false } : undefined,
  };
  let sandbox: Awaited<ReturnType<typeof runInSandbox>>;
  try {
    sandbox = await runInSandbox(run);
  } catch (err) {
    prepared.cleanup?.();
    return fail(`The browser sandbox could not start: ${messageOf(err)}`, true);
  }
  try {
    const stoppedAt = Date.now();
    const notes = prepared.notes.map((msg) => ({ level: 'WARN', msg }));
    if (sandbox.killed === 'memory')
      return fail(
        `The run used more than ${Math.round(settings.memoryBytes / 1024 / 1024)} MB (its processes and its temporary files) and was stopped`,
        false,
        notes,
      );
    if (sandbox.killed === 'timeout') return fail(`The run did not end within ${max} ms and was stopped`, false, notes);
    if (sandbox.killed === 'processes') return fail(`The run started more than ${SANDBOX_LIMITS.processes} processes and was stopped`, false, notes);
    if (sandbox.outputsProblem) notes.push({ level: 'WARN', msg: `The run's outputs were not all kept: ${sandbox.outputsProblem}` });
    const tests = sandbox.report ? testsOf(sandbox.report) : [];
    if (!tests.length) {
      const why =
        sandbox.report?.errors?.map((e) => strip(e.message ?? '')).find(Boolean) ??
        (strip(sandbox.output).trim().split('\n').slice(-5).join('\n') || 'The script ran no test');
      if (suite)
        return fail(
          /No tests found/i.test(why)
            ? 'The check suite ran no test: its testCommand and config select none'
            : `The check suite did not run: ${why.split('\n')[0]}`,
          false,
          notes,
        );
      // A script that is not a Playwright Test spec (no `test(...)`, or one that does not load) runs no test.
      return fail(/No tests found/i.test(why) ? NO_TEST : `${NO_TEST}. Loading it said: ${why.split('\n')[0]}`, false, notes);
    }
    const results = tests.map((t) => t.result);
    const text = (o: { text?: string; buffer?: string }) => o.text ?? Buffer.from(o.buffer ?? '', 'base64').toString('utf8');
    const jobLog = [
      ...notes,
      ...results
        .flatMap((r) => [...r.stdout.map((o) => ({ level: 'INFO', msg: text(o) })), ...r.stderr.map((o) => ({ level: 'ERROR', msg: text(o) }))])
        .map((l) => ({ ...l, msg: strip(l.msg).replace(/\n$/, '') })),
    ];
    // A suite's errors say which test they come from.
    const errors = tests.flatMap(({ title, result }) =>
      result.errors.map((e) => ({
        ...(suite ? { title } : {}),
        message: strip(e.message ?? ''),
        stack: e.stack ? strip(e.stack) : undefined,
        location: e.location ? { line: e.location.line, column: e.location.column } : undefined,
      })),
    );
    const { kept: assets, notes: assetNotes } = await keepAssets(
      ctx,
      results.flatMap((r) => r.attachments),
      sandbox.hostPath,
    );
    jobLog.push(...assetNotes.map((msg) => ({ level: 'WARN', msg })));
    const bad = tests.filter((t) => t.result.status !== 'passed' && t.result.status !== 'skipped');
    const passed = bad.length === 0 && !(sandbox.report?.errors ?? []).length;
    const first = results[0]!;
    const duration = suite ? (sandbox.report?.stats.duration ?? first.duration) : first.duration;
    const timedOut = bad.some((t) => t.result.status === 'timedOut');
    const why =
      timedOut && !errors.length
        ? `The script did not finish within ${max} ms`
        : errors[0]
          ? `${suite ? `${errors[0].title}: ` : ''}${errors[0].message.split('\n')[0]}`
          : undefined;
    const detail = {
      type: 'PLAYWRIGHT_TEST',
      runtimeVersion: typeof check.data.runtimeId === 'string' ? check.data.runtimeId : null,
      startTime: Date.parse(first.startTime),
      endTime: Date.parse(first.startTime) + duration,
      errors,
      jobLog,
      // A spec's steps; a suite's tests, each with its steps.
      steps: suite
        ? tests.map((t) => ({ title: t.title, duration: t.result.duration, status: t.result.status, steps: stepsOf(t.result.steps) }))
        : stepsOf(first.steps),
      // What the run kept, each at its download route (GET /v1/check-results/{checkId}/{resultId}/assets/{name}).
      assets,
      jobAssets: assets.map((a) => assetPath(ctx, a.name)),
      playwrightTestTraces: assets.filter((a) => a.type === 'trace').map((a) => assetPath(ctx, a.name)),
      playwrightTestVideos: assets.filter((a) => a.type === 'video').map((a) => assetPath(ctx, a.name)),
      playwrightTraceFiles: assets.filter((a) => a.type === 'trace').map((a) => ({ name: a.name, filename: a.name, url: assetPath(ctx, a.name) })),
      // Playwright's own counts of the run (expected, unexpected, flaky, skipped, duration).
      playwrightTestJsonReport: sandbox.report?.stats ?? null,
    };
    return {
      startedAt,
      stoppedAt,
      hasFailures: !passed,
      hasErrors: false,
      isDegraded: passed && duration > degraded,
      metrics: { responseTime: duration },
      detail: { [key]: maskSecretValues(detail, check.secrets) },
      error: passed
        ? undefined
        : maskSecretValues(
            why ?? (sandbox.report?.errors?.[0]?.message ? strip(sandbox.report.errors[0].message) : `The test ended ${first.status}`),
            check.secrets,
          ),
    };
  } finally {
    sandbox.cleanup();
    prepared.cleanup?.();
  }
}

// A run waits for its turn before it starts its clock: its times are the browser's, not the queue's.
export const runBrowserCheck: CheckRunner = (ctx) => slot(settings.concurrency, () => runBrowser(ctx, 'browserCheckResult'));
export const runMultiStepCheck: CheckRunner = (ctx) => slot(settings.concurrency, () => runBrowser(ctx, 'multiStepCheckResult'));
export const runPlaywrightSuite: CheckRunner = (ctx) => slot(settings.concurrency, () => runBrowser(ctx, 'playwrightCheckResult'));

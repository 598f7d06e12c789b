import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { runInSandbox, SANDBOX_NODE } from './sandbox.js';

/**
 * The sandbox's V8 compile cache (docs/browser-checks.md, "Start-up cost"). Every run starts two Node processes
 * (Playwright's runner and its worker) that compile the same few megabytes of Playwright; with a cache of that
 * code, a run costs about a fifth less CPU. The cache is made once per process by the service's own warm-up run
 * (a fixed spec, no check's code) in a sandbox whose cache directory is writable, then bound read-only into every
 * check's run: no run can write anything the next one reads.
 */

/** The warm-up: a page, a locator click, web-first assertions and a step, so their code is compiled and kept. */
const WARM_UP = `import { test, expect } from '@playwright/test';
test('warm-up', async ({ page }) => {
  await test.step('page', async () => {
    await page.setContent('<title>Warm</title><button onclick="this.textContent = String(Number(this.textContent) + 1)">0</button><a href="#x">Next</a>');
    await page.getByRole('button').click();
    await expect(page.getByRole('button')).toHaveText('1');
    await page.getByRole('link', { name: 'Next' }).click();
    await expect(page).toHaveTitle('Warm');
  });
  expect({ ok: true }).toEqual({ ok: true });
});
`;

/** After a warm-up that did not pass, runs go without a cache this long before another warm-up is tried. */
const RETRY_AFTER_MS = 10 * 60_000;

/** Whether a Node binary can turn its compile cache on from a preloaded file (module.enableCompileCache: 22.8 and later). */
async function hasCompileCache(node: string): Promise<boolean> {
  try {
    const { stdout } = await promisify(execFile)(node, ['-p', "typeof require('node:module').enableCompileCache"], { timeout: 10_000, env: {} });
    return stdout.trim() === 'function';
  } catch {
    return false;
  }
}

async function warmUp(policy: OutboundPolicy, node: string, chromium: string | undefined): Promise<string | null> {
  if (!(await hasCompileCache(node))) return null;
  let dir: string | undefined;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), 'browser-compile-cache-'));
    const made = dir;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    const outcome = await runInSandbox({
      program: { kind: 'spec', entry: 'warm-up.spec.ts', files: [{ path: 'warm-up.spec.ts', content: WARM_UP }] },
      env: {},
      timeoutMs: 60_000,
      memoryBytes: 2048 * 1024 * 1024,
      policy,
      // As checks run, so the same code is compiled.
      trace: 'retain-on-failure',
      screenshot: 'only-on-failure',
      video: 'off',
      node,
      chromium,
      compileCache: { dir, write: true },
    });
    outcome.cleanup();
    const passed = outcome.report?.stats.expected === 1 && !outcome.report.stats.unexpected;
    if (passed && readdirSync(dir, { recursive: true }).length > 0) return dir;
  } catch {
    // No cache this time (a full temporary directory, a sandbox that did not start).
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  throw new Error('warm-up failed');
}

const caches = new Map<string, { made: Promise<string | null>; failedAt?: number }>();

/**
 * The directory of the compile cache for runs on `node`, made on first use (the first run waits for the warm-up,
 * about two seconds), or null when that Node has none or the warm-up did not pass: runs then go without one, and a
 * warm-up is tried again after RETRY_AFTER_MS. Never rejects.
 */
export function sandboxCompileCache(policy: OutboundPolicy, node: string = SANDBOX_NODE, chromium?: string): Promise<string | null> {
  const key = `${node}\n${chromium ?? ''}`;
  const known = caches.get(key);
  if (known && (known.failedAt === undefined || Date.now() - known.failedAt < RETRY_AFTER_MS)) return known.made;
  const entry: { made: Promise<string | null>; failedAt?: number } = {
    made: warmUp(policy, node, chromium).catch(() => {
      entry.failedAt = Date.now();
      return null;
    }),
  };
  caches.set(key, entry);
  return entry.made;
}

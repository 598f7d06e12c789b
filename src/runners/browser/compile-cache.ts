import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

/** Whether a Node binary has a compile cache (22.1 and later). */
function hasCompileCache(node: string): boolean {
  const out = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000, env: {} });
  const [major = 0, minor = 0] = (out.stdout ?? '').trim().split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
}

let made: Promise<string | null> | undefined;
let madeFor: string | undefined;

/**
 * The directory of the compile cache for runs on `node`, made on first use (the first run waits for the warm-up,
 * about two seconds), or null when that Node has none or the warm-up did not pass (runs then go without).
 */
export function sandboxCompileCache(policy: OutboundPolicy, node: string = SANDBOX_NODE): Promise<string | null> {
  if (made && madeFor === node) return made;
  madeFor = node;
  made = (async () => {
    if (!hasCompileCache(node)) return null;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'browser-compile-cache-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
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
      compileCache: { dir, write: true },
    }).catch(() => null);
    outcome?.cleanup();
    if (outcome?.report?.stats.expected === 1 && !outcome.report.stats.unexpected) return dir;
    rmSync(dir, { recursive: true, force: true });
    return null;
  })();
  return made;
}

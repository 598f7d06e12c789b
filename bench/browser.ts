/**
 * Browser bench: one runner process running browser checks (a click-through of a local two-page shop) in its
 * sandboxed Chromium, at 1, 2 and 4 runs at once. Measures runs per minute and the resident memory of the
 * runs' processes (bubblewrap, Node, Chromium; proportional set size, so shared pages count once) sampled every
 * 100 ms: the peak, and the peak per concurrent run.
 * Writes bench/results/<time>-browser.json.
 *
 *   npm run bench:browser -- [--runs 12] [--concurrency 1,2,4]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/platform/config.js';
import { OutboundPolicy } from '../src/platform/outbound.js';
import { processTree, treeMemory } from '../src/runners/index.js';
import { configureBrowserRuns, runBrowserCheck } from '../src/runners/index.js';
import type { RunnableCheck } from '../src/runners/index.js';
import { ROOT } from './harness.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '12' }, concurrency: { type: 'string', default: '1,2,4' } } });
const RUNS = Number(values.runs);
const LEVELS = values.concurrency.split(',').map(Number);

const SCRIPT = `
import { test, expect } from '@playwright/test';
test('add to cart', async ({ page }) => {
  await page.goto(process.env.SITE + '/shop');
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.locator('#count')).toHaveText('1');
  await page.getByRole('link', { name: 'Cart' }).click();
  await expect(page).toHaveTitle('Cart');
});`;

/** Memory (PSS) of this process's descendants: the runs' bubblewrap, Node and Chromium processes. */
const runsMemory = () => treeMemory(processTree(process.pid).filter((p) => p !== process.pid));

async function main() {
  const site = createServer((req, res) => {
    if (req.url === '/shop') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        '<!doctype html><title>Shop</title><button onclick="c.textContent=String(Number(c.textContent)+1)">Add to cart</button><span id="count">0</span><a href="/cart">Cart</a><script>var c=document.getElementById("count")</script>',
      );
    } else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Cart</title>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const config = loadConfig({ ...process.env, OUTBOUND_PUBLIC: 'false', OUTBOUND_ALLOW: '127.0.0.0/8' });
  const policy = new OutboundPolicy(config.outbound);
  const check = (): RunnableCheck => ({
    id: randomUUID(), accountId: randomUUID(), name: 'bench', checkType: 'BROWSER', activated: true, tags: [], groupId: null,
    data: { script: SCRIPT }, variables: { SITE: siteUrl }, secrets: [], locations: ['eu-west-1'], runParallel: false,
  });
  const results: Record<string, unknown>[] = [];
  for (const level of LEVELS) {
    configureBrowserRuns({ concurrency: level, memoryBytes: 4096 * 1024 * 1024 });
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, runsMemory())), 100);
    const t0 = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: RUNS }, () => runBrowserCheck({ check: check(), location: 'eu-west-1', resultId: randomUUID(), attempt: 1, policy })),
    );
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const failed = outcomes.filter((o) => o.hasFailures);
    const durations = outcomes.map((o) => o.stoppedAt - o.startedAt).sort((a, b) => a - b);
    const row = {
      concurrency: level,
      runs: RUNS,
      failed: failed.length,
      firstFailure: failed[0]?.error,
      seconds: Number(seconds.toFixed(1)),
      runsPerMinute: Number(((RUNS / seconds) * 60).toFixed(1)),
      runMsMedian: durations[Math.floor(durations.length / 2)],
      peakPssMb: Math.round(peak / 1024 / 1024),
      peakPssPerRunMb: Math.round(peak / 1024 / 1024 / level),
    };
    console.log(JSON.stringify(row));
    results.push(row);
  }
  site.closeAllConnections();
  site.close();
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-browser.json`);
  writeFileSync(file, JSON.stringify({ runs: RUNS, levels: LEVELS, results }, null, 2));
  console.log(`written ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Console bench: the console's screens in headless Chromium (Debian's), against a service holding `--checks` checks
 * with a day of runs (4 locations, every 10 minutes) and one API check with 30 days of runs every minute in 22
 * locations. For each screen, `--rounds` loads from a fresh page: the time until it is interactive (Home: every
 * check's row with its strip drawn; a check over 30 days: its bars, location chart and table; a run: its request and
 * response), and the API calls the screen made with their durations. Also the script and style the first load
 * fetches, compressed. Writes bench/results/<time>-console.json.
 *
 *   npm run bench:console -- [--checks 1000] [--rounds 5]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { benchEnvironment, ROOT, removeBenchEnvironment, runCli, ServiceUnderTest } from './harness.js';

const { values } = parseArgs({ options: { checks: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } } });
const CHECKS = Number(values.checks);
const ROUNDS = Number(values.rounds);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'quiet orchard lantern 42';

/** The page's globals, for functions Playwright runs in the page (this project's types have no DOM; a type erases, a helper would not travel). */
type InPage = { document: { querySelectorAll(selector: string): { length: number } } };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (...args: unknown[]) => console.log(new Date().toISOString().slice(11, 19), ...args);

interface Call {
  url: string;
  ms: number;
  status: number;
  method: string;
  path: string;
  body?: string;
}

/** Loads `url` in a fresh page and waits for `ready`; the time it took and the API calls it made. */
async function measure(newPage: () => Promise<Page>, url: string, ready: (page: Page) => Promise<unknown>) {
  const page = await newPage();
  const calls: Call[] = [];
  page.on('requestfinished', (req) => {
    const u = new URL(req.url());
    if (!/^\/(v\d|next)\//.test(u.pathname)) return;
    const t = req.timing();
    void req.response().then(
      (res) =>
        calls.push({
          url: `${req.method()} ${u.pathname}${u.search.slice(0, 120)}`,
          ms: Math.round(t.responseEnd),
          status: res?.status() ?? 0,
          method: req.method(),
          path: `${u.pathname}${u.search}`,
          body: req.postData() ?? undefined,
        }),
      () => undefined,
    );
  });
  const started = performance.now();
  await page.goto(url);
  try {
    await ready(page);
  } catch (err) {
    // What the page showed and what it asked, to see why it never got ready.
    const shot = path.join(ROOT, 'bench/results/console-not-ready.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    const counts = await page.evaluate(() =>
      Object.fromEntries(
        ['.bars .bar', '.chart canvas', 'tbody tr', 'tbody .strip'].map((s) => [s, (globalThis as unknown as InPage).document.querySelectorAll(s).length]),
      ),
    );
    console.error(
      `${url} never got ready (screenshot ${path.relative(ROOT, shot)}); on the page: ${JSON.stringify(counts)}; its API calls:`,
      JSON.stringify(calls),
    );
    throw err;
  }
  const ms = Math.round(performance.now() - started);
  await page.close();
  return { ms, calls };
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  env.RUNNER = 'off';
  env.SCHEDULER = 'off';
  const cli = (...args: string[]) => runCli(env, ...args);
  let svc: ServiceUnderTest | undefined;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    await cli('migrate');
    const accountId = await cli('create-account', '--name', 'console-bench');
    const created = await cli('create-user', '--email', 'bench@console.test', '--account', accountId);
    log('seeding');
    const many = JSON.parse(
      await cli(
        'seed',
        '--account',
        accountId,
        '--checks',
        String(CHECKS),
        '--types',
        'api,url,browser,icmp,tcp',
        '--locations',
        '4',
        '--frequency',
        '10',
        '--days',
        '1',
        '--seed',
        '11',
      ),
    ) as { rows: number };
    const wide = JSON.parse(
      await cli('seed', '--account', accountId, '--checks', '1', '--types', 'api', '--locations', '22', '--frequency', '1', '--days', '30', '--seed', '12'),
    ) as { rows: number; checks: { id: string }[] };
    log(`seeded ${many.rows + wide.rows} rows`);
    svc = await ServiceUnderTest.start(env);
    const base = svc.url;

    // The Owner signs in once (the link create-user printed), sets a password, and each page gets the session cookie.
    const link = new URL(/(http\S+)/.exec(created)![1]!);
    const first = await fetch(`${base}${link.pathname}${link.search}`, { redirect: 'manual' });
    const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;
    const set = await fetch(`${base}/v1/auth/password`, {
      method: 'POST',
      headers: { cookie, origin: base, 'content-type': 'application/json' },
      body: JSON.stringify({ newPassword: PASSWORD }),
    });
    if (!set.ok) throw new Error(`setting the password: ${set.status} ${await set.text()}`);
    const signIn = await fetch(`${base}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@console.test', password: PASSWORD }),
    });
    if (!signIn.ok) throw new Error(`signing in: ${signIn.status} ${await signIn.text()}`);
    const [name, value] = signIn.headers.getSetCookie()[0]!.split(';')[0]!.split('=') as [string, string];
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.addCookies([{ name, value, url: base }]);
    const newPage = () => context.newPage();

    const wideId = wide.checks[0]!.id;
    const results = (await (
      await fetch(`${base}/v1/check-results/${wideId}?limit=1`, { headers: { cookie: `${name}=${value}`, 'x-checkly-account': accountId } })
    ).json()) as { id: string }[];
    const runId = results[0]!.id;

    // The assets the first load fetches, as they travel (gzip).
    const index = await (await fetch(`${base}/`)).text();
    const assets = [...index.matchAll(/(?:src|href)="(\/_console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    const firstLoad: Record<string, number> = {};
    for (const a of assets) firstLoad[a] = gzipSync(Buffer.from(await (await fetch(`${base}${a}`)).arrayBuffer())).length;

    const screens: Record<string, { ms: number[]; calls: Call[] }> = {};
    const run = async (key: string, url: string, ready: (page: Page) => Promise<unknown>) => {
      await measure(newPage, url, ready); // warm-up: the engine's caches, the connection
      const ms: number[] = [];
      let calls: Call[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const m = await measure(newPage, url, ready);
        ms.push(m.ms);
        calls = m.calls;
      }
      screens[key] = { ms, calls };
      log(key, `median ${median(ms)} ms`, JSON.stringify(ms));
    };
    const total = CHECKS + 1;
    await run(`home (${total} checks)`, `${base}/`, (page) =>
      // A function, not a string: the console's policy forbids evaluating strings.
      page.waitForFunction(
        (n) =>
          (globalThis as unknown as InPage).document.querySelectorAll('tbody tr').length === n &&
          (globalThis as unknown as InPage).document.querySelectorAll('tbody .strip').length === n,
        total,
        { timeout: 60_000 },
      ),
    );
    await run('check, 30 days, 22 locations', `${base}/checks/${wideId}?range=30d`, (page) =>
      page.waitForFunction(
        () =>
          (globalThis as unknown as InPage).document.querySelectorAll('.bars .bar').length >= 60 &&
          (globalThis as unknown as InPage).document.querySelectorAll('.chart canvas').length > 0 &&
          (globalThis as unknown as InPage).document.querySelectorAll('section[aria-labelledby="times-title"] .table-wrap tbody tr').length === 22,
        undefined,
        { timeout: 60_000 },
      ),
    );
    await run('run', `${base}/checks/${wideId}/results/${runId}`, (page) => page.getByRole('heading', { name: 'Assertions' }).waitFor({ timeout: 60_000 }));
    // The API reference, side by side: the pre-rendered page (every operation listed) and Swagger UI (its first tag drawn).
    await run('API reference /docs', `${base}/docs`, (page) =>
      page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelectorAll('details.op').length > 150, undefined, { timeout: 60_000 }),
    );
    await run('Swagger UI /docs/try', `${base}/docs/try`, (page) => page.locator('.opblock-tag').first().waitFor({ timeout: 60_000 }));

    // Each distinct call of each screen again, alone (one at a time, twice, the second timed): what it costs
    // without the screen's other calls beside it on this machine's two cores.
    const alone: Record<string, Record<string, number>> = {};
    for (const [key, { calls }] of Object.entries(screens)) {
      alone[key] = {};
      for (const call of new Map(calls.map((c) => [c.url, c])).values()) {
        const send = () =>
          fetch(`${base}${call.path}`, {
            method: call.method,
            headers: { cookie: `${name}=${value}`, origin: base, ...(call.body ? { 'content-type': 'application/json' } : {}) },
            body: call.body,
          });
        await (await send()).arrayBuffer();
        const started = performance.now();
        await (await send()).arrayBuffer();
        alone[key][call.url] = Math.round(performance.now() - started);
      }
    }

    const result = {
      at: new Date().toISOString(),
      data: { checks: total, rows: many.rows + wide.rows },
      firstLoadCompressedBytes: firstLoad,
      screens: Object.fromEntries(
        Object.entries(screens).map(([k, v]) => [
          k,
          {
            medianMs: median(v.ms),
            ms: v.ms,
            apiCalls: v.calls.sort((a, b) => b.ms - a.ms).map(({ url, ms, status }) => ({ url, ms, status })),
            alone: alone[k],
          },
        ]),
      ),
    };
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${result.at.replace(/[:.]/g, '-')}-console.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    log('first load', JSON.stringify(firstLoad));
    for (const [k, v] of Object.entries(result.screens)) {
      log(k, `median ${v.medianMs} ms; slowest calls`, JSON.stringify(v.apiCalls.slice(0, 4)));
      log(
        k,
        'each call alone (ms)',
        JSON.stringify(
          Object.entries(v.alone ?? {})
            .sort((a, b) => b[1] - a[1])
            .slice(0, 6),
        ),
      );
    }
    log(`written ${path.relative(ROOT, file)}`);
  } finally {
    await browser.close();
    await svc?.stop();
    await removeBenchEnvironment(env, dataDir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

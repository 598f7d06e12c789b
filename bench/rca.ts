/**
 * Root-cause analyses bench (docs/rca.md): how long an analysis takes to make (the job's own `durationMs`) and from
 * asking to reading it back, for error groups of checks with a history: `--checks` API checks of `--runs` runs each
 * in two locations, the last sixth failing with a 503, four checks per host. Writes bench/results/<time>-rca.json.
 *
 *   npm run bench:rca -- [--checks 20] [--runs 300]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startTestService, waitFor } from '../test/support/service.js';

const { values } = parseArgs({ options: { checks: { type: 'string', default: '20' }, runs: { type: 'string', default: '300' } } });
const CHECKS = Number(values.checks);
const RUNS = Number(values.runs);

const svc = await startTestService({});
try {
  const checks: string[] = [];
  for (let c = 0; c < CHECKS; c++)
    checks.push(
      (
        await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
          body: { name: `c${c}`, request: { url: `https://h${c % (CHECKS / 4)}.example.test/x` } },
        })
      ).body.id,
    );
  const start = Date.now() - RUNS * 60_000;
  const results = checks.flatMap((checkId) =>
    Array.from({ length: RUNS }, (_, i) => {
      const failed = i > RUNS - RUNS / 6;
      return {
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: i % 2 ? 'eu-west-1' : 'us-east-1',
        startedAt: new Date(start + i * 60_000).toISOString(),
        stoppedAt: new Date(start + i * 60_000 + 50).toISOString(),
        hasFailures: failed,
        responseTime: 50,
        apiCheckResult: {
          request: { method: 'GET', url: 'https://h.example.test/x' },
          response: {
            status: failed ? 503 : 200,
            headers: {},
            body: failed ? '{"e":1}' : '{"ok":1}',
            timingPhases: { dns: 1, tcp: 2, firstByte: 40, download: 1 },
          },
          assertions: [],
          ...(failed ? { errors: [{ message: 'Status code 503' }] } : {}),
        },
      };
    }),
  );
  for (let i = 0; i < results.length; i += 1000) await svc.call('POST', '/v1/check-results', { body: { results: results.slice(i, i + 1000) } });
  await waitFor(
    () => svc.call('GET', `/v1/error-groups/checks/${checks.at(-1)}`),
    (r) => r.body?.length === 1,
    60_000,
  );
  const job: number[] = [];
  const asked: number[] = [];
  for (const id of checks) {
    const group = (await svc.call('GET', `/v1/error-groups/checks/${id}`)).body[0];
    const t0 = performance.now();
    const a = (await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`)).body;
    let done: { status: number; body: { durationMs: number } };
    for (;;) {
      done = await svc.call('GET', `/v1/root-cause-analyses/${a.id}`);
      if (done.status === 200) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    asked.push(Math.round(performance.now() - t0));
    job.push(done.body.durationMs);
  }
  const stats = (ms: number[]) => {
    const s = [...ms].sort((x, y) => x - y);
    return { n: s.length, p50: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))], max: s.at(-1) };
  };
  const report = { at: new Date().toISOString(), checks: CHECKS, runsPerCheck: RUNS, jobMs: stats(job), askToAnswerMs: stats(asked) };
  console.info(JSON.stringify(report, null, 2));
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${report.at.replace(/[:.]/g, '-')}-rca.json`), `${JSON.stringify(report, null, 2)}\n`);
} finally {
  await svc.stop();
}

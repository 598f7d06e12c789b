/**
 * No data bench (docs/analytics.md, "No data"): what counting expected runs costs at scale. `--checks` one-minute
 * API checks in one account (activated a day ago, their statuses as if each ran 10 minutes ago in its location), then:
 * the sweep that looks for checks that stopped (every NO_DATA_SWEEP_SECONDS, one process), `/v1/check-statuses`
 * (every check's run state) and a 24-hour `/v1/reporting` (expected runs per check), each `--rounds` times, beside
 * the same reads' cost without the counting where one exists (the statuses' own query); then the sweep once every
 * check runs again (closing the gaps) and with every check running. Writes
 * bench/results/<time>-no-data.json.
 *
 *   npm run bench:no-data -- [--checks 50000] [--rounds 5]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSeedChecks } from '../src/seed/seeder.js';
import { sweepGaps } from '../src/state/index.js';
import { statusesWithCoverage } from '../src/state/routes.js';
import { readStatuses, toCheckStatus } from '../src/state/statuses.js';
import { startTestService } from '../test/support/service.js';

const { values } = parseArgs({ options: { checks: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '5' } } });
const CHECKS = Number(values.checks);
const ROUNDS = Number(values.rounds);

const svc = await startTestService({ NO_DATA_SWEEP_SECONDS: '3600', LOG_LEVEL: 'warn' });
try {
  await svc.deps.sql`update accounts set rate_limit_points = 1000000 where id = ${svc.defaultAccountId}`;
  const t0 = Date.now();
  const checks = await createSeedChecks(svc.deps.sql, svc.defaultAccountId, { count: CHECKS, types: ['api'], frequency: 1, locations: 1 });
  const ids = checks.map((c) => c.id);
  const ago = new Date(Date.now() - 86_400_000);
  await svc.deps.sql`update check_activity set from_at = ${ago} where account_id = ${svc.defaultAccountId}`;
  const ran = Date.now() - 600_000;
  await svc.deps
    .sql`insert into check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, last_run_location, last_check_run_id, last_run_at, latest_by_location)
    select id, account_id, false, false, false, data->'locations'->>0, gen_random_uuid(), ${new Date(ran)},
      jsonb_build_object(data->'locations'->>0, jsonb_build_object('duration', 100, 'at', ${ran}::bigint))
    from checks where id = any(${ids}::uuid[])`;
  // As autovacuum would have by now: the planner needs the tables' statistics after a bulk load.
  await svc.deps.sql`analyze checks, check_statuses, check_activity, check_gaps`;
  console.log(`${CHECKS} checks and statuses in ${Date.now() - t0} ms`);
  const time = async (what: string, f: () => Promise<unknown>, rounds = ROUNDS) => {
    const ms: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = process.hrtime.bigint();
      await f();
      ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const out = { what, medianMs: Math.round(ms[Math.floor(ms.length / 2)]!), minMs: Math.round(ms[0]!), maxMs: Math.round(ms.at(-1)!) };
    console.log(JSON.stringify(out));
    return out;
  };
  const hooks = { opened: async () => {}, resolved: async () => {} };
  const rows = [
    await time('sweep (every check stopped: opens the gaps)', () =>
      sweepGaps(svc.deps.sql, Date.now(), { afterPeriods: 2, graceMs: 60_000, alerts: false }, hooks),
    ),
    await time('sweep (gaps open, nothing changes)', () => sweepGaps(svc.deps.sql, Date.now(), { afterPeriods: 2, graceMs: 60_000, alerts: false }, hooks)),
    await time('statuses as before no data (rows in the anchor shape, no HTTP)', async () =>
      (await readStatuses(svc.deps.sql, svc.defaultAccountId)).map(toCheckStatus),
    ),
    await time('statuses with run states (no HTTP)', () => statusesWithCoverage(svc.deps.sql, svc.deps.config, svc.defaultAccountId)),
    await time('GET /v1/check-statuses (with run states)', () => svc.call('GET', '/v1/check-statuses')),
    await time('GET /v1/reporting last24Hrs (with expected runs)', () => svc.call('GET', '/v1/reporting?quickRange=last24Hrs')),
  ];
  // Then every check runs again (a run a moment ago in its location): the sweep closes the gaps, and from then on
  // finds every check running, the usual case, where it reads only the checks that may have stopped (none here).
  const again = Date.now() - 10_000;
  await svc.deps.sql`update check_statuses s set last_run_at = ${new Date(again)},
      latest_by_location = jsonb_build_object(c.data->'locations'->>0, jsonb_build_object('duration', 100, 'at', ${again}::bigint))
    from checks c where c.id = s.check_id and s.account_id = ${svc.defaultAccountId}`;
  await svc.deps.sql`analyze check_statuses`;
  const sweep = () => sweepGaps(svc.deps.sql, Date.now(), { afterPeriods: 2, graceMs: 60_000, alerts: false }, hooks);
  rows.push(await time('sweep (every check runs again: closes the gaps)', sweep, 1));
  rows.push(await time('sweep (every check running, no gap: the usual case)', sweep));
  const out = path.join('bench', 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}-no-data.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ checks: CHECKS, rounds: ROUNDS, rows }, null, 2));
  console.log(`written ${out}`);
} finally {
  await svc.stop();
}

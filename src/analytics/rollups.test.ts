import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { toRow } from '../ingest/result-rows.js';
import { loadConfig } from '../platform/config.js';
import { forRollups } from '../storage/clickhouse/ddl.js';
import { BACKGROUND_NICENESS, enginePriorities, threadsAtNiceness } from '../storage/clickhouse/priority.js';
import type { Store } from '../storage/clickhouse/store.js';
import { backfillRollups } from './backfill.js';
import { RollupTicks } from './rollup-ticks.js';
import { ROLLUP_COLUMNS_AT_CREATION, rollupColumns, rollupDdl, rollupMigration, rollupSelect, TIERS } from './rollups.js';

const HOUR = 3_600_000;

import { ROW_COLUMNS } from '../model/results.js';

const runsInOf = async (svc: TestService, table: string, checkId: string) =>
  Number((await svc.deps.store.query<{ n: number }>(`SELECT sum(runs) AS n FROM ${table} WHERE check_id = {c:UUID}`, { c: checkId }))[0].n);
const rows = (accountId: string, checkId: string, n: number, start: number) =>
  Array.from({ length: n }, (_, i) =>
    toRow(accountId, randomUUID(), {
      checkId,
      checkType: 'API',
      runLocation: i % 2 ? 'eu-west-1' : 'us-east-1',
      hasFailures: i % 5 === 0,
      hasErrors: false,
      isDegraded: false,
      aborted: false,
      attempts: 1,
      responseTime: 100 + i,
      startedAt: new Date(start + i * 60_000).toISOString(),
      stoppedAt: new Date(start + i * 60_000 + 50).toISOString(),
    }),
  );

describe('rollups filled by views (ROLLUPS=views, as with ClickHouse servers)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ ROLLUPS: 'views' });
  });
  afterAll(() => svc?.stop());

  const runsIn = (table: string, checkId: string) => runsInOf(svc, table, checkId);

  it('sql/clickhouse/0006_rollups.sql stays as it was created: rollup DDL grows only through new files', () => {
    const file = readFileSync(new URL('../../sql/clickhouse/0006_rollups.sql', import.meta.url), 'utf8');
    expect(file).toBe(rollupDdl(ROLLUP_COLUMNS_AT_CREATION));
  });

  it('a database made from sql/clickhouse has the rollup columns and view queries the code reads', async () => {
    for (const tier of TIERS) {
      const columns = await svc.deps.store.query<{ name: string }>(
        'SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position',
        { t: tier.table },
      );
      expect(columns.map((c) => c.name)).toEqual(rollupColumns(tier).map((c) => c.split(' ')[0]));
      const [view] = await svc.deps.store.query<{ as_select: string }>(
        'SELECT as_select FROM system.tables WHERE database = currentDatabase() AND name = {v:String}',
        { v: tier.view },
      );
      const selected = new Set([...view.as_select.matchAll(/ AS (\w+)/g)].map((m) => m[1]));
      expect(
        rollupColumns(tier)
          .map((c) => c.split(' ')[0])
          .filter((c) => !selected.has(c) && !['account_id', 'check_id', 'run_location', 'has_failures'].includes(c)),
      ).toEqual([]);
    }
  });

  it('the migration that adds metric columns to the rollups runs on an up-to-date database and changes nothing', async () => {
    const before = await svc.deps.store.query(
      'SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position',
      { p: 'check_results_1%' },
    );
    const statements = rollupMigration(['response_time', 'grpc_status_code'])
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n')
      .split(';')
      .map((x) => x.trim())
      .filter(Boolean);
    expect(statements.length).toBe(TIERS.length * 1 + TIERS.reduce((n, t) => n + (t.sketches ? 6 : 5) * 2, 0));
    for (const statement of statements) await svc.deps.store.command(statement);
    const after = await svc.deps.store.query(
      'SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position',
      { p: 'check_results_1%' },
    );
    expect(after).toEqual(before);
    expect(() => rollupMigration(['no_such_column'])).toThrow(/not a metric column/);
  });

  it('a batch ClickHouse deduplicates is not counted twice by the rollup views', async () => {
    const check = randomUUID();
    const batch = rows(svc.defaultAccountId, check, 40, Date.UTC(2026, 10, 10));
    const settings = { insert_deduplication_token: `dup-${check}`, deduplicate_blocks_in_dependent_materialized_views: 1 };
    await svc.deps.store.insert('check_results', ROW_COLUMNS, batch, { settings });
    await svc.deps.store.insert('check_results', ROW_COLUMNS, batch, { settings });
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(40);
  });

  it('writes rollup parts in the Compact format well past the 10 MiB where ClickHouse would go Wide (a merge then holds one buffer a part, not one a column)', async () => {
    // 20,000 checks' runs in one insert: each tier's view writes one part of them, ~12 MB (hour) and ~40 MB (day)
    // uncompressed, a sketch state per metric column in the daily tier.
    const account = randomUUID();
    const start = Date.UTC(2026, 9, 4, 10);
    const batch = Array.from({ length: 20_000 }, (_, i) => rows(account, randomUUID(), 1, start + (i % 60) * 1000)[0]);
    await svc.deps.store.insert('check_results', ROW_COLUMNS, batch);
    const parts = await svc.deps.store.query<{ table: string; part_type: string; bytes: number }>(
      `SELECT table, part_type, data_uncompressed_bytes AS bytes FROM system.parts
        WHERE database = currentDatabase() AND active AND table IN ('check_results_1h', 'check_results_1d') AND partition = '202610'`,
      {},
    );
    for (const tier of TIERS) {
      const largest = parts.filter((p) => p.table === tier.table).sort((a, b) => Number(b.bytes) - Number(a.bytes))[0];
      expect(Number(largest.bytes), tier.table).toBeGreaterThan(10 * 1048576);
      expect(largest.part_type, tier.table).toBe('Compact');
    }
  });

  it('backfill fills the rollups with runs stored before the views, once, and is safe beside new ingest', async () => {
    const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'old', request: { url: 'https://x.test' } } })).body.id as string;
    const [marker] = await svc.deps.store.query<{ at: string }>("SELECT toString(max(at)) AS at FROM rollup_state WHERE key = 'views_created'");
    // Runs stored before the views existed: the views detached while they are written, inserted_at before the marker.
    const day = Date.UTC(2026, 9, 5);
    for (const tier of TIERS) await svc.deps.store.command(`DETACH TABLE ${tier.view}`);
    const old = rows(svc.defaultAccountId, check, 300, day).map((r) => [...r, '2020-01-01 00:00:00.000']);
    await svc.deps.store.insert('check_results', [...ROW_COLUMNS, 'inserted_at'], old);
    for (const tier of TIERS) await svc.deps.store.command(`ATTACH TABLE ${tier.view}`);
    expect(marker.at > '2020-01-01').toBe(true);

    const report = async (precision: string) =>
      (
        await svc.call(
          'GET',
          `/v1/analytics/api-checks/${check}?from=${day / 1000 - 86400}&to=${day / 1000 + 3 * 86400}&metrics=availability,responseTime_avg,responseTime_max,retries&precision=${precision}`,
        )
      ).body.series[0].data;
    const exact = await report('exact');
    expect(exact[0].availability).toBe(80);
    expect(await report('auto')).not.toEqual(exact);

    const first = await backfillRollups(svc.deps.store);
    expect(first.filled).toBeGreaterThanOrEqual(2);
    expect(await report('auto')).toEqual(exact);
    // A second run finds every day done: nothing added.
    const again = await backfillRollups(svc.deps.store);
    expect(again.filled).toBe(0);
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(300);

    // New runs arriving during a backfill go through the views only.
    const fresh = rows(svc.defaultAccountId, check, 30, day + 86_400_000).map((r) => r);
    await Promise.all([svc.deps.store.insert('check_results', ROW_COLUMNS, fresh), backfillRollups(svc.deps.store, { from: day - 86_400_000 })]);
    await waitFor(
      () => runsIn('check_results_1h', check),
      (n) => n === 330,
    );
    expect(await report('auto')).toEqual(await report('exact'));
  });
});

// A tick's statements run below the service's threads: on a busy machine (other test files beside these) they wait.
describe('rollups filled once an hour (ROLLUPS=ticks, the embedded engine)', { timeout: 180_000 }, () => {
  let svc: TestService;
  let ticks: RollupTicks;
  beforeAll(async () => {
    svc = await startTestService();
    ticks = (svc.deps.store as Store & { rollupTicks: RollupTicks }).rollupTicks;
  });
  afterAll(() => svc?.stop());

  const runsIn = (table: string, checkId: string) => runsInOf(svc, table, checkId);
  /** The engine itself, past the ticks: what a writer that crashed half way left. */
  const engine = () => (ticks as unknown as { inner: Store }).inner;
  const newCheck = async (name: string) =>
    (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name, request: { url: 'http://127.0.0.1:9/' } } })).body.id as string;
  const report = async (check: string, from: number, to: number, precision: string) => {
    const res = await svc.call(
      'GET',
      `/v1/analytics/api-checks/${check}?from=${Math.floor(from / 1000)}&to=${Math.floor(to / 1000)}&metrics=availability,responseTime_avg,responseTime_max,retries&aggregationInterval=60&precision=${precision}`,
    );
    expect(res.status, res.text).toBe(200);
    return { data: res.body.series[0].data, sources: res.headers.get('x-analytics-sources') };
  };

  it('is the default of the embedded engine: no view is left, the ticks fill every column the reports read', async () => {
    expect(svc.deps.config.clickhouse.rollups).toBe('ticks');
    for (const tier of TIERS) {
      const columns = await svc.deps.store.query<{ name: string }>(
        'SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position',
        { t: tier.table },
      );
      expect(columns.map((c) => c.name)).toEqual(rollupColumns(tier).map((c) => c.split(' ')[0]));
      const selected = new Set([...rollupSelect(tier).matchAll(/ AS (\w+)/g)].map((m) => m[1]));
      expect(
        rollupColumns(tier)
          .map((c) => c.split(' ')[0])
          .filter((c) => !selected.has(c) && !['account_id', 'check_id', 'run_location', 'has_failures'].includes(c)),
      ).toEqual([]);
      expect(await svc.deps.store.query('SELECT name FROM system.tables WHERE database = currentDatabase() AND name = {v:String}', { v: tier.view })).toEqual(
        [],
      );
    }
    // A later migration of the views' query is left out, and the tables' part of it changes nothing here.
    const before = await svc.deps.store.query(
      'SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position',
      { p: 'check_results_1%' },
    );
    const statements = rollupMigration(['response_time'])
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n')
      .split(';')
      .map((x) => x.trim())
      .filter(Boolean);
    for (const statement of forRollups(statements, 'ticks')) await svc.deps.store.command(statement);
    expect(
      await svc.deps.store.query(
        'SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position',
        { p: 'check_results_1%' },
      ),
    ).toEqual(before);
    expect(forRollups(statements, 'ticks').some((st) => st.includes('MODIFY QUERY'))).toBe(false);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://127.0.0.1:8123', ROLLUPS: 'ticks' })).toThrow(/ROLLUPS/);
    expect(loadConfig({ CLICKHOUSE_URL: 'http://127.0.0.1:8123' }).clickhouse.rollups).toBe('views');
    expect(() => loadConfig({ ROLLUPS: 'sometimes' })).toThrow(/ROLLUPS/);
  });

  it('runs started after the horizon wait for a tick, and the reports read them raw meanwhile: the same answer either way', async () => {
    const check = await newCheck('on time');
    const h0 = ticks.rolledThrough;
    // Five runs from the horizon on (a minute apart), and a window of whole hours around them.
    await svc.deps.store.insert('check_results', ROW_COLUMNS, rows(svc.defaultAccountId, check, 5, h0 + 1000), {
      settings: { insert_deduplication_token: `on-time-${check}` },
    });
    const from = Math.floor(h0 / HOUR) * HOUR;
    const to = Math.ceil((h0 + 6 * 60_000) / HOUR) * HOUR + HOUR;
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(0);
    const before = await report(check, from, to, 'auto');
    expect(before.sources).toBe('raw');
    expect(before.data).toEqual((await report(check, from, to, 'exact')).data);

    // A tick past the hour the runs are in: they are rolled, once, and the report reads the rollup for that hour.
    await ticks.tick(to + 60_000);
    expect(ticks.rolledThrough).toBe(to);
    await ticks.tick(to + 60_000);
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(5);
    const after = await report(check, from, to, 'auto');
    expect(after.sources).toContain('rollup:hour');
    expect(after.data).toEqual(before.data);
  });

  it('a run stored after the horizon passed its start is rolled as it is stored, once, however often its insert is repeated', async () => {
    const check = await newCheck('late');
    const day = Date.UTC(2026, 10, 10);
    const batch = rows(svc.defaultAccountId, check, 40, day);
    const settings = { insert_deduplication_token: `late-${check}` };
    await svc.deps.store.insert('check_results', ROW_COLUMNS, batch, { settings });
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(40);
    await svc.deps.store.insert('check_results', ROW_COLUMNS, batch, { settings });
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(40);
    const auto = await report(check, day - HOUR, day + 2 * HOUR, 'auto');
    expect(auto.sources).toContain('rollup:hour');
    expect(auto.data).toEqual((await report(check, day - HOUR, day + 2 * HOUR, 'exact')).data);

    // A writer that died between storing late runs and rolling them: ingest's repeat of the batch finds them stored
    // and settles them; settling again changes nothing.
    const crashed = await newCheck('crashed');
    const stored = rows(svc.defaultAccountId, crashed, 30, day).map((r) => [...r, 'batch-that-crashed']);
    await engine().insert('check_results', [...ROW_COLUMNS, 'late_batch'], stored);
    for (const tier of TIERS) expect(await runsIn(tier.table, crashed)).toBe(0);
    const runs = stored.map((r) => ({
      resultId: String(r[ROW_COLUMNS.indexOf('result_id')]),
      startedAt: Date.parse(`${String(r[ROW_COLUMNS.indexOf('started_at')]).replace(' ', 'T')}Z`),
    }));
    await svc.deps.store.settleLateRuns!(runs.slice(0, 10));
    for (const tier of TIERS) expect(await runsIn(tier.table, crashed)).toBe(30);
    await svc.deps.store.settleLateRuns!(runs.slice(10));
    for (const tier of TIERS) expect(await runsIn(tier.table, crashed)).toBe(30);
  });

  it('services side by side in one process share its one engine, and so one horizon and one lock', async () => {
    const other = await startTestService();
    try {
      expect((other.deps.store as Store & { rollupTicks: RollupTicks }).rollupTicks).toBe(ticks);
    } finally {
      await other.stop();
    }
    // The other letting go leaves the ticks running for this one.
    const check = await newCheck('after the other');
    await svc.deps.store.insert('check_results', ROW_COLUMNS, rows(svc.defaultAccountId, check, 2, Date.UTC(2026, 10, 12)));
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(2);
  });

  it('a tick a crash cut short is redone over the same range, and what it had rolled is not counted twice', async () => {
    const check = await newCheck('tick crash');
    const h = ticks.rolledThrough;
    // The horizon moves in whole hours: the range a tick rolls ends at the next one.
    const next = Math.floor(h / HOUR) * HOUR + HOUR;
    await svc.deps.store.insert('check_results', ROW_COLUMNS, rows(svc.defaultAccountId, check, 3, h + 1000));
    // And more checks than one tick statement takes (2,000), each with a run in the range: the tick is split into parts.
    const many = randomUUID();
    const spread = Array.from({ length: 12_000 }, (_, i) => rows(many, randomUUID(), 1, h + 2000 + ((i * 997) % (next - h - 3000)))[0]);
    await svc.deps.store.insert('check_results', ROW_COLUMNS, spread);
    const manyIn = async (table: string) =>
      Number((await svc.deps.store.query<{ n: number }>(`SELECT sum(runs) AS n FROM ${table} WHERE account_id = {a:UUID}`, { a: many }))[0].n);
    // The process crashes after three of the tick's statements (parts of the first tier).
    const inner = engine();
    const command = inner.command.bind(inner);
    let statements = 0;
    inner.command = async (sql, params, options) => {
      if (sql.startsWith('INSERT INTO check_results_1') && ++statements > 3) throw new Error('the process died');
      return command(sql, params, options);
    };
    await expect(ticks.tick(next + 60_000)).rejects.toThrow('the process died');
    inner.command = command;
    expect(ticks.rolledThrough).toBe(h);
    expect(await manyIn(TIERS[0].table)).toBeGreaterThan(0);
    expect(await manyIn(TIERS[0].table)).toBeLessThan(12_000);
    // The process that restarts reads the horizon, the range the tick had begun and its split, and finishes it before
    // anything else (in the background: a tick asked now goes after it). What the first one rolled is not counted again.
    const restarted = new RollupTicks(inner, { logger: svc.deps.logger, everyMs: 3_600_000 });
    try {
      await restarted.start();
      await restarted.tick();
      expect(restarted.rolledThrough).toBe(next);
      for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(3);
      for (const tier of TIERS) expect(await manyIn(tier.table)).toBe(12_000);
      // Redone once more (this process's ticks still hold the range as begun): repeats, dropped.
      await ticks.tick(next + 60_000);
      expect(ticks.rolledThrough).toBe(next);
      for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(3);
      for (const tier of TIERS) expect(await manyIn(tier.table)).toBe(12_000);
    } finally {
      await restarted.close();
    }
  });

  it.skipIf(process.platform !== 'linux')(
    "runs a tick's statements below the service's own threads, and leaves no thread of the engine at that priority",
    async () => {
      const h = ticks.rolledThrough;
      const next = Math.floor(h / HOUR) * HOUR + HOUR;
      const many = randomUUID();
      // More checks than one statement takes (2,000): a tick of several statements.
      const spread = Array.from({ length: 4_500 }, (_, i) => rows(many, randomUUID(), 1, h + 2000 + ((i * 997) % (next - h - 3000)))[0]);
      await svc.deps.store.insert('check_results', ROW_COLUMNS, spread);
      // The store asks the engine to nice its threads only where it may put them back (CAP_SYS_NICE) and the service
      // runs at niceness 0.
      const mayNice = enginePriorities;
      expect(threadsAtNiceness(BACKGROUND_NICENESS)).toEqual([]);
      const seen = new Set<string>();
      const sampler = setInterval(() => threadsAtNiceness(BACKGROUND_NICENESS).forEach((t) => seen.add(t)), 2);
      try {
        await ticks.tick(next + 60_000);
      } finally {
        clearInterval(sampler);
      }
      expect(ticks.rolledThrough).toBe(next);
      expect(
        Number((await svc.deps.store.query<{ n: number }>('SELECT sum(runs) AS n FROM check_results_1d WHERE account_id = {a:UUID}', { a: many }))[0].n),
      ).toBe(4_500);
      if (mayNice) expect(seen.size).toBeGreaterThan(0);
      else expect(seen.size).toBe(0);
      // Put back: threads the engine started while a statement ran were niced from birth, and would run what comes next.
      expect(threadsAtNiceness(BACKGROUND_NICENESS)).toEqual([]);
      // A query after it runs at the service's priority.
      const during = new Set<string>();
      const watch = setInterval(() => threadsAtNiceness(BACKGROUND_NICENESS).forEach((t) => during.add(t)), 2);
      try {
        await svc.deps.store.query('SELECT account_id, sum(runs) FROM check_results_1h GROUP BY account_id');
      } finally {
        clearInterval(watch);
      }
      expect([...during]).toEqual([]);
    },
  );

  it('moves the horizon in whole hours, and rolls a run stored while a tick rolls its range as late, once', async () => {
    const h = ticks.rolledThrough;
    const next = Math.floor(h / HOUR) * HOUR + HOUR;
    // Less than an hour past the horizon's hour: nothing to roll yet.
    await ticks.tick(next - 1000 + 60_000);
    expect(ticks.rolledThrough).toBe(h);
    const check = await newCheck('during a tick');
    await svc.deps.store.insert('check_results', ROW_COLUMNS, rows(svc.defaultAccountId, check, 2, h + 1000));
    const rolling = ticks.tick(next + 60_000);
    // Stored while the tick's statements run (they hold no lock): started in its range, so rolled as late.
    await svc.deps.store.insert('check_results', ROW_COLUMNS, rows(svc.defaultAccountId, check, 2, h + 5000));
    await rolling;
    expect(ticks.rolledThrough).toBe(next);
    for (const tier of TIERS) expect(await runsIn(tier.table, check)).toBe(4);
  });
});

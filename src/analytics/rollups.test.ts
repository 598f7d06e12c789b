import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toRow } from '../ingest/rows.js';
import { startTestService, waitFor, type TestService } from '../../test/support/service.js';
import { backfillRollups } from './backfill.js';
import { rollupColumns, rollupDdl, rollupMigration, ROLLUP_COLUMNS_AT_CREATION, TIERS } from './rollups.js';
import { ROW_COLUMNS } from '../model/results.js';

describe('rollups', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  const runsIn = async (table: string, checkId: string) =>
    Number((await svc.deps.store.query<{ n: number }>(`SELECT sum(runs) AS n FROM ${table} WHERE check_id = {c:UUID}`, { c: checkId }))[0].n);
  const rows = (accountId: string, checkId: string, n: number, start: number) =>
    Array.from({ length: n }, (_, i) =>
      toRow(accountId, randomUUID(), {
        checkId, checkType: 'API', runLocation: i % 2 ? 'eu-west-1' : 'us-east-1', hasFailures: i % 5 === 0, hasErrors: false, isDegraded: false,
        aborted: false, attempts: 1, responseTime: 100 + i, startedAt: new Date(start + i * 60_000).toISOString(), stoppedAt: new Date(start + i * 60_000 + 50).toISOString(),
      }),
    );

  it('sql/clickhouse/0006_rollups.sql stays as it was created: rollup DDL grows only through new files', () => {
    const file = readFileSync(new URL('../../sql/clickhouse/0006_rollups.sql', import.meta.url), 'utf8');
    expect(file).toBe(rollupDdl(ROLLUP_COLUMNS_AT_CREATION));
  });

  it('a database made from sql/clickhouse has the rollup columns and view queries the code reads', async () => {
    for (const tier of TIERS) {
      const columns = await svc.deps.store.query<{ name: string }>('SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position', { t: tier.table });
      expect(columns.map((c) => c.name)).toEqual(rollupColumns(tier).map((c) => c.split(' ')[0]));
      const [view] = await svc.deps.store.query<{ as_select: string }>('SELECT as_select FROM system.tables WHERE database = currentDatabase() AND name = {v:String}', { v: tier.view });
      const selected = new Set([...view.as_select.matchAll(/ AS (\w+)/g)].map((m) => m[1]));
      expect(rollupColumns(tier).map((c) => c.split(' ')[0]).filter((c) => !selected.has(c) && !['account_id', 'check_id', 'run_location', 'has_failures'].includes(c))).toEqual([]);
    }
  });

  it('the migration that adds metric columns to the rollups runs on an up-to-date database and changes nothing', async () => {
    const before = await svc.deps.store.query('SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position', { p: 'check_results_1%' });
    const statements = rollupMigration(['response_time', 'grpc_status_code']).split('\n').filter((l) => !l.startsWith('--')).join('\n').split(';').map((x) => x.trim()).filter(Boolean);
    expect(statements.length).toBe(TIERS.length * 1 + TIERS.reduce((n, t) => n + (t.sketches ? 6 : 5) * 2, 0));
    for (const statement of statements) await svc.deps.store.command(statement);
    const after = await svc.deps.store.query('SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table LIKE {p:String} ORDER BY table, position', { p: 'check_results_1%' });
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
      (await svc.call('GET', `/v1/analytics/api-checks/${check}?from=${day / 1000 - 86400}&to=${day / 1000 + 3 * 86400}&metrics=availability,responseTime_avg,responseTime_max,retries&precision=${precision}`)).body.series[0].data;
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
    await Promise.all([
      svc.deps.store.insert('check_results', ROW_COLUMNS, fresh),
      backfillRollups(svc.deps.store, { from: day - 86_400_000 }),
    ]);
    await waitFor(() => runsIn('check_results_1h', check), (n) => n === 330);
    expect(await report('auto')).toEqual(await report('exact'));
  });
});

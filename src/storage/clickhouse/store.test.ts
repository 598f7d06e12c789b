import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseShim } from '../../../test/support/clickhouse-http-shim.js';
import { PROCESS_DATA_DIR } from '../../../test/support/service.js';
import { toRow } from '../../ingest/result-rows.js';
import { ROW_COLUMNS } from '../../model/results.js';
import { applyClickhouseDdl } from './ddl.js';
import { EmbeddedStore } from './embedded.js';
import { enginePriorities, MERGE_NICENESS } from './priority.js';
import { ServerStore } from './server.js';
import type { Store } from './store.js';

const DDL_SETTINGS = { retentionDays: 400, rollupRetentionDays: { hour: 800, day: 3650 } };

/** The same contract, run on each backend: identical SQL must give identical answers. */
function storeContract(name: string, open: () => Promise<{ store: Store; close: () => Promise<void> }>) {
  describe(`${name} store`, () => {
    let store: Store;
    let close: () => Promise<void>;
    const account = randomUUID();
    const check = randomUUID();

    beforeAll(async () => {
      ({ store, close } = await open());
      await applyClickhouseDdl(store, DDL_SETTINGS);
      await applyClickhouseDdl(store, DDL_SETTINGS); // idempotent
    });
    afterAll(() => close?.());

    const rows = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        toRow(account, randomUUID(), {
          checkId: check,
          checkType: 'API',
          runLocation: i % 2 ? 'eu-west-1' : "it's-private",
          hasFailures: i === 0,
          hasErrors: false,
          isDegraded: false,
          aborted: false,
          attempts: 1,
          responseTime: 100 + i,
          startedAt: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString(),
          stoppedAt: new Date(Date.UTC(2026, 10, 1, 0, i, 1)).toISOString(),
        }),
      );

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('inserts once per deduplication token', async () => {
      const batch = rows(10);
      await store.insert('check_results', ROW_COLUMNS, batch, { settings: { insert_deduplication_token: `t-${check}` } });
      await store.insert('check_results', ROW_COLUMNS, batch, { settings: { insert_deduplication_token: `t-${check}` } });
      const [{ n }] = await store.query<{ n: number }>('SELECT count() AS n FROM check_results WHERE check_id = {c:UUID}', { c: check });
      expect(n).toBe(10);
    });

    it('binds every parameter type the service uses and returns typed rows', async () => {
      const result = await store.queryWithStats<{ n: number; total: number; first: string; locations: string[] }>(
        `SELECT count() AS n, sum(response_time) AS total, min(started_at) AS first, groupArray(DISTINCT run_location) AS locations
         FROM check_results
         WHERE account_id = {account:UUID} AND check_id = {check:UUID}
           AND started_at >= {from:DateTime64(3)} AND started_at < {to:DateTime64(3)}
           AND (run_location IN {locations:Array(String)} OR run_location = {odd:String}) AND has_failures = {failed:Bool}`,
        {
          account,
          check,
          from: '2026-11-01 00:02:00.000',
          to: '2026-11-01 00:08:00.000',
          locations: ['eu-west-1', 'ap-south-1'],
          odd: "it's-private",
          failed: false,
        },
      );
      expect(result.rows).toHaveLength(1);
      const [row] = result.rows;
      expect(row.n).toBe(6);
      expect(row.total).toBe(102 + 103 + 104 + 105 + 106 + 107);
      expect(new Date(`${row.first.replace(' ', 'T')}${row.first.endsWith('Z') ? '' : 'Z'}`).toISOString()).toBe('2026-11-01T00:02:00.000Z');
      expect(row.locations.sort()).toEqual(['eu-west-1', "it's-private"]);
      // Rows scanned, not rows returned: at least the six rows that matched were read.
      expect(result.stats.rowsRead).toBeGreaterThanOrEqual(6);
    });

    it('answers correctly right after a query that failed', async () => {
      const big = 'SELECT length(groupArray(number)) AS n FROM numbers(100000) WHERE number >= {low:UInt8} SETTINGS max_memory_usage = 1';
      await expect(store.query(big, { low: 1 })).rejects.toThrow(/memory/i);
      const sql = 'SELECT number AS n FROM numbers(10) WHERE number < {top:UInt8} ORDER BY n';
      expect(await store.query<{ n: number }>(sql, { top: 3 })).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    });

    it('round-trips awkward strings as parameters', async () => {
      const odd = "it's \\ a\ttab\nnewline 'quoted' {x:String}";
      const [row] = await store.query<{ s: string; l: number }>('SELECT {s:String} AS s, length({s:String}) AS l', { s: odd });
      expect(row).toEqual({ s: odd, l: Buffer.byteLength(odd) });
    });

    it('rejects a value that does not fit its declared type', async () => {
      await expect(store.query('SELECT {n:UInt32} AS n', { n: 'not a number' })).rejects.toThrow();
    });

    it('refuses identifiers outside the allowed shape', async () => {
      await expect(store.insert('check_results; DROP TABLE x', ROW_COLUMNS, rows(1))).rejects.toThrow(/Invalid identifier/);
    });
  });
}

storeContract('embedded', async () => {
  const store = new EmbeddedStore(PROCESS_DATA_DIR);
  return { store, close: () => store.close() };
});

describe('embedded store: background statements', () => {
  let store: EmbeddedStore;
  beforeAll(() => {
    store = new EmbeddedStore(PROCESS_DATA_DIR);
  });
  afterAll(() => store?.close());

  it("never hold up the service's own statements: a query with parameters and an insert finish while one runs", async () => {
    const order: string[] = [];
    // About 3 s of the engine's time (sleepEachRow, 0.5 s a row), on the background connection.
    const slow = store.command('SELECT sleepEachRow(0.5) FROM numbers(6) FORMAT Null', {}, { background: true }).then(() => order.push('background'));
    // Under way before the others are asked (the engine's own list of running queries shows it).
    let seen = false;
    for (let i = 0; i < 200 && !seen; i++) {
      const running = await store.query<{ n: number }>(
        "SELECT count() AS n FROM system.processes WHERE query LIKE '%sleepEachRow(0.5)%' AND query NOT LIKE '%system.processes%'",
      );
      seen = Number(running[0].n) >= 1;
      if (!seen) await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe(true);
    await store.query<{ n: number }>('SELECT {n:UInt8} AS n', { n: 7 }).then(() => order.push('query'));
    await store.insert('rollup_state', ['key', 'at'], [[`background-${randomUUID()}`, '2026-11-28 00:00:00.000']]).then(() => order.push('insert'));
    await slow;
    expect(order).toEqual(['query', 'insert', 'background']);
  });

  it.skipIf(!enginePriorities)('merges run below the service (the engine was started with their niceness)', async () => {
    const [row] = await store.query<{ value: string }>("SELECT value FROM system.server_settings WHERE name = 'os_threads_nice_value_merge_mutate'");
    expect(Number(row.value)).toBe(MERGE_NICENESS);
  });

  it('take no parameters (chdb would run them in line with every statement that has some)', async () => {
    await expect(store.command('SELECT {n:UInt8}', { n: 1 }, { background: true })).rejects.toThrow(/no parameters/);
  });
});

storeContract('server (HTTP interface answered by the embedded engine)', async () => {
  const shim = await startClickHouseShim(path.join(PROCESS_DATA_DIR, 'clickhouse'));
  const store = new ServerStore({ url: shim.url, user: 'default', password: '', database: 'default' });
  return {
    store,
    close: async () => {
      await store.close();
      await shim.close();
    },
  };
});

describe.skipIf(!process.env.CLICKHOUSE_URL)('server store against CLICKHOUSE_URL', () => {
  storeContract('real server', async () => {
    const store = new ServerStore({
      url: process.env.CLICKHOUSE_URL!,
      user: process.env.CLICKHOUSE_USER ?? 'default',
      password: process.env.CLICKHOUSE_PASSWORD ?? '',
      database: process.env.CLICKHOUSE_DATABASE ?? 'default',
    });
    return { store, close: () => store.close() };
  });
});
if (!process.env.CLICKHOUSE_URL) {
  console.info('Skipping the real ClickHouse server store tests: CLICKHOUSE_URL is not set (the HTTP-interface tests above still ran).');
}

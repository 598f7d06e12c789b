import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROCESS_DATA_DIR } from '../../../test/support/service.js';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { clickhouseStatements } from './ddl.js';
import { EmbeddedStore } from './embedded.js';

const SETTINGS = { retentionDays: 400, rollupRetentionDays: { hour: 800, day: 3650 } };

describe('the cluster DDL (CLICKHOUSE_CLUSTER)', () => {
  let store: EmbeddedStore;
  let statements: string[];
  beforeAll(async () => {
    store = new EmbeddedStore(PROCESS_DATA_DIR);
    statements = await clickhouseStatements({ ...SETTINGS, cluster: 'monitoring' });
  });
  afterAll(() => store?.close());

  it('parses, every statement, in the engine (EXPLAIN AST)', async () => {
    expect(statements.length).toBeGreaterThan(10);
    for (const statement of statements) {
      const ast = await store.query<{ explain: string }>(`EXPLAIN AST ${statement}`);
      expect(ast.length, statement.slice(0, 120)).toBeGreaterThan(0);
    }
  });

  it('creates replicated local tables ON CLUSTER and Distributed tables sharded by check in front', () => {
    const plain = statements.join('\n\n');
    for (const table of ['check_results', 'check_results_1h', 'check_results_1d']) {
      expect(plain).toContain(`CREATE TABLE IF NOT EXISTS ${table}_local ON CLUSTER monitoring`);
      expect(plain).toContain(
        `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER monitoring AS ${table}_local\nENGINE = Distributed(monitoring, currentDatabase(), ${table}_local, cityHash64(check_id))`,
      );
    }
    expect(plain).toContain("ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/check_results_local', '{replica}')");
    expect(plain).toContain("ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/check_results_1h_local', '{replica}')");
    expect(plain).toContain('CREATE MATERIALIZED VIEW IF NOT EXISTS check_results_1h_mv ON CLUSTER monitoring TO check_results_1h_local AS');
    expect(plain).not.toMatch(/FROM check_results\n/);
    expect(plain).not.toContain('non_replicated_deduplication_window');
    expect(plain).toContain('ALTER TABLE check_results_local ON CLUSTER monitoring ADD PROJECTION');
    expect(plain).toContain('ALTER TABLE check_results ON CLUSTER monitoring ADD COLUMN IF NOT EXISTS in_maintenance');
  });

  it('is the same as the single-node DDL without a cluster', async () => {
    const single = await clickhouseStatements(SETTINGS);
    expect(single.join('\n')).not.toContain('ON CLUSTER');
    expect(single.some((s) => s.startsWith('CREATE TABLE IF NOT EXISTS check_results\n'))).toBe(true);
  });

  it('needs ClickHouse servers and a plain name', () => {
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'monitoring' })).toThrow(ConfigError);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'bad name;' })).toThrow(/CLICKHOUSE_CLUSTER/);
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'monitoring' }).clickhouse.cluster).toBe('monitoring');
  });
});

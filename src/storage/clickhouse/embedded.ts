import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'chdb';
import { OUTPUT_SETTINGS, parseJsonEachRow, type QueryParams, type Store } from './store.js';

const INSERT_TABLE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * The embedded engine (chdb): a real ClickHouse in this process, data under `dataDir`. The async API runs
 * queries on libuv threads, so the event loop stays free. libchdb binds one data directory per process.
 */
export class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  private readonly session: Session;

  constructor(dataDir: string) {
    const dir = path.join(dataDir, 'clickhouse');
    mkdirSync(dir, { recursive: true });
    this.session = new Session(dir, {
      connectionArgs: Object.entries(OUTPUT_SETTINGS).map(([k, v]) => `--${k}=${v}`),
    });
  }

  async query<T>(sql: string, params: QueryParams = {}): Promise<T[]> {
    return (await this.queryWithStats<T>(sql, params)).rows;
  }

  async queryWithStats<T>(sql: string, params: QueryParams = {}) {
    const result = await this.session.queryBindAsync(sql, params, { format: 'JSONEachRow' });
    return {
      rows: parseJsonEachRow<T>(result.text()),
      stats: { elapsedMs: result.elapsed * 1000, rowsRead: result.rowsRead },
    };
  }

  async command(sql: string, params: QueryParams = {}): Promise<void> {
    await this.session.queryBindAsync(sql, params);
  }

  async insert(table: string, rows: readonly Record<string, unknown>[], settings: Record<string, string | number> = {}) {
    if (!INSERT_TABLE.test(table)) throw new Error(`Invalid table name: ${table}`);
    if (rows.length === 0) return;
    let payload = '';
    for (const row of rows) payload += `${JSON.stringify(row)}\n`;
    await this.session.insert({ table, values: Buffer.from(payload), format: 'JSONEachRow', settings });
  }

  async ping(): Promise<void> {
    await this.session.queryAsync('SELECT 1');
  }

  async close(): Promise<void> {
    this.session.close();
  }
}

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'chdb';
import { storeCall } from './errors.js';
import { assertIdentifiers, OUTPUT_SETTINGS, parseJsonFormat, settingsClause, type InsertOptions, type QueryOptions, type QueryParams, type Store } from './store.js';

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

  async query<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<T[]> {
    return (await this.queryWithStats<T>(sql, params, options)).rows;
  }

  async queryWithStats<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}) {
    // chdb takes settings only in the text: the checked settings become its SETTINGS clause. It has no query
    // ids; an abort stops waiting (the engine finishes the query in the background).
    const withSettings = sql + settingsClause(options.settings);
    // FORMAT JSON carries the engine's statistics (rows scanned); chdb's own rowsRead counts rows returned.
    const result = await storeCall(
      'query',
      () => this.session.queryBindAsync(withSettings, params, { format: 'JSON', ...(options.signal ? { signal: options.signal } : {}) }),
      options.signal,
    );
    const text = result.text();
    if (!text) return { rows: [] as T[], stats: { elapsedMs: result.elapsed * 1000, rowsRead: 0 } };
    const parsed = parseJsonFormat<T>(text);
    return { rows: parsed.data, stats: { elapsedMs: parsed.statistics.elapsed * 1000, rowsRead: parsed.statistics.rows_read } };
  }

  async command(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<void> {
    const withSettings = sql + settingsClause(options.settings);
    await storeCall('command', () => this.session.queryBindAsync(withSettings, params, options.signal ? { signal: options.signal } : {}), options.signal);
  }

  async insert(table: string, columns: readonly string[], rows: readonly unknown[][], options: InsertOptions = {}) {
    assertIdentifiers(table, columns);
    if (rows.length === 0) return;
    const lines = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) lines[i] = JSON.stringify(rows[i]);
    lines.push('');
    const values = Buffer.from(lines.join('\n'));
    await storeCall('insert', () => this.session.insert({ table, columns, values, format: 'JSONCompactEachRow', settings: options.settings ?? {} }), options.signal);
  }

  async ping(): Promise<void> {
    await storeCall('ping', () => this.session.queryAsync('SELECT 1'));
  }

  async close(): Promise<void> {
    this.session.close();
  }
}

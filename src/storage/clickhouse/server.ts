import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { JsonRows } from '../../model/json-bytes.js';
import { StoreError, storeCall } from './errors.js';
import { BACKGROUND_NICENESS } from './priority.js';
import { assertIdentifiers, type InsertOptions, OUTPUT_SETTINGS, type QueryOptions, type QueryParams, type Store, settingsClause } from './store.js';

/** A ClickHouse server over HTTP. Kept thin: the SQL is the same text the embedded engine runs. */
export class ServerStore implements Store {
  readonly kind = 'server' as const;
  private readonly client: ClickHouseClient;

  constructor(opts: { url: string; user: string; password: string; database: string }) {
    this.client = createClient({
      url: opts.url,
      username: opts.user,
      password: opts.password,
      database: opts.database,
      clickhouse_settings: { ...OUTPUT_SETTINGS },
    });
  }

  async query<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<T[]> {
    return (await this.queryWithStats<T>(sql, params, options)).rows;
  }

  async queryWithStats<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}) {
    const started = performance.now();
    settingsClause(options.settings); // the same checks as the embedded backend
    const { result, rows } = await storeCall(
      'query',
      async () => {
        const result = await this.client.query({
          query: sql,
          query_params: params,
          format: 'JSONEachRow',
          ...this.common(options),
        });
        return { result, rows: await result.json<T>() };
      },
      options.signal,
    );
    const summary = result.response_headers['x-clickhouse-summary'];
    const parsed = typeof summary === 'string' ? (JSON.parse(summary) as { read_rows?: string; elapsed_ns?: string }) : {};
    return {
      rows,
      stats: {
        elapsedMs: parsed.elapsed_ns ? Number(parsed.elapsed_ns) / 1e6 : performance.now() - started,
        rowsRead: Number(parsed.read_rows ?? 0),
      },
    };
  }

  /** Settings, query id and abort signal as the client takes them, for every kind of call. */
  private common(options: { settings?: Record<string, string | number>; queryId?: string; signal?: AbortSignal; background?: boolean }) {
    // A background statement is niced by the server (a no-op where it lacks CAP_SYS_NICE).
    const settings = options.background ? { ...options.settings, os_thread_priority: BACKGROUND_NICENESS } : options.settings;
    return {
      ...(settings ? { clickhouse_settings: settings } : {}),
      ...(options.queryId ? { query_id: options.queryId } : {}),
      ...(options.signal ? { abort_signal: options.signal } : {}),
    };
  }

  async command(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<void> {
    settingsClause(options.settings);
    await storeCall('command', () => this.client.command({ query: sql, query_params: params, ...this.common(options) }), options.signal);
  }

  async insert(table: string, columns: readonly string[], rows: readonly unknown[][] | JsonRows, options: InsertOptions = {}) {
    assertIdentifiers(table, columns);
    if (rows.length === 0) return;
    await storeCall(
      'insert',
      () =>
        this.client.insert({
          table,
          columns: columns as [string, ...string[]],
          // The client encodes values itself: rows written before are given as values.
          values: rows instanceof JsonRows ? rows.arrays() : (rows as unknown[][]),
          format: 'JSONCompactEachRow',
          ...this.common(options),
        }),
      options.signal,
    );
  }

  async ping(): Promise<void> {
    const result = await this.client.ping();
    if (!result.success) throw StoreError.from(result.error, 'ping');
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

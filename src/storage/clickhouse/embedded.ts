import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'chdb';
import { JsonRows, jsonRowsBytes } from '../../model/json-bytes.js';
import { storeCall } from './errors.js';
import { BACKGROUND_NICENESS, enginePriorities, inBackground, MERGE_NICENESS } from './priority.js';
import {
  assertIdentifiers,
  type InsertOptions,
  OUTPUT_SETTINGS,
  parseJsonFormat,
  type QueryOptions,
  type QueryParams,
  type Store,
  settingsClause,
} from './store.js';

/**
 * The embedded engine (chdb): a real ClickHouse in this process, data under `dataDir`. The async API runs
 * queries on libuv threads, so the event loop stays free. libchdb binds one data directory per process.
 */
export class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  private readonly dir: string;
  private readonly session: Session;
  /** The background statements' own connection (made at the first): the engine runs one statement at a time a connection. */
  private backgroundSession?: Session;
  private closed = false;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'clickhouse');
    mkdirSync(this.dir, { recursive: true });
    this.session = this.connect();
  }

  private connect(): Session {
    // Merges below the service's own threads (priority.ts); the engine takes its server settings as arguments too.
    // The engine's memory worker corrects its memory tracker every 1 s rather than its default 100 ms: ten wakeups a
    // second of a thread of its own were a third of an idle service's CPU (issue 57).
    const base = { ...OUTPUT_SETTINGS, memory_worker_period_ms: 1000 };
    const settings = enginePriorities ? { ...base, os_threads_nice_value_merge_mutate: MERGE_NICENESS } : base;
    return new Session(this.dir, { connectionArgs: Object.entries(settings).map(([k, v]) => `--${k}=${v}`) });
  }

  /**
   * A background statement (QueryOptions.background) runs niced, on a connection of its own, so the service's own
   * statements never wait behind it: the engine runs one statement at a time a connection, and chdb runs statements
   * with parameters one at a time in the whole process, whatever their connection. So it takes none (a tick writes its
   * range in the text); the threads it left niced are put back once no background statement runs.
   */
  private runInBackground(operation: 'query' | 'command', sql: string, params: QueryParams, options: QueryOptions, format?: string) {
    if (Object.keys(params).length) throw new Error('a background statement takes no parameters (chdb would run it in line with every other)');
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    this.backgroundSession ??= this.connect();
    const session = this.backgroundSession;
    const text = sql + settingsClause(enginePriorities ? { ...options.settings, os_thread_priority: BACKGROUND_NICENESS } : options.settings);
    return inBackground(() =>
      storeCall(
        operation,
        () => session.queryAsync(text, { ...(format ? { format } : {}), ...(options.signal ? { signal: options.signal } : {}) }),
        options.signal,
      ),
    );
  }

  async query<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<T[]> {
    return (await this.queryWithStats<T>(sql, params, options)).rows;
  }

  async queryWithStats<T>(sql: string, params: QueryParams = {}, options: QueryOptions = {}) {
    // chdb takes settings only in the text: the checked settings become its SETTINGS clause. It has no query
    // ids; an abort stops waiting (the engine finishes the query in the background).
    // FORMAT JSON carries the engine's statistics (rows scanned); chdb's own rowsRead counts rows returned.
    const result = options.background
      ? await this.runInBackground('query', sql, params, options, 'JSON')
      : await storeCall(
          'query',
          () =>
            this.session.queryBindAsync(sql + settingsClause(options.settings), params, {
              format: 'JSON',
              ...(options.signal ? { signal: options.signal } : {}),
            }),
          options.signal,
        );
    const text = result.text();
    if (!text) return { rows: [] as T[], stats: { elapsedMs: result.elapsed * 1000, rowsRead: 0 } };
    const parsed = parseJsonFormat<T>(text);
    return { rows: parsed.data, stats: { elapsedMs: parsed.statistics.elapsed * 1000, rowsRead: parsed.statistics.rows_read } };
  }

  async command(sql: string, params: QueryParams = {}, options: QueryOptions = {}): Promise<void> {
    if (options.background) {
      await this.runInBackground('command', sql, params, options);
      return;
    }
    const text = sql + settingsClause(options.settings);
    await storeCall('command', () => this.session.queryBindAsync(text, params, options.signal ? { signal: options.signal } : {}), options.signal);
  }

  async insert(table: string, columns: readonly string[], rows: readonly unknown[][] | JsonRows, options: InsertOptions = {}) {
    assertIdentifiers(table, columns);
    if (rows.length === 0) return;
    // JSONCompactEachRow takes rows separated by commas as well as by lines.
    const values = rows instanceof JsonRows ? rows.bytes() : jsonRowsBytes(rows);
    await storeCall(
      'insert',
      () => this.session.insert({ table, columns, values, format: 'JSONCompactEachRow', settings: options.settings ?? {} }),
      options.signal,
    );
  }

  async ping(): Promise<void> {
    await storeCall('ping', () => this.session.queryAsync('SELECT 1'));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.backgroundSession?.close();
    this.session.close();
  }
}

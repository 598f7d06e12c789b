import type { JsonRows } from '../../model/json-bytes.js';

/** Values bound to `{name:Type}` placeholders; never spliced into SQL text. */
export type QueryParams = Record<string, unknown>;

/** Per-query options: engine settings (the caller's budget), an id to find the query by, and a way to abandon it. */
export interface QueryOptions {
  /** Setting name → number; names and values are checked, never taken from a request. */
  settings?: Record<string, number>;
  /** The server's query_id (the request id), so a query can be traced or killed; the embedded engine has none. */
  queryId?: string;
  /** Aborted when the client went away: the server cancels the query; the embedded engine stops waiting for it. */
  signal?: AbortSignal;
  /** What the query is for: a label of the service's query metrics (a fixed set, never from a request). */
  purpose?: QueryPurpose;
  /**
   * Work nobody waits for (a rollup tick): its threads run at the lowest CPU priority (`os_thread_priority` 19; the
   * engine needs CAP_SYS_NICE for it, else it is a no-op), so it takes longer instead of slowing the service's own.
   */
  background?: boolean;
}

export type QueryPurpose = 'report' | 'summary' | 'dashboard' | 'status-page' | 'results' | 'ingest' | 'other';

/** An insert's options: those of a query, with settings that may be text (insert_deduplication_token). */
export interface InsertOptions extends Omit<QueryOptions, 'settings'> {
  settings?: Record<string, string | number>;
}

export interface QueryStats {
  elapsedMs: number;
  rowsRead: number;
}

/**
 * The one interface to ClickHouse. Both backends run identical SQL text; every value travels as a
 * server-side parameter. Every failure is a StoreError (errors.ts), whichever backend.
 */
export interface Store {
  readonly kind: 'embedded' | 'server';
  query<T = Record<string, unknown>>(sql: string, params?: QueryParams, options?: QueryOptions): Promise<T[]>;
  /** Same as query, plus the engine's own timing and rows read (for the bench floor). */
  queryWithStats<T = Record<string, unknown>>(sql: string, params?: QueryParams, options?: QueryOptions): Promise<{ rows: T[]; stats: QueryStats }>;
  /** DDL and other statements without a result. */
  command(sql: string, params?: QueryParams, options?: QueryOptions): Promise<void>;
  /**
   * Inserts positional rows (JSONCompactEachRow) into `columns` of `table`; `options.settings` carry e.g.
   * insert_deduplication_token. Table and column names come from the code, never from a request. Rows already
   * written as JSON once (JsonRows: a batch's copy in Redis) are copied, not encoded again.
   */
  insert(table: string, columns: readonly string[], rows: readonly unknown[][] | JsonRows, options?: InsertOptions): Promise<void>;
  /**
   * ROLLUPS=ticks only (analytics/rollup-ticks.ts): makes sure the runs of check_results among `runs` that their
   * insert marked late are in the rollups (a writer that leaves out runs already stored calls it for them).
   */
  settleLateRuns?(runs: readonly { resultId: string; startedAt: number }[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Output settings both backends share, so the same query returns the same JSON. */
export const OUTPUT_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_64bit_floats: 0,
  date_time_output_format: 'iso',
} as const;

export interface JsonFormatResult<T> {
  data: T[];
  statistics: { elapsed: number; rows_read: number };
}

/**
 * Parses FORMAT JSON output. chdb (3.x) keeps the output of a query that failed and prepends it to the
 * next result of the connection; with FORMAT JSON that shows up as a second document before this
 * query's own, so the last document is the one that belongs to this query.
 */
export function parseJsonFormat<T>(text: string): JsonFormatResult<T> {
  const start = text.lastIndexOf('{\n\t"meta"');
  return JSON.parse(start > 0 ? text.slice(start) : text) as JsonFormatResult<T>;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;
const SETTING = /^[a-z_][a-z0-9_]*$/;

/** Settings as a SETTINGS clause, for a backend that takes them only in the text: names and numbers checked. */
export function settingsClause(settings: Record<string, number> | undefined): string {
  const entries = Object.entries(settings ?? {});
  for (const [name, value] of entries) {
    if (!SETTING.test(name) || !Number.isFinite(value)) throw new Error(`Invalid setting ${name} = ${value}`);
  }
  return entries.length ? `\nSETTINGS ${entries.map(([n, v]) => `${n} = ${v}`).join(', ')}` : '';
}

export function assertIdentifiers(table: string, columns: readonly string[]): void {
  for (const name of [table, ...columns]) if (!IDENTIFIER.test(name)) throw new Error(`Invalid identifier: ${name}`);
}

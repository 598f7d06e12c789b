import type { Metrics } from '../../platform/metrics.js';
import type { QueryOptions, QueryParams, Store } from './store.js';

/** The store, timed and counted: every query's time and rows read by purpose, every failure by operation. */
export function instrumentStore(store: Store, metrics: Metrics): Store {
  const failed = (operation: string) => (err: unknown) => {
    metrics.storeErrors.inc({ operation });
    throw err;
  };
  const queryWithStats = async <T>(sql: string, params?: QueryParams, options: QueryOptions = {}) => {
    const purpose = options.purpose ?? 'other';
    const end = metrics.queryDuration.startTimer({ purpose });
    const result = await store.queryWithStats<T>(sql, params, options).catch(failed('query'));
    end();
    metrics.rowsRead.inc({ purpose }, result.stats.rowsRead);
    return result;
  };
  return {
    kind: store.kind,
    queryWithStats,
    query: async <T>(sql: string, params?: QueryParams, options?: QueryOptions) => (await queryWithStats<T>(sql, params, options)).rows,
    command: (sql, params, options) => store.command(sql, params, options).catch(failed('command')),
    insert: (table, columns, rows, options) => store.insert(table, columns, rows, options).catch(failed('insert')),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

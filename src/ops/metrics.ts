import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { IngestQueue } from '../ingest/queue.js';
import type { QueryOptions, QueryParams, Store } from '../storage/clickhouse/store.js';

type QueueState = Awaited<ReturnType<IngestQueue['stats']>>;

/**
 * The service's own Prometheus metrics, one registry per running service (tests start several in one
 * process). Served at /metrics behind METRICS_TOKEN.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly ingestLanded = new Counter({
    name: 'ingest_results_landed_total',
    help: 'Check results this process inserted into ClickHouse (the in-process worker; a separate worker process counts its own)',
    registers: [this.registry],
  });
  readonly queryDuration = new Histogram({
    name: 'analytics_store_query_duration_seconds',
    help: 'ClickHouse query time as the service saw it, by purpose',
    labelNames: ['purpose'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30],
    registers: [this.registry],
  });
  readonly rowsRead = new Counter({
    name: 'analytics_store_rows_read_total',
    help: 'Rows ClickHouse read for the service, by purpose',
    labelNames: ['purpose'] as const,
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: 'analytics_store_errors_total',
    help: 'ClickHouse operations that failed, by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly dashboardBuilds = new Counter({
    name: 'dashboard_data_builds_total',
    help: 'Dashboard data documents built from the stores (cache misses); viewers between builds are served from the cache',
    registers: [this.registry],
  });

  constructor(queueState?: () => Promise<QueueState>) {
    collectDefaultMetrics({ register: this.registry });
    if (!queueState) return;
    // One read of the queue per scrape serves every queue gauge.
    let pending: Promise<QueueState | undefined> | undefined;
    const state = () =>
      (pending ??= queueState()
        .catch(() => undefined)
        .finally(() => setImmediate(() => (pending = undefined))));
    const gauge = (name: string, help: string, pick: (s: QueueState) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const s = await state();
          if (s) this.set(pick(s));
        },
      });
    gauge('ingest_queue_waiting', 'Result batches queued for the worker', (s) => s.waiting);
    gauge('ingest_queue_active', 'Result batches the worker holds', (s) => s.active);
    gauge('ingest_queue_delayed', 'Result batches waiting to retry', (s) => s.delayed);
    gauge('ingest_queue_failed', 'Result batches that failed every attempt', (s) => s.failed);
    gauge('ingest_lag_seconds', 'Age of the oldest batch still waiting for the worker', (s) => s.oldestWaitingSeconds);
    gauge('ingest_results_accepted', 'Check results accepted by POST /v1/check-results since the queue was created (all API processes)', (s) => s.acceptedResults);
  }
}

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
    command: (sql, params) => store.command(sql, params).catch(failed('command')),
    insert: (table, columns, rows, settings) => store.insert(table, columns, rows, settings).catch(failed('insert')),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ResultQueueStats as QueueState } from '../model/results.js';

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
  readonly runSpansExported = new Counter({
    name: 'otel_run_spans_total',
    help: 'Runs exported as OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT, by outcome (exported, failed: the endpoint refused or could not be reached; dropped: the queue was full)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly ingestLanded = new Counter({
    name: 'ingest_results_landed_total',
    help: 'Check results this process inserted into ClickHouse (the in-process worker; a separate worker process counts its own)',
    registers: [this.registry],
  });
  readonly ingestInserts = new Counter({
    name: 'ingest_inserts_total',
    help: 'Inserts of check results this process made (batches waiting together share one): results landed ÷ inserts is the rows an insert',
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

  readonly runs = new Counter({
    name: 'runner_runs_total',
    help: 'Check runs this process ended, by location and outcome (passed, degraded, failed, error, retry, expired, skipped)',
    labelNames: ['location', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly runLateness = new Histogram({
    name: 'runner_run_lateness_seconds',
    help: 'How long after its slot a scheduled run started',
    labelNames: ['location'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly agentLeaseWorkers = new Gauge({
    name: 'agent_lease_workers',
    help: 'Queue workers this process keeps for private locations agents lease from (one per location in use lately)',
    registers: [this.registry],
  });
  readonly agentLeases = new Counter({
    name: 'agent_runs_leased_total',
    help: 'Runs leased to agents, by private location (slug)',
    labelNames: ['location'] as const,
    registers: [this.registry],
  });
  readonly scheduledRuns = new Counter({
    name: 'scheduler_runs_enqueued_total',
    help: 'Runs the scheduler of this process put on location queues',
    registers: [this.registry],
  });
  readonly runDefinitions = new Counter({
    name: 'runner_definitions_total',
    help: 'Check definitions scheduled runs of this process used, by where they came from (kept: from the definition cache; read: from Postgres)',
    labelNames: ['from'] as const,
    registers: [this.registry],
  });

  /** Per BullMQ queue of this process (docs/platform.md): how long jobs waited, how long they took, how they ended. */
  readonly jobWait = new Histogram({
    name: 'queue_job_wait_seconds',
    help: 'Time from a job being added (or becoming due) to a worker taking it, by queue',
    labelNames: ['queue'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly jobProcessing = new Histogram({
    name: 'queue_job_processing_seconds',
    help: 'Time a worker spent on a job, by queue',
    labelNames: ['queue'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [this.registry],
  });
  readonly jobsEnded = new Counter({
    name: 'queue_jobs_total',
    help: 'Jobs the workers of this process ended, by queue and outcome (completed, retry, failed: kept in the failed set)',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  /**
   * Job counts per queue and state (waiting, active, delayed, failed), read from Redis at each scrape through
   * `source` (the process's Queues).
   */
  countJobs(source: () => Promise<{ queue: string; counts: Record<string, number> }[]>): void {
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in a queue by state (waiting, active, delayed, failed: the failed set), read at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const all = await source().catch(() => []);
        this.reset();
        for (const { queue, counts } of all) for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      },
    });
  }

  /** Activated checks whose runs stopped (docs/analytics.md, "No data"), read at scrape time through `source`. */
  countChecksNotRunning(source: () => Promise<number>): void {
    new Gauge({
      name: 'checks_not_running',
      help: 'Activated checks past their periods without a run in a location (the gaps the no-data sweep keeps), read at scrape time',
      registers: [this.registry],
      async collect() {
        const n = await source().catch(() => undefined);
        if (n !== undefined) this.set(n);
      },
    });
  }

  /**
   * Runs per location read at scrape time: `location_runs{location, name, state}` (location: the queue's
   * location, a public name or `private-<id>`; name: the public name or the private location's slug) with state
   * queued (due and waiting
   * for a runner or agent), delayed (scheduled for later) and in_flight (taken, not reported): what an
   * autoscaler of agents reads.
   */
  countLocationRuns(source: () => Promise<{ location: string; name: string; queued: number; delayed: number; inFlight: number }[]>): void {
    new Gauge({
      name: 'location_runs',
      help: 'Runs of a run location by state (queued, delayed, in_flight), read at scrape time',
      labelNames: ['location', 'name', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const all = await source().catch(() => []);
        this.reset();
        for (const l of all) {
          this.set({ location: l.location, name: l.name, state: 'queued' }, l.queued);
          this.set({ location: l.location, name: l.name, state: 'delayed' }, l.delayed);
          this.set({ location: l.location, name: l.name, state: 'in_flight' }, l.inFlight);
        }
      },
    });
  }

  constructor(queueState?: () => Promise<QueueState>) {
    // Node's event-loop delay sampled every 100 ms, not prom-client's default 10 ms: a hundred wakeups a second were
    // a visible share of an idle service's CPU (issue 57), and the lag figures it gives are as useful at 100 ms.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
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
    gauge(
      'ingest_results_accepted',
      'Check results accepted by POST /v1/check-results since the queue was created (all API processes)',
      (s) => s.acceptedResults,
    );
  }
}

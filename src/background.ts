import { sendDuePeopleMail, sweepAudit } from './accounts/index.js';
import {
  alertLocationChange,
  DeliveryQueue,
  locationMessage,
  startDeliveryWorker,
  startLocationAlertWorker,
  undeliveredNotifications,
} from './alerts/index.js';
import { sweepHeartbeats } from './heartbeats/index.js';
import { type IngestHooks, type IngestWorkerOptions, startIngestWorker } from './ingest/index.js';
import type { ResultQueue } from './model/results.js';
import { runSpans } from './ops/run-spans.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import type { Metrics } from './platform/metrics.js';
import type { OutboundPolicy } from './platform/outbound.js';
import { availabilityChanges, markAvailability } from './private-locations/index.js';
import { startRcaWorker } from './rca/index.js';
import { startRunner } from './run-kernel/index.js';
import { localPort, startScheduler } from './runners/index.js';
import { AccountContextCache, applyBatch, CheckBasisCache, logStateEvents, pausedRunIds, sweepGaps, tickStates } from './state/index.js';
import { checkIncidentHooks, sendDueMail } from './status-pages/index.js';
import { type BlobStore, RUN_ASSET_KINDS } from './storage/blobs.js';
import type { Store } from './storage/clickhouse/store.js';
import type { Sql } from './storage/postgres.js';
import type { Queues } from './storage/queues.js';
import { adhocRecorder } from './test-sessions/index.js';

/** The sweep made once per interval, however many processes run background work (`Queues.every`). */
export const SWEEP_QUEUE = 'state-sweeps';
/** Status-page subscriber mail that fell due is sent every STATE_SWEEP_INTERVAL_MS. */
export const STATUS_MAIL_QUEUE = 'status-page-mail';
/** Run assets past ASSET_RETENTION_DAYS are removed hourly. */
export const ASSET_SWEEP_QUEUE = 'asset-sweeps';
const ASSET_SWEEP_INTERVAL_MS = 3_600_000;
/** Invitations and password resets that fell due are mailed every STATE_SWEEP_INTERVAL_MS. */
export const PEOPLE_MAIL_QUEUE = 'people-mail';
/** Audit entries past AUDIT_RETENTION_DAYS are removed hourly. */
export const AUDIT_SWEEP_QUEUE = 'audit-sweeps';
/** Private locations that lost their agents (or got one back) are looked for every STATE_SWEEP_INTERVAL_MS. */
export const AGENT_SWEEP_QUEUE = 'agent-sweeps';
/** Checks that stopped running (or run again) are looked for every NO_DATA_SWEEP_SECONDS (docs/analytics.md, "No data"). */
export const GAP_SWEEP_QUEUE = 'gap-sweeps';

export interface BackgroundOptions {
  config: Config;
  sql: Sql;
  store: Store;
  logger: Logger;
  queues: Queues;
  /** Where recorded runs go (heartbeat misses). */
  ingest: ResultQueue;
  metrics?: Metrics;
  outbound: OutboundPolicy;
  /** Where runs keep their files (browser screenshots, traces). */
  blobs?: BlobStore;
  afterInsert?: IngestWorkerOptions['afterInsert'];
  journal?: Pick<IngestWorkerOptions, 'leaseMs' | 'sweepEveryMs'>;
}

/**
 * The work that runs beside the API, wired here so that no feature calls one above it:
 * - the ingest worker lands result batches, then hands each account's runs to check state (`applyBatch`),
 *   whose alerts' notifications go to the delivery queue;
 * - the delivery worker sends them through their channels;
 * - the sweep, every STATE_SWEEP_INTERVAL_MS: heartbeat deadlines that passed, reminders and TIME_BASED
 *   escalations that fell due, and notifications committed but never queued;
 * - the scheduler (SCHEDULER) and the in-process runner (RUNNER, RUNNER_LOCATIONS): checks run on their own.
 * In embedded mode the API process runs it; in server mode `npm run worker` does, as many times as needed.
 */
export async function startBackgroundWork(opts: BackgroundOptions) {
  const { config, sql, logger, queues } = opts;
  const deliveries = new DeliveryQueue(queues, config.alerts);
  // What state judges each check by, and its account's alert settings and maintenance windows: kept between batches
  // and forgotten when the account's checks, groups, settings or windows change.
  const kept = config.alerts.stateEvaluation ? { bases: new CheckBasisCache(sql, logger), contexts: new AccountContextCache(sql, logger) } : undefined;
  const hooks: IngestHooks | undefined = kept
    ? {
        pausedRuns: (accountId, runs) => pausedRunIds(sql, accountId, runs, kept.contexts.contextOf),
        async landed(accountId, runs) {
          const { bases, contexts } = kept;
          const { notifications, events } = await applyBatch(sql, accountId, runs, checkIncidentHooks, Date.now(), bases.basesOf, contexts.contextOf);
          logStateEvents(logger, events);
          await deliveries.enqueue(notifications);
        },
      }
    : undefined;
  // Landed runs as OpenTelemetry spans, when an endpoint is set (docs/traces.md).
  const spans = runSpans(config.otel, logger, opts.metrics);
  const ingestWorker = startIngestWorker(queues, config.redisUrl, {
    onStored: spans && ((accountId, columns, rows) => spans.export(accountId, columns, rows)),
    redisPrefix: config.redisPrefix,
    store: opts.store,
    logger,
    hooks,
    concurrency: config.ingest.workerConcurrency,
    insertMaxRows: config.ingest.insertMaxRows,
    afterInsert: opts.afterInsert,
    onLanded:
      opts.metrics &&
      ((rows) => {
        opts.metrics!.ingestLanded.inc(rows);
        opts.metrics!.ingestInserts.inc();
      }),
    markDays: () => config.reportCache.enabled && config.reportCache.markDays !== false,
    // The server backend's client takes rows as values: held batches keep theirs (the embedded engine copies bytes).
    held: opts.ingest.handOff?.({ withRows: opts.store.kind === 'server' }),
    // Batches this process enqueues go to this worker with no queued job, while it has room (ingest/journal.ts).
    direct: opts.ingest.direct && ((sink) => opts.ingest.direct!(sink, { withRows: opts.store.kind === 'server' })),
    ...opts.journal,
  });
  const scheduler = config.runner.scheduler
    ? startScheduler({
        sql,
        queues,
        logger,
        metrics: opts.metrics,
        tickMs: config.runner.tickMs,
        lookaheadMs: config.runner.lookaheadMs,
        windowMs: config.runner.windowMs,
        reconcileMs: config.runner.reconcileMs,
      })
    : undefined;
  const runner = config.runner.inProcess
    ? startRunner(
        localPort({
          sql,
          queues,
          redisUrl: config.redisUrl,
          redisPrefix: config.redisPrefix,
          ingest: opts.ingest,
          logger,
          metrics: opts.metrics,
          locations: config.runner.locations,
          concurrency: config.runner.concurrency,
          resultLingerMs: config.runner.resultLingerMs,
          definitionCacheBytes: config.runner.definitionCacheBytes,
          recordAdhoc: adhocRecorder(sql),
          blobs: opts.blobs,
        }),
        { policy: opts.outbound, logger, browser: { concurrency: config.runner.browserConcurrency, memoryBytes: config.runner.browserMemoryBytes } },
      )
    : undefined;
  // Root-cause analyses asked for error groups (docs/rca.md); closed with the queues.
  const rcaWorker = await startRcaWorker({ sql, store: opts.store, config, queues, outbound: opts.outbound, logger });
  const deliveryWorker = startDeliveryWorker(queues, { sql, logger, config: config.alerts, outbound: opts.outbound, publicUrl: () => config.publicUrl });
  const sweep = !config.alerts.stateEvaluation
    ? undefined
    : await queues.every(SWEEP_QUEUE, config.alerts.sweepIntervalMs, async (now) => {
        const missed = await sweepHeartbeats(sql, opts.ingest, now);
        const { notifications, events } = await tickStates(sql, now, checkIncidentHooks);
        logStateEvents(logger, events);
        await deliveries.enqueue([...notifications, ...(await undeliveredNotifications(sql, now))]);
        return { missed, notifications: notifications.length };
      });
  const { blobs } = opts;
  const retentionMs = config.runner.assetRetentionDays * 86_400_000;
  const assetSweep =
    blobs && retentionMs > 0
      ? await queues.every(ASSET_SWEEP_QUEUE, ASSET_SWEEP_INTERVAL_MS, async (now) => {
          const removed = await blobs.sweep(RUN_ASSET_KINDS, new Date(now - retentionMs));
          if (removed) logger.info({ removed, retentionDays: config.runner.assetRetentionDays }, 'run assets past their retention removed');
          return { removed };
        })
      : undefined;
  const statusMail = await queues.every(STATUS_MAIL_QUEUE, config.alerts.sweepIntervalMs, () =>
    sendDueMail(
      sql,
      {
        smtpUrl: config.alerts.smtpUrl,
        from: config.alerts.emailFrom,
        publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
        attempts: config.alerts.deliveryAttempts,
        retryBaseMs: config.alerts.retryBaseMs,
      },
      logger,
    ),
  );
  const peopleMail = await queues.every(PEOPLE_MAIL_QUEUE, config.alerts.sweepIntervalMs, () =>
    sendDuePeopleMail(
      sql,
      { smtpUrl: config.alerts.smtpUrl, from: config.alerts.emailFrom, attempts: config.alerts.deliveryAttempts, retryBaseMs: config.alerts.retryBaseMs },
      logger,
    ),
  );
  const locationAlerts = startLocationAlertWorker(queues, { sql, logger, config: config.alerts, outbound: opts.outbound });
  const agentSweep = await queues.every(AGENT_SWEEP_QUEUE, config.alerts.sweepIntervalMs, async () => {
    const changes = await availabilityChanges(sql, config.agents.unavailableMs);
    for (const change of changes) {
      const channels = await alertLocationChange(queues, sql, change, locationMessage(change, config.agents.unavailableMs, config.publicUrl), config.alerts);
      await markAvailability(sql, change);
      const line = { privateLocation: change.slugName, accountId: change.accountId, lastAgentAt: change.lastAgentAt?.toISOString() ?? null, channels };
      if (change.unavailable) logger.warn(line, 'private location has no agent: its checks are not running');
      else logger.info(line, 'private location has an agent again');
    }
    return { changes: changes.length };
  });
  const gapSweep = !config.alerts.stateEvaluation
    ? undefined
    : await queues.every(GAP_SWEEP_QUEUE, config.alerts.noDataSweepMs, async (now) => {
        const gaps = await sweepGaps(
          sql,
          now,
          { afterPeriods: config.alerts.noDataAfterPeriods, graceMs: config.alerts.noDataGraceMs, alerts: config.alerts.noDataAlerts },
          checkIncidentHooks,
        );
        logStateEvents(logger, gaps.events);
        await deliveries.enqueue(gaps.notifications);
        return { opened: gaps.opened, closed: gaps.closed, notRunning: gaps.notRunning };
      });
  const auditSweep = await queues.every(AUDIT_SWEEP_QUEUE, ASSET_SWEEP_INTERVAL_MS, async () => {
    const removed = await sweepAudit(sql, config.people.auditRetentionDays);
    if (removed) logger.info({ removed, retentionDays: config.people.auditRetentionDays }, 'audit entries past their retention removed');
    return { removed };
  });
  return {
    async close() {
      // Together: each finishes the job it holds (the ingest worker its batch, before the store closes under it).
      await scheduler?.close();
      await runner?.close();
      await Promise.all([
        sweep?.close(),
        assetSweep?.close(),
        statusMail.close(),
        peopleMail.close(),
        auditSweep.close(),
        agentSweep.close(),
        gapSweep?.close(),
        queues.closeWorker(locationAlerts),
        ingestWorker.close(),
        deliveryWorker.close(),
        queues.closeWorker(rcaWorker),
      ]);
      kept?.bases.stop();
      kept?.contexts.stop();
      await spans?.close();
    },
  };
}

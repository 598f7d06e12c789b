import { Type } from '@sinclair/typebox';
import { Gauge, Registry } from 'prom-client';
import { checksWithStatus } from '../checks/index.js';
import { coverageNow } from '../coverage/index.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import type { Deps } from '../storage/deps.js';
import { summarize } from './summary.js';

const DAY = 86_400_000;
/** Every check of the account is exported; the summary reads them 100 at a time. */
const CHUNK = 100;
const LABELS = ['check_id', 'check_name', 'check_type', 'activated', 'muted', 'tags'] as const;

/**
 * The account's checks as Prometheus gauges, for the user's own scraper (Grafana and the like), like the
 * anchor's Prometheus integration: current status from check state, 24-hour availability and latency p95
 * from the analytics store; whether the check is running, and the 24-hour share of its expected runs that did not
 * happen (docs/analytics.md, "No data"). A check that stopped running has no status: its last result is old. Text exposition format 0.0.4; label values are escaped by prom-client.
 */
export async function checkMetrics(deps: Deps, accountId: string, now = Date.now()): Promise<{ text: string; contentType: string }> {
  const rows = await checksWithStatus(deps.sql, accountId);
  const registry = new Registry();
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: LABELS, registers: [registry] });
  const status = gauge('monitoring_check_status', 'Last result of the check: 1 passing, 0 failing (absent before its first result)');
  const degraded = gauge('monitoring_check_degraded_status', 'Last result of the check: 1 not degraded, 0 degraded (absent before its first result)');
  const availability = gauge('monitoring_check_availability_ratio', "Share of the check's runs that passed over the last 24 hours (0 to 1)");
  const p95 = gauge('monitoring_check_latency_p95_seconds', 'Response time (ICMP: latency) p95 of the check over the last 24 hours');
  const noData = gauge('monitoring_check_no_data', 'Whether the activated check stopped running: 1 no run for its last periods (NO_DATA), 0 running');
  const noDataRatio = gauge('monitoring_check_no_data_ratio', "Share of the check's expected runs over the last 24 hours that did not happen (0 to 1)");
  const coverage = await coverageNow(
    deps.sql,
    accountId,
    { afterPeriods: deps.config.alerts.noDataAfterPeriods, graceMs: deps.config.alerts.noDataGraceMs },
    { now },
  );
  const labelsOf = new Map(
    rows.map((r) => [
      r.id,
      { check_id: r.id, check_name: r.name, check_type: r.check_type, activated: String(r.activated), muted: String(r.muted), tags: r.tags.join(',') },
    ]),
  );
  for (const r of rows) {
    const state = coverage.get(r.id)?.state;
    if (state === 'NO_DATA' || state === 'RUNNING') noData.set(labelsOf.get(r.id)!, state === 'NO_DATA' ? 1 : 0);
    if (r.has_failures === null || state === 'NO_DATA') continue;
    status.set(labelsOf.get(r.id)!, r.has_failures || r.has_errors ? 0 : 1);
    degraded.set(labelsOf.get(r.id)!, r.is_degraded ? 0 : 1);
  }
  const ids = rows.map((r) => r.id);
  for (let i = 0; i < ids.length; i += CHUNK) {
    const { items } = await summarize(deps, accountId, ids.slice(i, i + CHUNK), { from: now - DAY, to: now }, { now });
    for (const item of items) {
      const labels = labelsOf.get(item.checkId)!;
      if (item.availability !== null) availability.set(labels, item.availability / 100);
      if (item.expectedRuns) noDataRatio.set(labels, (item.noDataRatio ?? 0) / 100);
      const latency = item.responseTime_p95 ?? item.latency_p95;
      if (latency !== null && latency !== undefined) p95.set(labels, latency / 1000);
    }
  }
  return { text: await registry.metrics(), contentType: registry.contentType };
}

export function prometheusRoutes(deps: Deps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/prometheus/metrics',
      operationId: 'getPrometheusMetrics',
      summary: "The account's checks as Prometheus metrics",
      description:
        'Text exposition format for a Prometheus scraper (bearer_token: an API key): per check monitoring_check_status, ' +
        'monitoring_check_degraded_status, monitoring_check_availability_ratio (24 h), monitoring_check_latency_p95_seconds (24 h), ' +
        'monitoring_check_no_data (1 when an activated check stopped running; its status is then absent) and monitoring_check_no_data_ratio (24 h).',
      tag: 'Check status',
      access: 'read',
      contentType: 'text/plain; version=0.0.4',
      schema: { responses: { 200: Type.String() } },
      handler: async ({ principal }) => {
        const { text, contentType } = await checkMetrics(deps, principal.account.id);
        return { status: 200, body: text, headers: { 'Content-Type': contentType } };
      },
    }),
  ];
}

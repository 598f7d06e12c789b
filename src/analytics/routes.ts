import { Type } from '@sinclair/typebox';
import { checkExists } from '../checks/index.js';
import { badRequest, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { parseWindow } from '../http/time.js';
import { CHECK_TYPES } from '../model/checks.js';
import type { Deps } from '../storage/deps.js';
import { archiveErrorGroup, ErrorGroup, errorGroups } from './error-groups.js';
import { CATALOGS, type Catalog, INTEGER_COLUMNS, metadataOf, metricNames, resolveMetric } from './metrics.js';
import { runReport, sourcesHeader } from './report.js';
import { MAX_REPORTING_BUCKETS, MAX_REPORTING_DAYS, ReportingItem, ReportingQuery, reporting } from './reporting.js';
import { MetricDescriptor, Report, reportQuery, SummaryBody, SummaryItem, SummaryQuery } from './schemas.js';
import { summarize } from './summary.js';
import { MAX_TIMELINE_DAYS, TimelineBody, TimelineItem, TimelineQuery, timeline } from './timeline.js';

const reportPath = (catalog: Catalog) => `/v1/analytics/${catalog.segment}/{id}`;

/** `multistep-checks` → `getMultistepChecksReport`. */
function operationId(catalog: Catalog): string {
  const words = catalog.segment.split('-').map((w) => w[0].toUpperCase() + w.slice(1));
  return `get${words.join('')}Report`;
}

/** A catalog's metrics as the anchor describes them, with the value type each report row holds. */
function describeMetrics(catalog: Catalog) {
  return metricNames(catalog).map((name) => {
    const m = resolveMetric(catalog, name)!;
    const integer =
      m.kind === 'run' ? m.metric === 'retries' : INTEGER_COLUMNS.has(m.def.column) && (m.kind === 'raw' || ['min', 'max', 'sum'].includes(m.suffix));
    return { name, ...metadataOf(m), type: integer ? ('Int' as const) : ('Float' as const), aggregated: m.kind !== 'raw' };
  });
}

/** `Cache-Control: no-cache` asks for an answer read now rather than from the report cache (the same answer). */
const CacheControl = Type.Object({
  'cache-control': Type.Optional(Type.String({ maxLength: 200, description: '`no-cache`: read everything now instead of from the report cache' })),
});

/** Whether the request asks for an answer read now (`Cache-Control: no-cache`). */
const noCacheAsked = (headers: { 'cache-control'?: string }) => /\bno-cache\b/i.test(headers['cache-control'] ?? '');

/** What the report cache answered (hits) and what was read now (misses). */
function cacheHeader(cache?: { hits: number; misses: number }): Record<string, string> {
  return cache ? { 'X-Analytics-Cache': `hits=${cache.hits}; misses=${cache.misses}` } : {};
}

export function analyticsRoutes(deps: Deps): AnyRoute[] {
  const tag = 'Analytics';
  const reports = CATALOGS.map((catalog) =>
    defineRoute({
      method: 'GET',
      path: reportPath(catalog),
      operationId: operationId(catalog),
      summary: `Report for a ${catalog.title}`,
      description:
        'Raw per-run values, or aggregates over the window or per bucket, optionally grouped. Rows are paged by ' +
        '`limit`/`page` (per series when grouped). A check of another type answers 400; a check not in the account, 404.',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        query: reportQuery(catalog),
        headers: CacheControl,
        responses: { 200: Report },
      },
      handler: async ({ principal, params, query, headers, context }) => {
        const { report, tiers, pageTiers, cache } = await runReport(deps, catalog, principal.account.id, params.id, query, {
          context,
          noCache: noCacheAsked(headers),
        });
        // Beside the runs' figures, the runs that did not happen (counted as the summary counts them, read now: the
        // report's own window is rarely a summary's).
        const window = { from: Date.parse(report.from), to: Date.parse(report.to) };
        const [item] = (await summarize(deps, principal.account.id, [report.checkId], window, { context, purpose: 'report', noCache: true })).items;
        if (item?.expectedRuns !== undefined) report.noData = { expectedRuns: item.expectedRuns, runs: item.runs ?? 0, noDataRatio: item.noDataRatio ?? 0 };
        return { status: 200, body: report, headers: { ...sourcesHeader(tiers, pageTiers), ...cacheHeader(cache) } };
      },
    }),
  );
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/analytics/checks',
      operationId: 'getChecksSummary',
      reads: true,
      summary: 'Summary of several checks',
      description:
        'One item per requested check of the account, in request order; ids that name no check of the account are left out. ' +
        'Values that do not apply to a check type, or windows without runs, are null. With noData=true each item also says how many ' +
        'runs the check should have made, how many it made and the share that did not happen (docs/analytics.md, "No data").',
      tag,
      access: 'read',
      schema: { query: SummaryQuery, body: SummaryBody, headers: CacheControl, responses: { 200: Type.Array(SummaryItem) } },
      handler: async ({ principal, query, body, headers, context }) => {
        const {
          items: all,
          tiers,
          cache,
        } = await summarize(deps, principal.account.id, body.checkIds, query.quickRange, {
          precision: query.precision,
          context,
          noCache: noCacheAsked(headers),
        });
        // The anchor's items allow no other field: no data only when asked for.
        const items = query.noData ? all : all.map(({ expectedRuns: _e, runs: _r, noDataRatio: _n, ...anchor }) => anchor);
        return { status: 200, body: items, headers: { ...sourcesHeader(tiers), ...cacheHeader(cache) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/analytics/checks/timeline',
      operationId: 'getChecksTimeline',
      reads: true,
      summary: "Each check's runs over the last hours in equal buckets (runs, failed, degraded), and whether a maintenance window is on for it now",
      description:
        'One item per requested check of the account, in request order; ids that name no check of the account are left out. A bucket ' +
        'without runs counts 0 runs: no data, not passing. The window is the last `hours` (aligned to whole buckets) or from–to. ' +
        '`total` sums the window and gives its p95 response time and latency. Up to 1,000 checks a call. Read from the runs themselves (exact).',
      tag,
      access: 'read',
      errors: [400],
      schema: { query: TimelineQuery, body: TimelineBody, responses: { 200: Type.Array(TimelineItem) } },
      handler: async ({ principal, query, body, context }) => {
        const { from, to } = parseWindow(query);
        if ((from === undefined) !== (to === undefined))
          throw badRequest('query.from and query.to go together', {
            errors: [{ field: query.from ? 'query.to' : 'query.from', rule: 'required', message: 'from and to go together' }],
          });
        if (from !== undefined && to! - from > MAX_TIMELINE_DAYS * 86_400_000) {
          throw badRequest(`query.to must be at most ${MAX_TIMELINE_DAYS} days after from`, {
            errors: [{ field: 'query.to', rule: 'window', message: `at most ${MAX_TIMELINE_DAYS} days after from` }],
          });
        }
        return {
          status: 200,
          body: await timeline(deps, principal.account.id, body.checkIds, { hours: query.hours, buckets: query.buckets, from, to }, context),
        };
      },
    }),
    ...reports,
    ...errorGroupRoutes(deps),
    defineRoute({
      method: 'GET',
      path: '/v1/reporting',
      operationId: 'getReporting',
      summary: 'Success ratio and response times of every check (or the tagged ones) over a window, whole or per calendar bucket',
      description:
        'Per check: successRatio (per cent of runs that passed, 4 decimals), avg, p95 and p99 response time (ms; exact, R7, over ' +
        'windows of 32 days or less and with precision=exact; longer windows read the daily rollup where it fits, see precision). ' +
        'With granularity (day, week from Monday, month) in timezone (UTC by default): one aggregate per bucket with runs, ascending; ' +
        `at most ${MAX_REPORTING_DAYS} days and ${MAX_REPORTING_BUCKETS} buckets. A check without runs has no aggregate.`,
      tag,
      access: 'read',
      schema: { query: ReportingQuery, headers: CacheControl, responses: { 200: Type.Array(ReportingItem) } },
      handler: async ({ principal, query, headers, context }) => {
        const { items, tiers, cache } = await reporting(deps, principal.account.id, query, { context, noCache: noCacheAsked(headers) });
        return { status: 200, body: items, headers: { ...sourcesHeader(tiers), ...cacheHeader(cache) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/analytics/metrics',
      operationId: 'listAnalyticsMetrics',
      summary: "The metrics a check type's report takes (the report route's metrics enum, described)",
      description: "Also served without checkType (this service's addition): every metric of every report, each with its checkType and report path.",
      tag,
      access: 'read',
      schema: {
        query: Type.Object(
          { checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: 'The check type whose report metrics to list' })) },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Array(MetricDescriptor) },
      },
      handler: ({ query }) => ({
        status: 200,
        body: CATALOGS.filter((c) => !query.checkType || c.checkTypes.includes(query.checkType)).flatMap((c) =>
          describeMetrics(c).map((m) => (query.checkType ? m : { ...m, checkType: c.checkTypes[0], path: reportPath(c) })),
        ),
      }),
    }),
  ];
}

/** The anchor's error groups: all of the account's, one check's, one by id; PATCH archives. */
function errorGroupRoutes(deps: Deps): AnyRoute[] {
  const tag = 'Error groups';
  const Page = Type.Object(
    { limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }), page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }) },
    { additionalProperties: false },
  );
  const Id = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
  const one = async (accountId: string, id: string) => {
    const [group] = await errorGroups(deps, accountId, { id: id.toLowerCase(), limit: 1, page: 1 });
    if (!group) throw notFound();
    return group;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/error-groups',
      operationId: 'listErrorGroups',
      summary: "The account's error groups, the latest failure first",
      tag,
      access: 'read',
      description: 'Failed runs grouped per check by their error message with its variable parts masked (docs/analytics.md).',
      schema: { query: Page, responses: { 200: Type.Array(ErrorGroup) } },
      handler: async ({ principal, query }) => ({ status: 200, body: await errorGroups(deps, principal.account.id, query) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/error-groups/checks/{checkId}',
      operationId: 'listCheckErrorGroups',
      summary: "A check's error groups, the latest failure first",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ checkId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        query: Page,
        responses: { 200: Type.Array(ErrorGroup) },
      },
      handler: async ({ principal, params, query }) => {
        if (!(await checkExists(deps.sql, principal.account.id, params.checkId))) throw notFound();
        return { status: 200, body: await errorGroups(deps, principal.account.id, { ...query, checkId: params.checkId.toLowerCase() }) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/error-groups/{id}',
      operationId: 'getErrorGroup',
      summary: 'An error group',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: Id, responses: { 200: ErrorGroup } },
      handler: async ({ principal, params }) => ({ status: 200, body: await one(principal.account.id, params.id) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/error-groups/{id}',
      operationId: 'archiveErrorGroup',
      summary: 'Archive an error group for good or until it happens again (false unarchives)',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Id,
        body: Type.Object(
          { archiveForEver: Type.Optional(Type.Boolean()), archivedUntilNextEvent: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        responses: { 200: ErrorGroup },
      },
      handler: async ({ principal, params, body }) => {
        const group = await one(principal.account.id, params.id);
        await archiveErrorGroup(deps.sql, principal.account.id, group, body);
        return { status: 200, body: await one(principal.account.id, params.id) };
      },
    }),
  ];
}

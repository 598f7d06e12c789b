import { Type } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { CHECK_TYPES } from '../resources/checks/enums.js';
import { CATALOGS, metadataOf, metricNames, resolveMetric, type Catalog } from './metrics.js';
import { runReport } from './report.js';
import { CatalogInfo, Report, reportQuery, SummaryBody, SummaryItem, SummaryQuery } from './schemas.js';
import { summarize } from './summary.js';

const reportPath = (catalog: Catalog) => `/v1/analytics/${catalog.segment}/{id}`;

/** `multistep-checks` → `getMultistepChecksReport`. */
function operationId(catalog: Catalog): string {
  const words = catalog.segment.split('-').map((w) => w[0].toUpperCase() + w.slice(1));
  return `get${words.join('')}Report`;
}

function describeCatalog(catalog: Catalog) {
  return {
    checkType: catalog.checkTypes[0],
    path: reportPath(catalog),
    groupBy: [...catalog.groupBy],
    metrics: metricNames(catalog).map((name) => {
      const m = resolveMetric(catalog, name)!;
      return { name, ...metadataOf(m), aggregated: m.kind !== 'raw' };
    }),
  };
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
        responses: { 200: Report },
      },
      handler: async ({ principal, params, query }) => ({
        status: 200,
        body: await runReport(deps, catalog, principal.account.id, params.id, query),
      }),
    }),
  );
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/analytics/checks',
      operationId: 'getChecksSummary',
      summary: 'Summary of several checks',
      description:
        'One item per requested check of the account, in request order; ids that name no check of the account are left out. ' +
        'Values that do not apply to a check type, or windows without runs, are null.',
      tag,
      access: 'read',
      schema: { query: SummaryQuery, body: SummaryBody, responses: { 200: Type.Array(SummaryItem) } },
      handler: async ({ principal, query, body }) => ({
        status: 200,
        body: await summarize(deps, principal.account.id, body.checkIds, query.quickRange),
      }),
    }),
    ...reports,
    defineRoute({
      method: 'GET',
      path: '/v1/analytics/metrics',
      operationId: 'listAnalyticsMetrics',
      summary: 'The metric catalogs: every report metric by check type',
      tag,
      access: 'read',
      schema: {
        query: Type.Object(
          { checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: 'Only the catalog of this type' })) },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Array(CatalogInfo) },
      },
      handler: ({ query }) => ({
        status: 200,
        body: CATALOGS.filter((c) => !query.checkType || c.checkTypes.includes(query.checkType)).map(describeCatalog),
      }),
    }),
  ];
}

/** Reports, the summary, /v1/reporting, error groups, rollups, the report cache. What other folders may use: everything else here is this folder's own. */
export { backfillRollups } from './backfill.js';
export { budgetSettings } from './budget.js';
export { archiveErrorGroup, cleanErrorMessage, compileErrorGroups, errorGroupStates, errorGroups } from './error-groups.js';
export { CATALOGS } from './metrics.js';
export { prometheusRoutes } from './prometheus.js';
export { planReport, type ReportQuery, reportCache } from './report.js';
export { forgetRollupHorizon, RollupTicks, storeWithRollupTicks } from './rollup-ticks.js';
export { rollupDdl, rollupHorizon, rollupMigration, TIERS } from './rollups.js';
export { analyticsRoutes } from './routes.js';
export { reportQuery } from './schemas.js';
export { planSummary, summarize } from './summary.js';
export type { QuickRange } from './windows.js';

/** What runs do to a check: statuses, the alert state machine, alert and incident records. What other folders may use: everything else here is this folder's own. */
export { accountContext, applyBatch, lockChecks, pausedRunIds, tickStates } from './apply.js';
export { AccountContextCache, CheckBasisCache } from './basis-cache.js';
export { logStateEvents } from './events.js';
export { type GapSettings, type GapSweep, sweepGaps } from './gaps.js';
export type { CheckIncidentHooks, StateEvent } from './records.js';
export { checkStatusRoutes } from './routes.js';

/**
 * No data (docs/analytics.md): the runs an activated check was expected to make, and whether it is making them.
 * Sits below state/ so that check statuses, reports, pages and the "not running" alert all count the same way.
 */
export { type CheckPlan, type Coverage, coverageOf, expectedRuns, type Range, type RunState, runsPerSlot, slotsIn } from './expected.js';
export { coverageNow, type Expectations, expectationsOf, type NoDataSettings, noDataRatio, readCoverage } from './read.js';
export { countGaps, DEFAULT_LOCATION, dropGaps, type GapRow, loadPlans, maintenanceWindows, openGaps, saveGaps, updateGapLocations } from './repository.js';

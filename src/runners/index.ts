/** The service's own runners: scheduler, run queues, per-type runners, ad-hoc runs, check sessions. What other folders may use: everything else here is this folder's own. */
export {
  type AdhocCheck,
  type AdhocRecorder,
  type AdhocResult,
  type AdhocRunRow,
  adhocTopic,
  cancelAdhocRuns,
  cancelledResult,
  findAdhocRunOfResult,
  findScheduling,
  queueAdhoc,
  recordAdhoc,
  resealAdhocDefinitions,
  type SchedulingRow,
  sessionRuns,
} from './adhoc.js';
export { RunBook, SkipLog, verdict } from './book.js';
export { CHROMIUM_BINARY, processTree, SANDBOX_NODE, treeMemory } from './browser/sandbox.js';
export { loadRunnable, privateLocationOfKey, type RunnableCheck } from './definitions.js';
export { type LocationHealth, locationHealth, locationRunCounts } from './health.js';
export { privateRunQueueName, type RunJob, type RunSource } from './jobs.js';
export { localPort } from './local-port.js';
export { matchChecks, matchesTags, startSessions } from './on-demand.js';
export type { ExecuteRun, RunnerPort, TakenRun } from './port.js';
export { privateLocationQueues } from './repository.js';
export { scheduledResultId } from './result-ids.js';
export { checkSessionRoutes, runnerResourceRoutes } from './routes.js';
export { bounded, executeRun, resultItem, startRunner } from './runner.js';
export { phaseOf } from './schedule.js';
export { startScheduler } from './scheduler.js';
export { configureBrowserRuns, runBrowserCheck } from './types/browser.js';
export { RUN_METRIC_KEYS, RUN_TIMING_KEYS, type RunFiles, type RunOutcome } from './types/common.js';

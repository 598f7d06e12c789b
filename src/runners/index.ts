/** The service's side of runs: scheduler, run queues, the run book, definitions from Postgres, ad-hoc runs, check sessions (the run kernel makes the runs). What other folders may use: everything else here is this folder's own. */
export {
  type AdhocCheck,
  type AdhocDetail,
  type AdhocRecorder,
  type AdhocResult,
  type AdhocRunRow,
  adhocTopic,
  cancelAdhocRuns,
  cancelledResult,
  findAccountAdhocRun,
  findAdhocRunOfResult,
  findScheduling,
  queueAdhoc,
  recordAdhoc,
  resealAdhocDefinitions,
  type SchedulingRow,
  sessionRuns,
} from './adhoc.js';
export { RunBook, SkipLog, verdict } from './book.js';
export { checkSessionRoutes, runnerResourceRoutes } from './check-session-routes.js';
export { DEFAULT_LOCATION, loadRunnable, locationQueues, privateLocationOfKey } from './definitions.js';
export { type LocationHealth, locationHealth, locationRunCounts, runnersSeen } from './health.js';
export { privateRunQueueName } from './jobs.js';
export { localPort } from './local-port.js';
export { matchChecks, matchesTags, startSessions } from './on-demand.js';
export { privateLocationQueues } from './repository.js';
export { nextRetry, resultItem } from './results.js';
export { phaseOf } from './schedule.js';
export { startScheduler } from './scheduler.js';

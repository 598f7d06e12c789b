/**
 * The run kernel: what the service and the agent both load to make a run (docs/architecture.md, the `run-kernel/` row of the folder order):
 * the runner and its port, the per-type runners, the browser sandbox, assertions, templating, the script sandbox,
 * and the vocabulary of a run. It holds no store and reaches the service only through a port. What other folders
 * may use: everything else here is this folder's own.
 */
export { browserSupport, CHROMIUM_ARGS, CHROMIUM_BINARY, processTree, SANDBOX_NODE, treeMemory } from './browser/sandbox.js';
export { maskSecretValues } from './interpolate.js';
export type { ExecuteRun, RunnerPort, TakenRun } from './port.js';
export {
  AgentId,
  type FileAnswer,
  FileKind,
  FileReply,
  Lease,
  LeaseBody,
  LeaseId,
  type LeaseRequest,
  type LeasesAnswer,
  LeasesReply,
  type LeaseWire,
  type MadeAnswer,
  MadeBody,
  MadeItem,
  MadeReply,
  type MadeResult,
  Outcome,
  type OutcomesAnswer,
  OutcomesBody,
  OutcomesReply,
  type OutcomesRequest,
  type RegisterAnswer,
  RegisterBody,
  RegisterReply,
  type RegisterRequest,
  type RenewAnswer,
  RenewBody,
  RenewReply,
  type RenewRequest,
} from './protocol.js';
export { nameUuid, scheduledResultId } from './result-ids.js';
export type { RunJob, RunnableCheck, RunSource } from './run.js';
export { bounded, executeRun, type RunnerOptions, startRunner } from './runner.js';
export { scriptSupport } from './scripts.js';
export { configureBrowserRuns, runBrowserCheck } from './types/browser.js';
export { messageOf, RUN_METRIC_KEYS, RUN_TIMING_KEYS, type RunFiles, type RunOutcome } from './types/common.js';

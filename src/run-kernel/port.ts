import type { RunJob, RunnableCheck } from './run.js';
import type { RunFiles, RunOutcome } from './types/common.js';

/**
 * A run as a runner is handed it: the job, the check as it runs now (group settings applied, secret values
 * resolved), the id its result takes, and where its kept files are listed.
 */
export interface TakenRun {
  run: RunJob;
  check: RunnableCheck;
  resultId: string;
  /** The route kept files are listed under (ad-hoc runs: their test session's); default the check result's. */
  assetBase?: string;
}

/** Executes one taken run (by its check's type) and answers what it found; never throws. */
export type ExecuteRun = (taken: TakenRun) => Promise<RunOutcome>;

/**
 * The runner port: everything a runner needs of the service, so that the runner itself holds none of the
 * service's stores. Runs come in through `serve` (the port decides how: a location's queue in this process, or
 * leases over HTTPS for an agent), each is executed by the runner, and the port takes its outcome back (ingest,
 * retries, sessions, live progress). `files` is where runs keep screenshots and traces and read code bundles.
 */
export interface RunnerPort {
  serve(execute: ExecuteRun): void;
  files?: RunFiles;
  close(): Promise<void>;
}

import { overlay } from '../model/collections.js';
import { boundDetail } from '../model/results.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import { maskSecretValues } from './interpolate.js';
import type { RunnerPort, TakenRun } from './port.js';
import { type BrowserSettings, configureBrowserRuns } from './types/browser.js';
import { messageOf, type RunFiles, type RunOutcome } from './types/common.js';
import { CHECK_RUNNERS } from './types/index.js';

export interface RunnerOptions {
  /** What every connection of a run goes through. */
  policy: OutboundPolicy;
  logger: Logger;
  /** Browser and multi-step runs: how many at once in this process, and the memory of each. */
  browser?: BrowserSettings;
}

/** The longest failure reason a result keeps. */
const ERROR_CHARS = 4096;

/** An outcome within what a result keeps, whatever the check's target or script put in it (boundDetail). */
export function bounded(outcome: RunOutcome): RunOutcome {
  const error = outcome.error && outcome.error.length > ERROR_CHARS ? `${outcome.error.slice(0, ERROR_CHARS)} … (cut)` : outcome.error;
  return overlay(outcome, { detail: boundDetail(outcome.detail), error });
}

/** Executes a run by its check's type. A fault of the runner itself is the run's error, never a lost run. */
export async function executeRun(taken: TakenRun, policy: OutboundPolicy, files: RunFiles | undefined, logger: Logger): Promise<RunOutcome> {
  const { run, check, resultId, assetBase } = taken;
  const started = Date.now();
  try {
    const outcome = await CHECK_RUNNERS[check.checkType]({ check, location: run.location, resultId, attempt: run.attempt, policy, blobs: files, assetBase });
    // Why it failed may quote the request (a URL, a header): secret values never leave the run, to a log, a disk or a report.
    return bounded(outcome.error ? overlay(outcome, { error: maskSecretValues(outcome.error, check.secrets) }) : outcome);
  } catch (err) {
    // Masked and bounded like any failure: a thrown message may quote a secret, and may be of any length.
    const why = maskSecretValues(messageOf(err), check.secrets);
    logger.error({ checkId: check.id, adhocId: run.adhocId, err: why.slice(0, ERROR_CHARS) }, 'runner failed on a run');
    return bounded({
      startedAt: started,
      stoppedAt: Date.now(),
      hasFailures: true,
      hasErrors: true,
      isDegraded: false,
      metrics: {},
      detail: {},
      error: `The runner failed: ${why}`,
    });
  }
}

/**
 * A runner: executes the runs its port hands it, each by its check's type, and gives each outcome back to the
 * port. It holds none of the service's stores: the port is the service in this process (runners/local-port.ts)
 * or the service over HTTPS (an agent, docs/agent.md).
 */
export function startRunner(port: RunnerPort, opts: RunnerOptions) {
  if (opts.browser) configureBrowserRuns(opts.browser);
  port.serve((taken) => executeRun(taken, opts.policy, port.files, opts.logger));
  return { close: () => port.close() };
}

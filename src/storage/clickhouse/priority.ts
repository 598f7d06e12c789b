import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Background work of the embedded engine runs below the service's own threads (the runners, the API, ingest), so on
 * a machine with few cores a rollup tick or a merge takes longer instead of making runs late (docs/performance.md).
 *
 * - A statement asked to run in the background (QueryOptions.background) runs at `BACKGROUND_NICENESS`: the engine's
 *   `os_thread_priority` setting nices the threads that run it, and sets them to niceness 0 afterwards.
 * - Merges run at `MERGE_NICENESS` (the engine's `os_threads_nice_value_merge_mutate`), a little above the rest: they
 *   keep the part count of tables that take inserts bounded.
 *
 * The engine does this only with CAP_SYS_NICE (it must be able to lower a thread's niceness again); without it both
 * are no-ops. And only where the service itself runs at niceness 0 (`enginePriorities`): the engine puts threads back
 * to 0, not to what they were, so under an operator's `nice -n 10` it would lift them above the service.
 */
export const BACKGROUND_NICENESS = 19;
export const MERGE_NICENESS = 10;

/** The service's niceness as it started (its main thread's). */
const SERVICE_NICENESS = os.getPriority();

/** Whether this process may lower a thread's niceness again (CAP_SYS_NICE, bit 23 of /proc's effective set). */
function maySetNiceness(): boolean {
  try {
    const capEff = /CapEff:\s+([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return capEff !== undefined && ((BigInt(`0x${capEff}`) >> 23n) & 1n) === 1n;
  } catch {
    return false;
  }
}

/**
 * Whether the engine's threads are niced at all: on Linux, with the service at niceness 0, and allowed to (without
 * CAP_SYS_NICE the engine's settings are no-ops, and threads could not be put back).
 */
export const enginePriorities = process.platform === 'linux' && SERVICE_NICENESS === 0 && maySetNiceness();

/** Linux's per-thread niceness, from /proc (field 19 of a task's stat). */
function threadNiceness(tid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined; // the thread ended
  }
}

/** The threads of this process at a niceness (Linux only; none elsewhere). */
export function threadsAtNiceness(niceness: number): string[] {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return [];
  }
  return tids.filter((tid) => threadNiceness(tid) === niceness);
}

/** Background statements under way in this process (threads are the process's, whichever store runs them). */
let running = 0;

/**
 * Runs a background statement, and once none runs in the process, puts back the threads that inherited its
 * niceness: a thread the engine starts while it runs a niced statement is niced from birth, and the engine resets
 * only the threads it niced itself, so the new one would go on to run anything (an insert, a report) at the lowest
 * priority. Such threads go back to the service's niceness.
 */
export async function inBackground<T>(fn: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await fn();
  } finally {
    if (--running === 0 && enginePriorities) restoreThreads();
  }
}

function restoreThreads(): void {
  for (const tid of threadsAtNiceness(BACKGROUND_NICENESS)) {
    try {
      os.setPriority(Number(tid), SERVICE_NICENESS);
    } catch {
      // the thread ended
    }
  }
}

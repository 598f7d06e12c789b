import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Background work of the embedded engine runs below the service's own threads (the runners, the API, ingest), so on
 * a machine with few cores a rollup tick or a merge takes longer instead of making runs late (docs/performance.md).
 *
 * - A statement asked to run in the background (QueryOptions.background) runs at `BACKGROUND_NICENESS`: the engine's
 *   `os_thread_priority` setting nices the threads that run it and puts them back afterwards.
 * - Merges run at `MERGE_NICENESS` (the engine's `os_threads_nice_value_merge_mutate`), a little above the rest: they
 *   keep the part count of tables that take inserts bounded.
 *
 * The engine does this only with CAP_SYS_NICE (it must be able to put a thread back); without it both are no-ops.
 */
export const BACKGROUND_NICENESS = 19;
export const MERGE_NICENESS = 10;

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

/**
 * Counts the background statements under way, and once none is, puts back the engine's threads that inherited their
 * niceness: a thread the engine starts while it runs a niced statement is niced from birth, and the engine puts back
 * only the threads it niced itself, so the new one would go on to run anything (an insert, a report) at the lowest
 * priority. Such threads go back to the niceness of the service's main thread.
 */
export class BackgroundStatements {
  private running = 0;

  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await fn();
    } finally {
      if (--this.running === 0) this.restore();
    }
  }

  private restore(): void {
    const own = os.getPriority();
    if (own === BACKGROUND_NICENESS) return;
    for (const tid of threadsAtNiceness(BACKGROUND_NICENESS)) {
      try {
        os.setPriority(Number(tid), own);
      } catch {
        // the thread ended, or this process may not lower a niceness (then the engine niced nothing either)
      }
    }
  }
}

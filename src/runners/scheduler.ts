import { groupBy } from '../model/collections.js';
import { maintenanceEffect } from '../model/maintenance.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { RunJob } from '../run-kernel/index.js';
import { type Sql, transaction } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { expireSessions } from './check-sessions.js';
import { loadRunnable, locationQueues, maintenanceWindows } from './definitions.js';
import { enqueueRuns } from './jobs.js';
import { claimDueSlots, locationsForSlot, nextDueMs, reconcileSchedules } from './schedule.js';

export interface SchedulerOptions {
  sql: Sql;
  queues: Queues;
  logger: Logger;
  metrics?: Metrics;
  /** How often due slots are claimed. */
  tickMs: number;
  /** Slots due this far ahead are enqueued now, delayed to their time (so runs start on time). */
  lookaheadMs: number;
  /** How often check_schedules is made to match the checks (new, changed, deleted checks). */
  reconcileMs: number;
  /** Most slots one tick claims. */
  batch?: number;
}

/**
 * The scheduler: claims due slots (a slot once, however many schedulers run), turns each into runs on its
 * locations' queues, delayed to the slot's time, and keeps check_schedules in step with the checks. A slot
 * whose check a maintenance window pauses at that time makes no run.
 */
export function startScheduler(opts: SchedulerOptions) {
  let stopped = false;
  let lastReconcile = 0;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  /** When the earliest schedule comes due, as the last tick that claimed nothing found it (null: no schedule at all). */
  let nextDue: number | null | undefined;

  async function tick(): Promise<number> {
    const now = Date.now();
    if (now - lastReconcile >= opts.reconcileMs) {
      lastReconcile = now;
      const changes = await reconcileSchedules(opts.sql, now);
      if (changes.added || changes.changed || changes.removed) opts.logger.debug(changes, 'schedules reconciled');
      await expireSessions(opts.sql);
    }
    nextDue = undefined;
    return transaction(opts.sql, async (tx) => {
      const claimed = await claimDueSlots(tx, now, opts.lookaheadMs, opts.batch ?? 2000);
      if (!claimed.length) {
        nextDue = await nextDueMs(tx);
        return 0;
      }
      const byAccount = groupBy(claimed, (c) => c.accountId);
      const windows = await maintenanceWindows(tx, [...byAccount.keys()]);
      const runs: { job: RunJob; queue: string; startAt: number }[] = [];
      for (const [accountId, slots] of byAccount) {
        const checks = await loadRunnable(
          tx,
          accountId,
          slots.map((s) => s.checkId),
        );
        const queues = await locationQueues(
          tx,
          accountId,
          [...checks.values()].flatMap((c) => c.locations),
        );
        for (const slot of slots) {
          const check = checks.get(slot.checkId);
          if (!check?.activated) continue;
          if (maintenanceEffect(windows.get(accountId) ?? [], check.tags, slot.slot).paused) continue;
          for (const location of locationsForSlot(check.locations, check.runParallel, slot.slot, slot.periodMs)) {
            const queue = queues.get(location);
            if (!queue) {
              opts.logger.warn({ checkId: check.id, location }, 'a check names a location that does not exist; no run');
              continue;
            }
            runs.push({
              job: {
                v: 1,
                accountId,
                checkId: check.id,
                location,
                slot: slot.slot,
                attempt: 1,
                source: 'SCHEDULER',
                periodMs: slot.periodMs,
                checkType: check.checkType,
              },
              queue,
              startAt: slot.slot,
            });
          }
        }
      }
      // Enqueued before the claim commits: a crash in between leaves the slot to claim again, and the
      // run's job id (check, slot, location) makes the second enqueue a no-op.
      await enqueueRuns(opts.queues, runs, now);
      opts.metrics?.scheduledRuns.inc(runs.length);
      return runs.length;
    });
  }

  /**
   * How long until the next tick: the tick interval while slots come due, else until the earliest schedule is due
   * (less the lookahead) or the next reconcile (which adds new checks' schedules), whichever is first. An idle
   * scheduler asks Postgres once per reconcile instead of every tick (issue 57: a small installation's fixed cost).
   */
  const idleWait = (now: number): number => {
    if (nextDue === undefined) return opts.tickMs;
    const reconcileIn = lastReconcile + opts.reconcileMs - now;
    const dueIn = nextDue === null ? Infinity : nextDue - opts.lookaheadMs - now;
    return Math.max(opts.tickMs, Math.min(reconcileIn, dueIn));
  };

  const loop = () => {
    if (stopped) return;
    current = tick()
      .then((n) => {
        if (n) opts.logger.trace({ runs: n }, 'scheduled');
      })
      .catch((err: Error) => opts.logger.error({ err: err.message }, 'scheduler tick failed; next tick tries again'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, idleWait(Date.now()));
      });
  };
  loop();
  return {
    /** Runs one tick now (tests). */
    tick,
    async close() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}

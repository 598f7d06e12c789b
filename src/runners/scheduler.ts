import { groupBy } from '../model/collections.js';
import { maintenanceEffect } from '../model/maintenance.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { RunJob } from '../run-kernel/index.js';
import { type Sql, transaction } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { expireSessions } from './check-sessions.js';
import { loadSchedulable, locationQueues, maintenanceWindows } from './definitions.js';
import { enqueueRuns, RUN_WINDOW_MS, windowStart } from './jobs.js';
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
  /**
   * Slots are claimed a window at a time (epoch-aligned, this long): a tick whose lookahead reaches into a window
   * claims the whole window, and a location's runs of one window go as one batch job (jobs.ts). Default RUN_WINDOW_MS
   * (5 s, as SCHEDULER_WINDOW_MS); 1000: a second.
   */
  windowMs?: number;
  /** How often check_schedules is made to match the checks (new, changed, deleted checks). */
  reconcileMs: number;
  /** Most slots one tick claims. */
  batch?: number;
}

/** The channel migration 0026's triggers announce a committed change of what the schedules are made of on. */
const CHANNEL = 'schedules_changed';
/** How often check_schedules is made to match the checks without an announcement (one may have been missed). */
const UNANNOUNCED_RECONCILE_MS = 60_000;

/**
 * The scheduler: claims due slots (a slot once, however many schedulers run), turns each into runs on its
 * locations' queues, delayed to the slot's time, and keeps check_schedules in step with the checks. A slot
 * whose check a maintenance window pauses at that time makes no run.
 *
 * Keeping the schedules in step reads every runnable check, so it is done when Postgres announces a change of what
 * they are made of (migration 0026: a check created, deleted, (de)activated, its frequency, type or group changed; a
 * group's frequency or activation), at most every `reconcileMs`, and once a minute without one (an announcement
 * missed on a connection that died silently). Until this process listens, when listening fails, and once a minute's
 * reconcile found a change none announced (until one is heard), it reconciles every `reconcileMs` as before. Check
 * sessions past their time are ended every `reconcileMs` either way.
 */
export function startScheduler(opts: SchedulerOptions) {
  let stopped = false;
  let lastReconcile = 0;
  let lastExpiry = 0;
  let reconciles = 0;
  /** Whether check_schedules may differ from the checks: a change was announced, or listening (re)started. */
  let changed = true;
  let listening = false;
  /** Announcements heard: a reconcile that finds changes while none was heard since it began was told of none. */
  let heard = 0;
  let timer: NodeJS.Timeout | undefined;
  /** Whether the loop waits on `timer` (no tick under way): an announcement may then bring its next tick forward. */
  let sleeping = false;
  /** When the waiting loop's timer fires (epoch ms). */
  let wakeAt = 0;
  let current: Promise<void> = Promise.resolve();
  /** When the earliest schedule comes due, as the last tick that claimed nothing found it (null: no schedule at all). */
  let nextDue: number | null | undefined;

  /** Sleeps until the next tick is due: `wait` ms from `now`. */
  const sleep = (now: number, wait: number) => {
    sleeping = true;
    wakeAt = now + wait;
    timer = setTimeout(loop, wait);
  };
  const announced = () => {
    changed = true;
    if (!sleeping || stopped) return;
    // Only ever sooner: a stream of announcements must not put the next tick off again and again.
    const now = Date.now();
    const wait = idleWait(now);
    if (now + wait >= wakeAt) return;
    clearTimeout(timer);
    sleep(now, wait);
  };
  const listener = opts.sql.listen(
    CHANNEL,
    () => {
      // Heard: announcements arrive (again, if a reconcile found a change none had announced).
      heard++;
      listening = true;
      announced();
    },
    () => {
      // (Re)listening: announcements made while the connection was down were missed.
      listening = true;
      announced();
    },
  );
  listener.catch((err: Error) => {
    listening = false;
    opts.logger.warn({ err: err.message }, `check schedules are reconciled every ${opts.reconcileMs} ms: listening for changes of checks failed`);
  });

  /** Whether the schedules are to be made to match the checks at `now`. */
  const reconcileDue = (now: number) => {
    const since = now - lastReconcile;
    return changed || !listening ? since >= opts.reconcileMs : since >= Math.max(opts.reconcileMs, UNANNOUNCED_RECONCILE_MS);
  };

  async function tick(): Promise<number> {
    const now = Date.now();
    if (reconcileDue(now)) {
      // Cleared first: a change announced while this reads the checks makes the next reconcile.
      const told = changed;
      const heardBefore = heard;
      changed = false;
      lastReconcile = now;
      reconciles++;
      try {
        const changes = await reconcileSchedules(opts.sql, now);
        if (changes.added || changes.changed || changes.removed) {
          opts.logger.debug(changes, 'schedules reconciled');
          // A change no announcement told of (a pooler that takes LISTEN and delivers nothing, a connection dead
          // without notice): every `reconcileMs` again, until an announcement is heard.
          if (!told && listening && heard === heardBefore) {
            listening = false;
            opts.logger.warn(changes, `check schedules had changed unannounced; reconciled every ${opts.reconcileMs} ms until announcements are heard`);
          }
        }
      } catch (err) {
        changed = true;
        throw err;
      }
    }
    if (now - lastExpiry >= opts.reconcileMs) {
      lastExpiry = now;
      await expireSessions(opts.sql);
    }
    nextDue = undefined;
    return transaction(opts.sql, async (tx) => {
      // To the end of the window the lookahead reaches into: its slots go together (one batch job a location).
      const windowMs = opts.windowMs ?? RUN_WINDOW_MS;
      const horizon = windowStart(now + opts.lookaheadMs, windowMs) + windowMs - 1;
      const claimed = await claimDueSlots(tx, now, horizon - now, opts.batch ?? 2000);
      if (!claimed.length) {
        nextDue = await nextDueMs(tx);
        return 0;
      }
      const byAccount = groupBy(claimed, (c) => c.accountId);
      const windows = await maintenanceWindows(tx, [...byAccount.keys()]);
      const runs: { job: RunJob; queue: string; startAt: number }[] = [];
      for (const [accountId, slots] of byAccount) {
        const checks = await loadSchedulable(
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
      await enqueueRuns(opts.queues, runs, now, windowMs);
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
    const reconcileIn = reconcileDue(now)
      ? 0
      : lastReconcile + (changed || !listening ? opts.reconcileMs : Math.max(opts.reconcileMs, UNANNOUNCED_RECONCILE_MS)) - now;
    const expiryIn = lastExpiry + opts.reconcileMs - now;
    const dueIn = nextDue === null ? Infinity : nextDue - opts.lookaheadMs - now;
    return Math.max(opts.tickMs, Math.min(reconcileIn, expiryIn, dueIn));
  };

  const loop = () => {
    if (stopped) return;
    sleeping = false;
    current = tick()
      .then((n) => {
        if (n) opts.logger.trace({ runs: n }, 'scheduled');
      })
      .catch((err: Error) => opts.logger.error({ err: err.message }, 'scheduler tick failed; next tick tries again'))
      .finally(() => {
        if (stopped) return;
        const now = Date.now();
        sleep(now, idleWait(now));
      });
  };
  loop();
  return {
    /** Runs one tick now (tests). */
    tick,
    /** Whether announcements of changes are heard, and how many times the schedules were made to match the checks. */
    state: () => ({ listening, reconciles }),
    async close() {
      stopped = true;
      clearTimeout(timer);
      await current;
      // Not awaited: a listener still waiting for Postgres ends with the pool. After the listening connection came back,
      // postgres.js holds the callbacks anew and this removes nothing: they stay, doing nothing once stopped, until the
      // pool ends (a process starts one scheduler; tests start a few).
      listener.then((l) => l.unlisten()).catch(() => undefined);
    },
  };
}

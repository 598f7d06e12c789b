import { createHash } from 'node:crypto';
import { locationsForSlot } from '../src/model/schedule.js';
import type { RunJob, RunnableCheck } from '../src/run-kernel/index.js';

/** A scheduled check this agent ran lately: enough to go on running it on schedule while cut off. */
interface Remembered {
  run: RunJob;
  check: RunnableCheck;
  periodMs: number;
  /** The latest slot run (or handed out) for it. */
  lastSlot: number;
  /** When it was last leased from the service. */
  leasedAt: number;
  /** The agents that held it at its last lease (the service says), this one included; unknown: empty. */
  holders: readonly string[];
}

/** Of the agents holding a check, the one that runs it while they are cut off: the highest hash of (check, agent). */
export function ownerOf(checkId: string, holders: readonly string[]): string | undefined {
  let best: { id: string; score: string } | undefined;
  for (const id of holders) {
    const score = createHash('sha256').update(`${checkId}|${id}`).digest('hex');
    if (!best || score > best.score) best = { id, score };
  }
  return best?.id;
}

/**
 * The agent's memory of its share of the schedule: each scheduled run it leases leaves the check's definition
 * (with its secret values: kept in memory only, never written) and the slot. While the service is unreachable,
 * `due` hands out the slots that come due, one per check and period, from those definitions. A check not leased
 * for three of its periods is forgotten (deleted, moved to another agent, or deactivated).
 */
export class ScheduleMemory {
  private readonly checks = new Map<string, Remembered>();

  remember(run: RunJob, check: RunnableCheck, now = Date.now(), holders: readonly string[] = []): void {
    if (run.source !== 'SCHEDULER' || !run.periodMs || run.adhocId) return;
    const key = `${run.checkId}|${run.location}`;
    const known = this.checks.get(key);
    this.checks.set(key, { run, check, periodMs: run.periodMs, lastSlot: Math.max(run.slot, known?.lastSlot ?? 0), leasedAt: now, holders });
  }

  /** Forgets checks not leased for three periods (only while the service answers: its silence is not a change). */
  forgetStale(now = Date.now()): void {
    for (const [key, r] of this.checks) if (now - r.leasedAt > 3 * r.periodMs + 60_000) this.checks.delete(key);
  }

  get size(): number {
    return this.checks.size;
  }

  /**
   * The runs due by `now` from memory: each check's latest slot come due since the last one run, when it is this
   * location's turn (a check without runParallel runs its locations in turn, slot by slot, as the scheduler hands
   * them out). Older slots are skipped (the latest is as close), as the service's runners do. With `self` (this
   * agent's id), a check other agents held too is run only by its owner among them (`ownerOf`), so agents cut off
   * together probe each target once.
   */
  due(now = Date.now(), self?: string): { run: RunJob; check: RunnableCheck }[] {
    const out: { run: RunJob; check: RunnableCheck }[] = [];
    for (const r of this.checks.values()) {
      let next = r.lastSlot + r.periodMs;
      if (next > now) continue;
      while (next + r.periodMs <= now) next += r.periodMs;
      r.lastSlot = next;
      const turn = r.check.locations?.length ? locationsForSlot(r.check.locations, r.check.runParallel, next, r.periodMs) : [r.run.location];
      if (!turn.includes(r.run.location)) continue;
      if (self && r.holders.length > 1 && r.holders.includes(self) && ownerOf(r.run.checkId, r.holders) !== self) continue;
      out.push({ run: { ...r.run, slot: next, attempt: 1, firstStartedAt: undefined }, check: r.check });
    }
    return out;
  }
}

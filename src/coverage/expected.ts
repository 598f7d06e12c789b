import { occurrences, type WindowData } from '../model/maintenance.js';

/**
 * What runs a check should have made, and whether it is making them (docs/analytics.md, "No data"). Pure: the
 * plans come from the repository. A slot (k × period + phase, model/schedule.ts) in which an activated check was
 * neither paused nor in a pausing maintenance window is expected to make a run in each of its locations (with
 * runParallel) or in one of them (in turn); a slot without its run is no data, never up.
 */

export interface Range {
  from: number;
  to: number;
}

/** A check as its runs are counted: its effective schedule (group settings applied), activation and last runs. */
export interface CheckPlan {
  checkId: string;
  accountId: string;
  name: string;
  checkType: string;
  groupId: number | null;
  muted: boolean;
  periodMs: number;
  phaseMs: number;
  locations: string[];
  runParallel: boolean;
  /** Activated now, its group too. */
  activated: boolean;
  tags: string[];
  /** Stretches of activation, oldest first (epoch ms); the last has `to: null` while the check is activated. */
  activity: { from: number; to: number | null }[];
  /** Wait past the periods before a run counts as missing: the service's grace, plus the check's retries. */
  graceMs: number;
  /** When the check's definition last changed (a location added then has not had its turn yet). */
  changedAt: number;
  lastRunAt: number | null;
  /** The latest run in each location (epoch ms). */
  latestByLocation: Record<string, number>;
}

/** What a check's monitoring is doing now. */
export type RunState = 'RUNNING' | 'NO_DATA' | 'PAUSED' | 'MAINTENANCE';

export interface Coverage {
  state: RunState;
  lastRunAt: number | null;
  /** Locations past their periods without a run (every location when the state is NO_DATA). */
  silentLocations: string[];
  /** The last run before the silence (or the activation, or the end of a pause): when it started. */
  since: number | null;
}

/** How many slots (k × period + phase) lie in [from, to). */
export function slotsIn(periodMs: number, phaseMs: number, r: Range): number {
  if (r.to <= r.from) return 0;
  return Math.max(0, Math.ceil((r.to - phaseMs) / periodMs) - Math.ceil((r.from - phaseMs) / periodMs));
}

/** `ranges` without any part of `cuts` (both sorted or not; the result sorted). */
export function subtract(ranges: readonly Range[], cuts: readonly Range[]): Range[] {
  const sorted = [...cuts].filter((c) => c.to > c.from).sort((a, b) => a.from - b.from);
  const out: Range[] = [];
  for (const r of [...ranges].sort((a, b) => a.from - b.from)) {
    let at = r.from;
    for (const c of sorted) {
      if (c.to <= at || c.from >= r.to) continue;
      if (c.from > at) out.push({ from: at, to: c.from });
      at = Math.max(at, c.to);
      if (at >= r.to) break;
    }
    if (at < r.to) out.push({ from: at, to: r.to });
  }
  return out;
}

/** The stretches of [from, to) in which a window that pauses the check (pauseAllChecks, its tags or every check) is on. */
export function pausedRanges(windows: readonly WindowData[], tags: readonly string[], from: number, to: number): Range[] {
  const mine = new Set(tags);
  const out: Range[] = [];
  for (const w of windows) {
    if (!w.pauseAllChecks || (w.tags?.length && !w.tags.some((t) => mine.has(t)))) continue;
    for (const o of occurrences(w, from, to, 10_000)) out.push({ from: Math.max(from, o.start), to: Math.min(to, o.end) });
  }
  return out;
}

/** Runs each slot makes: one per location with runParallel, else one. */
export function runsPerSlot(plan: Pick<CheckPlan, 'locations' | 'runParallel'>): number {
  return plan.runParallel ? Math.max(1, plan.locations.length) : 1;
}

/**
 * The parts of [from, to) in which the check was expected to run: activated (from the grace after each
 * activation), not paused by maintenance, and no later than the grace before `now` (a slot that just started has
 * not landed yet).
 */
export function expectedRanges(plan: CheckPlan, windows: readonly WindowData[], from: number, to: number, now: number): Range[] {
  const end = Math.min(to, now - plan.graceMs);
  if (end <= from) return [];
  const active = plan.activity.map((a) => ({ from: Math.max(from, a.from + plan.graceMs), to: Math.min(end, a.to ?? end) })).filter((r) => r.to > r.from);
  if (!active.length) return [];
  return subtract(active, pausedRanges(windows, plan.tags, from, end));
}

/** The runs the check was expected to make in [from, to). */
export function expectedRuns(plan: CheckPlan, windows: readonly WindowData[], from: number, to: number, now: number): number {
  const ranges = expectedRanges(plan, windows, from, to, now);
  let slots = 0;
  for (const r of ranges) slots += slotsIn(plan.periodMs, plan.phaseMs, r);
  return slots * runsPerSlot(plan);
}

/** The runs expected in each of `n` buckets of `size` ms from `from`, with one pass over the expected ranges. */
export function expectedPerBucket(plan: CheckPlan, windows: readonly WindowData[], from: number, size: number, n: number, now: number): number[] {
  const out = new Array<number>(n).fill(0);
  const per = runsPerSlot(plan);
  for (const r of expectedRanges(plan, windows, from, from + size * n, now)) {
    for (let b = Math.max(0, Math.floor((r.from - from) / size)); b < n && from + b * size < r.to; b++) {
      const start = from + b * size;
      out[b] += slotsIn(plan.periodMs, plan.phaseMs, { from: Math.max(r.from, start), to: Math.min(r.to, start + size) }) * per;
    }
  }
  return out;
}

/**
 * What the check's monitoring is doing at `now`. PAUSED when it (or its group) is deactivated, MAINTENANCE while
 * a window pauses it; else each location is silent when its last run (or the activation, the end of the last
 * pause, or, for a location that never ran, the last change of the check) is more than `periods` of its turns
 * (its period, times the number of locations taking turns without runParallel) plus the grace ago. NO_DATA when
 * the check as a whole made no run for `periods` of its periods plus the grace.
 */
export function coverageOf(plan: CheckPlan, windows: readonly WindowData[], now: number, periods: number): Coverage {
  if (!plan.activated) return { state: 'PAUSED', lastRunAt: plan.lastRunAt, silentLocations: [], since: null };
  const activeSince = plan.activity.length ? plan.activity[plan.activity.length - 1].from : now;
  const lookBack = Math.min(activeSince, plan.lastRunAt ?? activeSince);
  const paused = pausedRanges(windows, plan.tags, lookBack - plan.periodMs, now + 1);
  if (paused.some((p) => p.from <= now && now < p.to)) return { state: 'MAINTENANCE', lastRunAt: plan.lastRunAt, silentLocations: [], since: null };
  const pauseEnd = paused.reduce((m, p) => Math.max(m, p.to), -Infinity);
  const turnMs = plan.periodMs * (plan.runParallel ? 1 : Math.max(1, plan.locations.length));
  const silentLocations: string[] = [];
  let since: number | null = null;
  for (const location of plan.locations) {
    const last = plan.latestByLocation[location];
    const ref = Math.max(last ?? Math.max(activeSince, plan.changedAt), activeSince, pauseEnd);
    if (now - ref > periods * turnMs + plan.graceMs) {
      silentLocations.push(location);
      since = since === null ? (last ?? activeSince) : Math.min(since, last ?? activeSince);
    }
  }
  const ref = Math.max(plan.lastRunAt ?? activeSince, activeSince, pauseEnd);
  const none = now - ref > periods * plan.periodMs + plan.graceMs;
  if (none) return { state: 'NO_DATA', lastRunAt: plan.lastRunAt, silentLocations: [...plan.locations], since: plan.lastRunAt ?? activeSince };
  return { state: 'RUNNING', lastRunAt: plan.lastRunAt, silentLocations, since };
}

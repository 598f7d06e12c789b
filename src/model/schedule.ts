import { createHash } from 'node:crypto';
import { CHECK_TYPE_FACTS, type CheckType } from './checks.js';

/**
 * The slots a check runs in: each runnable check has a period and a phase within it, derived from its id. Slots are
 * epoch-aligned (slot = k × period + phase), so the scheduler that makes runs and every reader that counts the runs
 * a check should have made (docs/analytics.md, "No data") compute the same ones.
 */

/** Where in its period a check runs: a stable spread from its id (whole seconds, so slots read well). */
export function phaseOf(checkId: string, periodMs: number): number {
  const n = createHash('sha256').update(checkId).digest().readUInt32BE(0);
  const seconds = Math.max(1, Math.floor(periodMs / 1000));
  return (n % seconds) * 1000;
}

/** The first slot at or after `t`. */
export function slotAtOrAfter(t: number, periodMs: number, phaseMs: number): number {
  return Math.ceil((t - phaseMs) / periodMs) * periodMs + phaseMs;
}

/** Which of a check's locations run a slot: all of them with runParallel, else one, in turn slot by slot. */
export function locationsForSlot(locations: readonly string[], runParallel: boolean, slot: number, periodMs: number): string[] {
  if (!locations.length) return [];
  if (runParallel) return [...locations];
  const n = Math.floor(slot / periodMs);
  return [locations[((n % locations.length) + locations.length) % locations.length]];
}

/** Types the runners execute (heartbeats are pinged, not run). */
export const RUNNABLE_TYPES = (Object.keys(CHECK_TYPE_FACTS) as CheckType[]).filter((t) => CHECK_TYPE_FACTS[t].runsOn !== 'pings');

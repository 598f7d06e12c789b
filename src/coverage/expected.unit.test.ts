import { describe, expect, it } from 'vitest';
import { maintenanceEffect, type WindowData } from '../model/maintenance.js';
import { type CheckPlan, coverageOf, expectedPerBucket, expectedRuns, slotsIn, subtract } from './expected.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

const plan = (over: Partial<CheckPlan> = {}): CheckPlan => ({
  checkId: '00000000-0000-4000-8000-000000000001',
  accountId: '00000000-0000-4000-8000-000000000002',
  name: 'Cart API',
  checkType: 'API',
  groupId: null,
  muted: false,
  periodMs: 10 * MINUTE,
  phaseMs: 17_000,
  locations: ['eu-west-1'],
  runParallel: false,
  activated: true,
  tags: ['shop'],
  activity: [{ from: NOW - 24 * HOUR, to: null }],
  graceMs: MINUTE,
  changedAt: NOW - 24 * HOUR,
  lastRunAt: null,
  latestByLocation: {},
  ...over,
});

/**
 * The oracle: walks every slot one by one and asks, at the slot's own instant, whether the check was activated (past
 * the grace after an activation), not paused by a window (maintenanceEffect, the scheduler's own test of a slot),
 * and inside the window and before the grace before now.
 */
function oracle(p: CheckPlan, windows: WindowData[], from: number, to: number, now: number): number {
  let n = 0;
  for (let t = Math.floor((from - p.phaseMs) / p.periodMs) * p.periodMs + p.phaseMs; t < to; t += p.periodMs) {
    if (t < from || t >= now - p.graceMs) continue;
    const active = p.activity.some((a) => t >= a.from + p.graceMs && (a.to === null || t < a.to));
    if (!active || maintenanceEffect(windows, p.tags, t).paused) continue;
    n += p.runParallel ? p.locations.length : 1;
  }
  return n;
}

describe('expected runs', () => {
  it('counts slots in half-open ranges', () => {
    expect(slotsIn(10, 3, { from: 0, to: 100 })).toBe(10);
    expect(slotsIn(10, 3, { from: 3, to: 13 })).toBe(1);
    expect(slotsIn(10, 3, { from: 4, to: 13 })).toBe(0);
    expect(slotsIn(10, 3, { from: 50, to: 50 })).toBe(0);
    expect(
      subtract(
        [{ from: 0, to: 100 }],
        [
          { from: 10, to: 20 },
          { from: 15, to: 30 },
          { from: 90, to: 120 },
        ],
      ),
    ).toEqual([
      { from: 0, to: 10 },
      { from: 30, to: 90 },
    ]);
  });

  it('agree with the slot-by-slot oracle over activations, deactivations, maintenance and locations', () => {
    const windows: WindowData[] = [
      // A daily hour of maintenance on the check's tag that pauses it, one that only silences, one on another tag.
      {
        tags: ['shop'],
        startsAt: new Date(NOW - 30 * HOUR).toISOString(),
        endsAt: new Date(NOW - 29 * HOUR).toISOString(),
        repeatUnit: 'DAY',
        repeatInterval: 1,
        pauseAllChecks: true,
      },
      { startsAt: new Date(NOW - 5 * HOUR).toISOString(), endsAt: new Date(NOW - 4 * HOUR).toISOString(), silenceAllAlerts: true },
      { tags: ['other'], startsAt: new Date(NOW - 8 * HOUR).toISOString(), endsAt: new Date(NOW - 6 * HOUR).toISOString(), pauseAllChecks: true },
    ];
    const plans = [
      plan(),
      plan({ periodMs: MINUTE, phaseMs: 41_000, locations: ['eu-west-1', 'us-east-1', 'office'], runParallel: true }),
      plan({ periodMs: MINUTE, phaseMs: 3_000, locations: ['eu-west-1', 'us-east-1'] }),
      plan({ periodMs: 10_000, phaseMs: 0, graceMs: 30_000 }),
      plan({
        activity: [
          { from: NOW - 40 * HOUR, to: NOW - 20 * HOUR },
          { from: NOW - 3 * HOUR - 7 * MINUTE, to: null },
        ],
      }),
      plan({ activated: false, activity: [{ from: NOW - 10 * HOUR, to: NOW - 2 * HOUR }] }),
      plan({ periodMs: 24 * HOUR, phaseMs: 3_600_000 }),
    ];
    const ranges = [
      { from: NOW - 24 * HOUR, to: NOW },
      { from: NOW - 7 * 24 * HOUR, to: NOW },
      { from: NOW - 13 * HOUR - 123, to: NOW - 2 * HOUR + 4_567 },
      { from: NOW - HOUR, to: NOW + HOUR },
    ];
    for (const p of plans) {
      for (const r of ranges) expect(expectedRuns(p, windows, r.from, r.to, NOW), `${p.periodMs} ${r.from}`).toBe(oracle(p, windows, r.from, r.to, NOW));
      // Per bucket (the strips, the status pages' days): 48 buckets of 37 minutes, each as the oracle counts it.
      const size = 37 * MINUTE;
      const from = NOW - 48 * size + 11_111;
      expect(expectedPerBucket(p, windows, from, size, 48, NOW)).toEqual(
        Array.from({ length: 48 }, (_, b) => oracle(p, windows, from + b * size, from + (b + 1) * size, NOW)),
      );
    }
  });
});

describe('coverage now', () => {
  it('is RUNNING within its periods, NO_DATA past them, and names the silent location', () => {
    const ran = plan({ lastRunAt: NOW - 15 * MINUTE, latestByLocation: { 'eu-west-1': NOW - 15 * MINUTE } });
    expect(coverageOf(ran, [], NOW, 2)).toMatchObject({ state: 'RUNNING', silentLocations: [] });
    // Two periods (20 minutes) and the grace (1) without a run.
    const stopped = plan({ lastRunAt: NOW - 22 * MINUTE, latestByLocation: { 'eu-west-1': NOW - 22 * MINUTE } });
    expect(coverageOf(stopped, [], NOW, 2)).toEqual({
      state: 'NO_DATA',
      lastRunAt: NOW - 22 * MINUTE,
      silentLocations: ['eu-west-1'],
      since: NOW - 22 * MINUTE,
    });
    // The setting: three periods.
    expect(coverageOf(stopped, [], NOW, 3).state).toBe('RUNNING');
    // Taking turns between two locations, each runs every other period: 30 minutes is within its two turns.
    const turns = plan({
      locations: ['eu-west-1', 'office'],
      lastRunAt: NOW - 5 * MINUTE,
      latestByLocation: { 'eu-west-1': NOW - 5 * MINUTE, office: NOW - 30 * MINUTE },
    });
    expect(coverageOf(turns, [], NOW, 2)).toMatchObject({ state: 'RUNNING', silentLocations: [] });
    const officeGone = { ...turns, latestByLocation: { ...turns.latestByLocation, office: NOW - 45 * MINUTE } };
    expect(coverageOf(officeGone, [], NOW, 2)).toMatchObject({ state: 'RUNNING', silentLocations: ['office'], since: NOW - 45 * MINUTE });
  });

  it('never ran: from its activation; paused and maintenance are what they are; a pause restarts the count', () => {
    expect(coverageOf(plan({ activity: [{ from: NOW - 5 * MINUTE, to: null }] }), [], NOW, 2).state).toBe('RUNNING');
    expect(coverageOf(plan(), [], NOW, 2)).toMatchObject({ state: 'NO_DATA', since: NOW - 24 * HOUR });
    expect(coverageOf(plan({ activated: false }), [], NOW, 2).state).toBe('PAUSED');
    const on: WindowData = { startsAt: new Date(NOW - HOUR).toISOString(), endsAt: new Date(NOW + HOUR).toISOString(), pauseAllChecks: true };
    expect(coverageOf(plan(), [on], NOW, 2).state).toBe('MAINTENANCE');
    // A window that ended 10 minutes ago: the check's periods count from its end.
    const ended: WindowData = { startsAt: new Date(NOW - 3 * HOUR).toISOString(), endsAt: new Date(NOW - 10 * MINUTE).toISOString(), pauseAllChecks: true };
    const before = plan({ lastRunAt: NOW - 3 * HOUR, latestByLocation: { 'eu-west-1': NOW - 3 * HOUR } });
    expect(coverageOf(before, [ended], NOW, 2).state).toBe('RUNNING');
    expect(coverageOf(before, [ended], NOW + 15 * MINUTE, 2).state).toBe('NO_DATA');
  });
});

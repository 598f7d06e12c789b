import { describe, expect, it } from 'vitest';
import { compileReporting, reportingSources, reportingWindow } from './reporting.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const ranges = (list: { from: number; to: number }[]) => list.map((r) => `${iso(r.from)}..${iso(r.to)}`);
const window = (from: string, to: string, granularity?: 'day' | 'week' | 'month', tz = 'UTC') => ({ from: at(from), to: at(to), granularity, tz });

/** Where a reporting window's rows come from (reportingSources): which UTC days the daily rollup serves. */
describe('reporting sources', () => {
  it('reads every run over 32 days or less, and with precision=exact', () => {
    const w = window('2026-10-01T10:00:00Z', '2026-11-01T10:00:00Z');
    expect(reportingSources(w, 'auto')).toEqual({ rollups: [], raw: [{ from: w.from, to: w.to }] });
    const long = window('2026-08-01T10:00:00Z', '2026-11-01T10:00:00Z', 'month');
    expect(reportingSources(long, 'exact')).toEqual({ rollups: [], raw: [{ from: long.from, to: long.to }] });
  });

  it('takes the whole UTC days of a long window from the daily rollup and its ragged ends from the runs', () => {
    const plan = reportingSources(window('2026-08-01T10:00:00Z', '2026-11-01T10:00:00Z'), 'auto');
    expect(ranges(plan.rollups)).toEqual(['2026-08-02T00:00:00.000Z..2026-11-01T00:00:00.000Z']);
    expect(plan.rollups[0].tier.id).toBe('day');
    expect(ranges(plan.raw)).toEqual(['2026-08-01T10:00:00.000Z..2026-08-02T00:00:00.000Z', '2026-11-01T00:00:00.000Z..2026-11-01T10:00:00.000Z']);
    // UTC days in UTC: every whole day lies inside its own bucket.
    const daily = reportingSources(window('2026-08-01T10:00:00Z', '2026-11-01T10:00:00Z', 'day'), 'auto');
    expect(daily).toEqual(plan);
  });

  it('reads from the runs the UTC days that a bucket boundary of the zone cuts', () => {
    // Asia/Kolkata is UTC+05:30: no UTC day lies inside one of its days; within its weeks, six of seven do.
    const days = reportingSources(window('2026-08-01T00:00:00Z', '2026-10-01T00:00:00Z', 'day', 'Asia/Kolkata'), 'auto');
    expect(days.rollups).toEqual([]);
    expect(ranges(days.raw)).toEqual(['2026-08-01T00:00:00.000Z..2026-10-01T00:00:00.000Z']);
    const weeks = reportingSources(window('2026-08-01T00:00:00Z', '2026-10-01T00:00:00Z', 'week', 'Asia/Kolkata'), 'auto');
    // Mondays 00:00 in Kolkata are Sundays 18:30 UTC: the UTC Sundays are cut, the other days whole.
    for (const r of weeks.rollups) {
      for (let d = r.from; d < r.to; d += DAY) expect(new Date(d).getUTCDay(), iso(d)).not.toBe(0);
    }
    expect(weeks.raw.every((r) => new Date(r.from).getUTCDay() === 0 && r.to - r.from === DAY)).toBe(true);
    expect(weeks.rollups.reduce((n, r) => n + (r.to - r.from) / DAY, 0)).toBe(61 - 9);
    // Months in New York, across the end of its summer time (2026-11-01): only the UTC days that hold a local
    // month's start are cut.
    const months = reportingSources(window('2026-08-15T00:00:00Z', '2026-11-20T00:00:00Z', 'month', 'America/New_York'), 'auto');
    expect(ranges(months.raw)).toEqual([
      '2026-09-01T00:00:00.000Z..2026-09-02T00:00:00.000Z',
      '2026-10-01T00:00:00.000Z..2026-10-02T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z..2026-11-02T00:00:00.000Z',
    ]);
    expect(ranges(months.rollups)).toEqual([
      '2026-08-15T00:00:00.000Z..2026-09-01T00:00:00.000Z',
      '2026-09-02T00:00:00.000Z..2026-10-01T00:00:00.000Z',
      '2026-10-02T00:00:00.000Z..2026-11-01T00:00:00.000Z',
      '2026-11-02T00:00:00.000Z..2026-11-20T00:00:00.000Z',
    ]);
  });

  it('reads each tier once, its ranges together, with every value a parameter', () => {
    const w = reportingWindow(
      {
        from: '2026-08-15T00:00:00Z',
        to: '2026-11-20T07:00:00Z',
        quickRange: 'last24Hrs',
        granularity: 'week',
        timezone: 'America/New_York',
        precision: 'auto',
      },
      at('2026-11-21T00:00:00Z'),
    );
    const plan = reportingSources(w, 'auto');
    expect(plan.rollups.length).toBeGreaterThan(10);
    const { sql, params } = compileReporting('5f0c6a0e-4d7b-4c8e-9d51-0c3f3b8f0e11', ['0b1f0b7e-2a65-4f4e-8f7a-4a5b9d1f2c33'], w, plan);
    expect(sql.match(/FROM check_results_1d/g)).toHaveLength(1);
    expect(sql.match(/FROM check_results\b(?!_)/g)).toHaveLength(1);
    expect(sql).not.toContain('America');
    expect(params).toMatchObject({ tz: 'America/New_York', r0from: '2026-08-15 00:00:00' });
    expect(plan.raw[plan.raw.length - 1].to - plan.raw[plan.raw.length - 1].from).toBe(7 * HOUR);
  });
});

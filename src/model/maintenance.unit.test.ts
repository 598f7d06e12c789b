import { describe, expect, it } from 'vitest';
import { isActive, maintenanceEffect, type WindowData } from './maintenance.js';

const at = (iso: string) => Date.parse(iso);

describe('maintenance windows in time', () => {
  it('are on from startsAt until endsAt, in UTC', () => {
    const w: WindowData = { startsAt: '2026-11-20', endsAt: '2026-11-21' };
    expect(isActive(w, at('2026-11-19T23:59:59Z'))).toBe(false);
    expect(isActive(w, at('2026-11-20T00:00:00Z'))).toBe(true);
    expect(isActive(w, at('2026-11-20T23:59:59Z'))).toBe(true);
    expect(isActive(w, at('2026-11-21T00:00:00Z'))).toBe(false);
  });

  it('repeat every n days or weeks until repeatEndsAt', () => {
    const w: WindowData = {
      startsAt: '2026-11-02T02:00:00Z',
      endsAt: '2026-11-02T03:00:00Z',
      repeatUnit: 'WEEK',
      repeatInterval: 2,
      repeatEndsAt: '2027-01-01',
    };
    expect(isActive(w, at('2026-11-16T02:30:00Z'))).toBe(true);
    expect(isActive(w, at('2026-11-09T02:30:00Z'))).toBe(false);
    expect(isActive(w, at('2026-11-16T03:00:00Z'))).toBe(false);
    expect(isActive(w, at('2026-12-28T02:30:00Z'))).toBe(true);
    expect(isActive(w, at('2027-01-11T02:30:00Z'))).toBe(false);
    const daily: WindowData = { startsAt: '2026-11-01T23:00:00Z', endsAt: '2026-11-02T01:00:00Z', repeatUnit: 'DAY', repeatInterval: 1 };
    expect(isActive(daily, at('2026-11-10T00:30:00Z'))).toBe(true);
    expect(isActive(daily, at('2026-11-10T12:00:00Z'))).toBe(false);
  });

  it("repeat every n calendar months, the 31st falling on short months' last day", () => {
    const w: WindowData = { startsAt: '2026-01-31T22:00:00Z', endsAt: '2026-01-31T23:00:00Z', repeatUnit: 'MONTH', repeatInterval: 1 };
    expect(isActive(w, at('2026-02-28T22:30:00Z'))).toBe(true);
    expect(isActive(w, at('2026-03-31T22:30:00Z'))).toBe(true);
    expect(isActive(w, at('2026-03-28T22:30:00Z'))).toBe(false);
    const quarterly: WindowData = { ...w, repeatInterval: 3 };
    expect(isActive(quarterly, at('2026-02-28T22:30:00Z'))).toBe(false);
    expect(isActive(quarterly, at('2026-04-30T22:30:00Z'))).toBe(true);
  });
});

describe('what windows do to a check', () => {
  const now = at('2026-11-20T12:00:00Z');
  const on = { startsAt: '2026-11-20', endsAt: '2026-11-21' };
  it('pause the checks they apply to (all without tags) and silence them', () => {
    expect(maintenanceEffect([{ ...on, pauseAllChecks: true }], ['any'], now)).toEqual({ paused: true, silenced: true });
    expect(maintenanceEffect([{ ...on, tags: ['db'], pauseAllChecks: true }], ['web'], now)).toEqual({ paused: false, silenced: false });
    expect(maintenanceEffect([{ ...on, tags: ['db'], pauseAllChecks: true }], ['db', 'web'], now)).toEqual({ paused: true, silenced: true });
  });

  it('silence by silenceAllAlerts within their tags, or by silenceAlertsTags, without pausing', () => {
    expect(maintenanceEffect([{ ...on, silenceAllAlerts: true }], ['x'], now)).toEqual({ paused: false, silenced: true });
    expect(maintenanceEffect([{ ...on, tags: ['db'], silenceAllAlerts: true }], ['x'], now)).toEqual({ paused: false, silenced: false });
    expect(maintenanceEffect([{ ...on, silenceAlertsTags: ['noisy'] }], ['noisy'], now)).toEqual({ paused: false, silenced: true });
    expect(maintenanceEffect([{ ...on, silenceAllAlerts: true }], ['x'], at('2026-11-22T00:00:00Z'))).toEqual({ paused: false, silenced: false });
  });
});

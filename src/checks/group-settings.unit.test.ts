import { describe, expect, it } from 'vitest';
import { locationRunsPerMinute } from '../analytics/report.js';
import { effectiveSchedule } from './group-settings.js';

describe("a check's effective schedule", () => {
  const CHECK_LOCATIONS = ['eu-west-1', 'us-east-1'];
  const check = { frequency: 5, data: { runParallel: false, locations: CHECK_LOCATIONS, privateLocations: [] } };

  it('is its own without a group', () => {
    expect(effectiveSchedule(check)).toEqual({ periodMs: 300_000, runParallel: false, locations: 2, names: CHECK_LOCATIONS });
    expect(effectiveSchedule({ frequency: 0, data: { frequencyOffset: 20 } })).toEqual({ periodMs: 20_000, runParallel: false, locations: 0, names: [] });
  });

  it("takes the group's frequency, runParallel and locations where the group sets them", () => {
    expect(effectiveSchedule(check, { frequency: 1, runParallel: true, locations: ['ap-south-1', 'eu-west-1', 'us-west-1'] })).toEqual({
      periodMs: 60_000,
      runParallel: true,
      locations: 3,
      names: ['ap-south-1', 'eu-west-1', 'us-west-1'],
    });
    // A group that sets none of them changes nothing.
    expect(effectiveSchedule(check, { frequency: null, runParallel: null, locations: [], privateLocations: [] })).toEqual(effectiveSchedule(check));
  });

  it('gives the reports the runs per location and minute the scheduler makes', () => {
    // Every 5 minutes, one of two locations in turn: 0.1 a minute in each.
    expect(locationRunsPerMinute(check)).toBeCloseTo(0.1);
    // The group runs it every minute in all three of its locations.
    expect(locationRunsPerMinute(check, { frequency: 1, runParallel: true, locations: ['a', 'b', 'c'] })).toBe(1);
  });
});

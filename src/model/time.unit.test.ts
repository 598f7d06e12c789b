import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clickHouseTimeMs, fromClickHouseTime, isoTimeMs, isoToClickHouseTime, toClickHouseTime } from './time.js';

// Instants from year 1000 to 9999, as every accepted time lies within.
const instant = fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) });

describe('ClickHouse time text', () => {
  it('writes the DateTime64(3) text form', () => {
    expect(toClickHouseTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe('2026-01-02 03:04:05.678');
  });

  it('cuts a canonical UTC ISO time as the parse-and-format path would, and takes any other ISO form the long way', () => {
    fc.assert(fc.property(instant, (ms) => isoToClickHouseTime(new Date(ms).toISOString()) === toClickHouseTime(ms)));
    for (const [iso, text] of [
      ['2026-01-02T03:04:05Z', '2026-01-02 03:04:05.000'],
      ['2026-01-02T03:04:05.6Z', '2026-01-02 03:04:05.600'],
      ['2026-01-02t03:04:05.678z', '2026-01-02 03:04:05.678'],
      ['2026-01-02T05:04:05.678+02:00', '2026-01-02 03:04:05.678'],
      ['2026-01-01T23:04:05.678-04:00', '2026-01-02 03:04:05.678'],
    ]) {
      expect(isoToClickHouseTime(iso), iso).toBe(text);
    }
  });

  it('reads the text form back to the same instant, field by field, and every other form the long way', () => {
    fc.assert(fc.property(instant, (ms) => clickHouseTimeMs(toClickHouseTime(ms)) === ms));
    const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    for (const value of ['2026-01-02T03:04:05.678Z', '2026-01-02 03:04:05.678', '2026-01-02T05:04:05.678+02:00', '2026-01-02 03:04:05.678000']) {
      expect(clickHouseTimeMs(value), value).toBe(ms);
      expect(clickHouseTimeMs(value)).toBe(Date.parse(fromClickHouseTime(value)));
    }
    // The text form's shape with something other than a digit in it is no time.
    for (const value of ['2026-01-02 03:04:0x.678', '2026-01-02 03:04:05.67 ', '2O26-01-02 03:04:05.678', '2026-01-02 +3:04:05.678']) {
      expect(clickHouseTimeMs(value), value).toBeNaN();
    }
  });

  it('reads a canonical ISO time digit by digit to the instant Date.parse gives, and every other form through Date.parse', () => {
    fc.assert(fc.property(instant, (ms) => isoTimeMs(new Date(ms).toISOString()) === ms));
    // Leap days, the turn of centuries (1900 and 2100 have no 29 February, 2000 has), the first years of the calendar.
    for (const iso of [
      '2024-02-29T23:59:59.999Z',
      '2000-02-29T00:00:00.000Z',
      '1900-03-01T00:00:00.000Z',
      '2100-03-01T12:00:00.001Z',
      '1969-12-31T23:59:59.999Z',
      '0050-06-15T10:20:30.400Z',
      '0000-01-01T00:00:00.000Z',
    ]) {
      expect(isoTimeMs(iso), iso).toBe(Date.parse(iso));
      expect(clickHouseTimeMs(`${iso.slice(0, 10)} ${iso.slice(11, 23)}`), iso).toBe(Date.parse(iso));
    }
    // A leap second, which the date-time format takes and Date.parse does not: NaN as before (ingest refuses the time).
    for (const iso of [
      '2026-01-02T05:04:05.678+02:00',
      '2026-01-02T03:04:05Z',
      '2026-01-02t03:04:05.678z',
      '2026-01-02T03:04:0x.678Z',
      '2026-12-31T23:59:60.000Z',
    ]) {
      expect(isoTimeMs(iso), iso).toEqual(Date.parse(iso));
    }
  });
});

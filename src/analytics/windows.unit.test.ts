import { describe, expect, it } from 'vitest';
import type { HttpError } from '../http/errors.js';
import { QUICK_RANGES, resolveQuickRange, resolveWindow } from './windows.js';

const at = (iso: string) => Date.parse(iso);
const span = (w: { from: number; to: number }) => [new Date(w.from).toISOString(), new Date(w.to).toISOString()];

describe('quick ranges, resolved in UTC', () => {
  const wednesday = at('2026-11-18T10:20:30.123Z');

  it('rolling ranges end now', () => {
    expect(span(resolveQuickRange('last24Hours', wednesday))).toEqual(['2026-11-17T10:20:30.123Z', '2026-11-18T10:20:30.123Z']);
    expect(span(resolveQuickRange('last7Days', wednesday))).toEqual(['2026-11-11T10:20:30.123Z', '2026-11-18T10:20:30.123Z']);
    expect(span(resolveQuickRange('last30Days', wednesday))).toEqual(['2026-10-19T10:20:30.123Z', '2026-11-18T10:20:30.123Z']);
  });

  it('weeks start on Monday, also when today is Sunday or Monday', () => {
    expect(span(resolveQuickRange('thisWeek', wednesday))).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-18T10:20:30.123Z']);
    expect(span(resolveQuickRange('lastWeek', wednesday))).toEqual(['2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z']);
    const sunday = at('2026-11-22T23:59:59.999Z');
    expect(span(resolveQuickRange('thisWeek', sunday))[0]).toBe('2026-11-16T00:00:00.000Z');
    expect(span(resolveQuickRange('lastWeek', sunday))).toEqual(['2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z']);
    const monday = at('2026-11-23T00:00:00.000Z');
    expect(span(resolveQuickRange('thisWeek', monday))).toEqual(['2026-11-23T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(span(resolveQuickRange('lastWeek', monday))).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  });

  it('lastMonth is the previous calendar month, across a year boundary too', () => {
    expect(span(resolveQuickRange('thisMonth', wednesday))).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-18T10:20:30.123Z']);
    expect(span(resolveQuickRange('lastMonth', wednesday))).toEqual(['2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']);
    expect(span(resolveQuickRange('lastMonth', at('2027-01-15T12:00:00Z')))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(span(resolveQuickRange('lastMonth', at('2028-03-01T00:00:00Z')))).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
  });

  it('every preset gives a window that does not end after now', () => {
    for (const range of QUICK_RANGES) {
      const w = resolveQuickRange(range, wednesday);
      expect(w.from).toBeLessThanOrEqual(w.to);
      expect(w.to).toBeLessThanOrEqual(wednesday);
    }
  });
});

describe('custom windows', () => {
  const now = at('2026-11-18T10:00:00Z');
  const error = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e as HttpError;
    }
    throw new Error('expected an error');
  };

  it('from/to in unix seconds or ISO 8601 override the preset bounds', () => {
    expect(span(resolveWindow({ quickRange: 'last24Hours', from: '1767225600', to: '1767229200' }, now))).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T01:00:00.000Z',
    ]);
    expect(span(resolveWindow({ quickRange: 'lastMonth', from: '2026-10-15T00:00:00Z' }, now))).toEqual([
      '2026-10-15T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
    ]);
    expect(span(resolveWindow({ quickRange: 'last24Hours', to: '2026-11-18T09:00:00+01:00' }, now))).toEqual([
      '2026-11-17T10:00:00.000Z',
      '2026-11-18T08:00:00.000Z',
    ]);
  });

  it('rejects unparsable values and empty or inverted windows with a 400 naming the field', () => {
    const bad = error(() => resolveWindow({ quickRange: 'last24Hours', from: 'yesterday' }, now));
    expect(bad.status).toBe(400);
    expect(bad.attributes?.errors).toEqual([expect.objectContaining({ field: 'query.from', rule: 'format' })]);
    const inverted = error(() => resolveWindow({ quickRange: 'last24Hours', from: '1767229200', to: '1767225600' }, now));
    expect(inverted.attributes?.errors).toEqual([expect.objectContaining({ field: 'query.from', rule: 'before' })]);
    const equal = error(() => resolveWindow({ quickRange: 'last24Hours', from: '1767225600', to: '1767225600' }, now));
    expect(equal.status).toBe(400);
    const afterPreset = error(() => resolveWindow({ quickRange: 'last24Hours', from: '2026-11-19T00:00:00Z' }, now));
    expect(afterPreset.attributes?.errors).toEqual([expect.objectContaining({ field: 'query.from', rule: 'before' })]);
  });
});

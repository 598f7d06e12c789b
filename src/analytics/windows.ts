import { Rules } from '../http/rules.js';
import { parseWindow } from '../http/time.js';

export const QUICK_RANGES = ['last24Hours', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const;
export type QuickRange = (typeof QUICK_RANGES)[number];
/** The summary endpoint takes the contract's shorter list. */
export const SUMMARY_RANGES = ['last24Hours', 'last7Days', 'thisWeek', 'lastWeek', 'lastMonth'] as const;

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A half-open window [from, to) in epoch milliseconds. */
export interface Window {
  from: number;
  to: number;
}

function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Monday 00:00 UTC of the week holding `ms`. */
function startOfUtcWeek(ms: number): number {
  const day = startOfUtcDay(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
  return day - weekday * DAY_MS;
}

function startOfUtcMonth(ms: number, monthsBack = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack, 1);
}

/** Resolves a preset in UTC: rolling ranges end now; weeks start Monday; `last*` calendar ranges are complete. */
export function resolveQuickRange(range: QuickRange, now: number): Window {
  switch (range) {
    case 'last24Hours':
      return { from: now - DAY_MS, to: now };
    case 'last7Days':
      return { from: now - 7 * DAY_MS, to: now };
    case 'last30Days':
      return { from: now - 30 * DAY_MS, to: now };
    case 'thisWeek':
      return { from: startOfUtcWeek(now), to: now };
    case 'thisMonth':
      return { from: startOfUtcMonth(now), to: now };
    case 'lastWeek': {
      const monday = startOfUtcWeek(now);
      return { from: monday - 7 * DAY_MS, to: monday };
    }
    case 'lastMonth':
      return { from: startOfUtcMonth(now, 1), to: startOfUtcMonth(now) };
  }
}

/**
 * The report window: the preset, with `from` and/or `to` (unix seconds or ISO 8601) overriding its bounds.
 * An unparsable value, or a start not before the end, is a 400 naming the field.
 */
export function resolveWindow(query: { quickRange: QuickRange; from?: string; to?: string }, now: number): Window {
  const custom = parseWindow(query);
  const preset = resolveQuickRange(query.quickRange, now);
  const window = { from: custom.from ?? preset.from, to: custom.to ?? preset.to };
  if (custom.from === undefined || custom.to === undefined) {
    new Rules()
      .check(window.from < window.to, custom.from !== undefined ? 'query.from' : 'query.to', 'before', 'must leave a window: from must be before to')
      .throwIfAny();
  }
  return window;
}

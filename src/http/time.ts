import { Type } from '@sinclair/typebox';
import { Rules } from './rules.js';

const UNIX_SECONDS_TEXT = '\\d{1,11}(\\.\\d{1,3})?';
const ISO_8601_TEXT = '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?';
const UNIX_SECONDS = new RegExp(`^${UNIX_SECONDS_TEXT}$`);
const ISO_8601 = new RegExp(`^${ISO_8601_TEXT}$`);

/**
 * A time query parameter: unix seconds or ISO 8601 (UTC unless the value names an offset). The pattern is
 * the form; a value of that form that names no real time (month 13) is still refused by `parseTime`.
 */
export const TimeParam = Type.String({
  minLength: 1,
  maxLength: 40,
  pattern: `^(${UNIX_SECONDS_TEXT}|${ISO_8601_TEXT})$`,
  title: 'unix seconds or an ISO 8601 time',
  description: 'Unix seconds (e.g. 1767225600) or ISO 8601 (e.g. 2026-01-01T00:00:00Z)',
});

/** Milliseconds since the epoch, or undefined when the value is neither form (the caller reports it). */
export function parseTime(value: string): number | undefined {
  if (UNIX_SECONDS.test(value)) return Math.round(Number(value) * 1000);
  if (!ISO_8601.test(value)) return undefined;
  const normalised = /(Z|[+-]\d{2}:?\d{2})$/.test(value) || value.length === 10 ? value : `${value}Z`;
  const ms = Date.parse(normalised.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
}

/** Parses optional `from`/`to`; an unparsable value or `from` ≥ `to` is a 400 naming the field. */
export function parseWindow(query: { from?: string; to?: string }): { from?: number; to?: number } {
  const rules = new Rules();
  const from = query.from === undefined ? undefined : parseTime(query.from);
  const to = query.to === undefined ? undefined : parseTime(query.to);
  rules.check(query.from === undefined || from !== undefined, 'query.from', 'format', 'must be unix seconds or an ISO 8601 time');
  rules.check(query.to === undefined || to !== undefined, 'query.to', 'format', 'must be unix seconds or an ISO 8601 time');
  if (from !== undefined && to !== undefined) rules.check(from < to, 'query.from', 'before', 'must be before to');
  rules.throwIfAny();
  return { from, to };
}

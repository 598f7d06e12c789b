/**
 * How every figure the API answers is rounded (docs/analytics.md, "Figures"): measurements (milliseconds, averages
 * of counts) to 2 decimals; percentages and scores to 4, so that one failed run in 20,000 is not shown as 100 % and
 * a layout shift of 0.004 is not 0. Counts are whole already. No value is no figure: null, never 0.
 */
export const DECIMALS = { measure: 2, percentage: 4 } as const;

function rounded(v: number, places: number): number {
  const f = 10 ** places;
  // Half away from zero, on the value as printed with a few more places (29.705399999999997 is 29.7054).
  return (Math.sign(v) * Math.round(Number((Math.abs(v) * f).toPrecision(15)))) / f;
}

/** A measurement, rounded to 2 decimals; null for no value (null, undefined, NaN, ±Infinity). */
export function figure(v: number | string | null | undefined): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? rounded(n, DECIMALS.measure) + 0 : null;
}

/** A percentage (0–100) or a score (CLS), rounded to 4 decimals; null for no value. */
export function percentage(v: number | string | null | undefined): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? rounded(n, DECIMALS.percentage) + 0 : null;
}

import type { Sql } from '../storage/postgres.js';
import { type CheckPlan, type Coverage, coverageOf, expectedPerBucket, expectedRuns } from './expected.js';
import { loadPlans, maintenanceWindows } from './repository.js';

/** The settings of no data (docs/analytics.md): how many periods make a silence, and the grace past them. */
export interface NoDataSettings {
  afterPeriods: number;
  graceMs: number;
}

/** Counts the runs an account's checks were expected to make: `of(checkId, from, to)` is null for a check that is not run (heartbeats). */
export interface Expectations {
  of(checkId: string, from: number, to: number): number | null;
  /** Per bucket: `n` buckets of `size` ms from `from`. */
  buckets(checkId: string, from: number, size: number, n: number): number[] | null;
}

/**
 * One read of an account's plans (some checks, or all) and maintenance windows, and both questions asked of them:
 * what each check is doing now, and how many runs it was expected to make (slots after `now`, or within the grace
 * before it, are not expected yet).
 */
export async function readCoverage(
  sql: Sql,
  accountId: string,
  settings: NoDataSettings,
  options: { checkIds?: readonly string[]; now?: number } = {},
): Promise<{ current(): Map<string, Coverage & { plan: CheckPlan }>; expectations: Expectations }> {
  const now = options.now ?? Date.now();
  const [plans, windows] = await Promise.all([
    loadPlans(sql, { accountId, checkIds: options.checkIds }, settings.graceMs),
    maintenanceWindows(sql, [accountId]),
  ]);
  const mine = windows.get(accountId) ?? [];
  const byId = new Map(plans.map((p) => [p.checkId, p]));
  return {
    current: () => new Map(plans.map((p) => [p.checkId, { ...coverageOf(p, mine, now, settings.afterPeriods), plan: p }])),
    expectations: {
      of(checkId, from, to) {
        const plan = byId.get(checkId);
        return plan ? expectedRuns(plan, mine, from, to, now) : null;
      },
      buckets(checkId, from, size, n) {
        const plan = byId.get(checkId);
        return plan ? expectedPerBucket(plan, mine, from, size, n, now) : null;
      },
    },
  };
}

/** What each of an account's runnable checks (or some) is doing now, by check id. */
export async function coverageNow(
  sql: Sql,
  accountId: string,
  settings: NoDataSettings,
  options: { checkIds?: readonly string[]; now?: number } = {},
): Promise<Map<string, Coverage & { plan: CheckPlan }>> {
  return (await readCoverage(sql, accountId, settings, options)).current();
}

/** The expectations of some of an account's checks, as of `now`. */
export async function expectationsOf(
  sql: Sql,
  accountId: string,
  checkIds: readonly string[],
  settings: Pick<NoDataSettings, 'graceMs'>,
  now = Date.now(),
): Promise<Expectations> {
  // What the checks are doing now is not asked (current() is never called): any number of periods will do.
  return (await readCoverage(sql, accountId, { ...settings, afterPeriods: 1 }, { checkIds, now })).expectations;
}

/** The share of expected runs that did not happen, as a percentage (0 when none were expected). */
export function noDataRatio(expected: number, runs: number): number {
  return expected > 0 ? (100 * Math.max(0, expected - runs)) / expected : 0;
}

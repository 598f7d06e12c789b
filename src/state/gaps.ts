import {
  type CheckPlan,
  type Coverage,
  coverageOf,
  dropGaps,
  loadPlans,
  maintenanceWindows,
  openGaps,
  saveGaps,
  updateGapLocations,
} from '../coverage/index.js';
import { maintenanceEffect } from '../model/maintenance.js';
import { type Sql, transaction } from '../storage/postgres.js';
import { type CheckIncidentHooks, type Raised, type RaisedAlert, raiseAlerts, type StateEvent } from './records.js';

export interface GapSettings {
  afterPeriods: number;
  graceMs: number;
  /** Off: gaps are still kept (/ready, /metrics count them), but no alert is raised. */
  alerts: boolean;
}

export interface GapSweep extends Raised {
  opened: number;
  closed: number;
  /** Activated checks not running now (open gaps). */
  notRunning: number;
}

const silent = (c: Coverage) => c.state === 'NO_DATA' || (c.state === 'RUNNING' && c.silentLocations.length > 0);

/**
 * Monitoring that stopped (docs/analytics.md, "No data"): every activated runnable check whose runs stopped in a
 * location, past `afterPeriods` of its turns there, gets a gap and one ALERT_NO_DATA ("not running since …",
 * naming the locations when only some stopped), whatever stopped it (the scheduler, a runner, a location without an
 * agent, a queue). When each location runs again the gap closes with one ALERT_NO_DATA_RECOVERY. A check that is
 * deactivated or deleted meanwhile loses its gap silently; maintenance neither opens nor closes one. The alerts are
 * recorded and delivered like any other (check alerts, notifications per subscribed channel, maintenance silences).
 */
export async function sweepGaps(sql: Sql, now: number, settings: GapSettings, hooks: CheckIncidentHooks): Promise<GapSweep> {
  // The open gaps first: the plans read after them hold every check with one of these gaps, so a gap is dropped below
  // only when its check is deactivated or gone, never because a sweep running beside this one opened it meanwhile
  // for a check this read left out as running.
  const gaps = await openGaps(sql);
  const plans = await loadPlans(sql, { activatedOnly: true, mayHaveStopped: { now, periods: settings.afterPeriods } }, settings.graceMs);
  const windows = await maintenanceWindows(sql, [...new Set(plans.map((p) => p.accountId))]);
  const open = new Map(gaps.map((g) => [g.check_id, g]));
  const byAccount = new Map<string, { plan: CheckPlan; coverage: Coverage }[]>();
  let notRunning = 0;
  for (const plan of plans) {
    const coverage = coverageOf(plan, windows.get(plan.accountId) ?? [], now, settings.afterPeriods);
    const gap = open.get(plan.checkId);
    // A check of a deactivated group is not expected to run: its gap goes too (left in `open`).
    if (coverage.state === 'PAUSED') continue;
    open.delete(plan.checkId);
    if (silent(coverage) || (gap && coverage.state === 'MAINTENANCE')) notRunning++;
    // Changes only: a silence without a gap, a gap whose check runs everywhere again, or other locations now.
    const changed = silent(coverage)
      ? !gap || gap.locations.join('\n') !== coverage.silentLocations.join('\n')
      : gap !== undefined && coverage.state === 'RUNNING';
    if (!changed) continue;
    const list = byAccount.get(plan.accountId);
    if (list) list.push({ plan, coverage });
    else byAccount.set(plan.accountId, [{ plan, coverage }]);
  }
  // Gaps of checks deactivated or gone: no longer expected to run.
  await dropGaps(sql, [...open.keys()]);
  let opened = 0;
  let closed = 0;
  const notifications: string[] = [];
  const events: StateEvent[] = [];
  for (const [accountId, items] of byAccount) {
    const raised = await transaction(sql, async (tx) => {
      const stopped = items.filter((i) => silent(i.coverage));
      const resumed = items.filter((i) => !silent(i.coverage));
      const fresh = await saveGaps(
        tx,
        stopped.map(({ plan, coverage }) => ({ checkId: plan.checkId, accountId, since: coverage.since ?? now, locations: coverage.silentLocations })),
      );
      await updateGapLocations(
        tx,
        stopped.filter((i) => !fresh.has(i.plan.checkId)).map(({ plan, coverage }) => ({ checkId: plan.checkId, locations: coverage.silentLocations })),
      );
      const ended = await dropGaps(
        tx,
        resumed.map((i) => i.plan.checkId),
      );
      opened += fresh.size;
      closed += ended.size;
      const silenced = (plan: CheckPlan) => maintenanceEffect(windows.get(accountId) ?? [], plan.tags, now).silenced;
      const check = (plan: CheckPlan) => ({ id: plan.checkId, name: plan.name, groupId: plan.groupId, muted: plan.muted, triggerIncident: null });
      const alerts: RaisedAlert[] = [
        ...stopped
          .filter((i) => fresh.has(i.plan.checkId))
          .map(({ plan, coverage }): RaisedAlert => {
            const partial = coverage.silentLocations.length < plan.locations.length;
            return {
              check: check(plan),
              type: 'ALERT_NO_DATA',
              at: coverage.since ?? now,
              silenced: silenced(plan),
              ...(partial ? { locations: coverage.silentLocations } : {}),
            };
          }),
        ...resumed
          .filter((i) => ended.has(i.plan.checkId))
          .map(
            ({ plan, coverage }): RaisedAlert => ({
              check: check(plan),
              type: 'ALERT_NO_DATA_RECOVERY',
              at: coverage.lastRunAt ?? now,
              silenced: silenced(plan),
            }),
          ),
      ];
      return settings.alerts ? raiseAlerts(tx, accountId, alerts, hooks) : { notifications: [], events: [] };
    });
    notifications.push(...raised.notifications);
    events.push(...raised.events);
  }
  return { notifications, events, opened, closed, notRunning };
}

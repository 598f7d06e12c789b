import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { coverageOf, loadPlans, maintenanceWindows, openGaps } from '../coverage/index.js';
import { sweepGaps } from './gaps.js';

const MINUTE = 60_000;
const SETTINGS = { afterPeriods: 2, graceMs: MINUTE, alerts: false };

/**
 * The gap sweep reads only the checks that may have stopped (issue 57): a check each of whose locations ran within
 * its periods is left out, and leaving it out changes nothing the sweep finds. The rule for "its locations" and "its
 * period" is the group's when the group sets them, as the scheduler's; these cases each fail if the filter reads the
 * check's own settings instead, or none.
 */
describe('checks that may have stopped', () => {
  let svc: TestService;
  const ids: Record<string, string> = {};
  let now = 0;

  beforeAll(async () => {
    // No sweep of the service's own (STATE_EVALUATION off): only the ones this test makes.
    svc = await startTestService({ NO_DATA_SWEEP_SECONDS: '3600', STATE_EVALUATION: 'false' });
    const post = async (path: string, body: unknown) => {
      const res = await svc.call('POST', path, { body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body as { id: string | number };
    };
    const check = async (name: string, body: Record<string, unknown>) => {
      ids[name] = String((await post('/v1/checks/api?autoAssignAlerts=false', { name, frequency: 1, request: { url: 'http://127.0.0.1:9/' }, ...body })).id);
    };
    const wideGroup = await post('/v1/check-groups', { name: 'wide', locations: ['eu-west-1', 'ap-south-1'] });
    const fastGroup = await post('/v1/check-groups', { name: 'fast', locations: [], frequency: 1 });
    await check('running', { locations: ['eu-west-1', 'us-east-1'] });
    await check('one location stopped', { locations: ['eu-west-1', 'us-east-1'] });
    await check("group's locations", { locations: ['eu-west-1'], groupId: wideGroup.id });
    await check("group's frequency", { locations: ['eu-west-1'], frequency: 10, groupId: fastGroup.id });
    await check('never ran', { locations: ['eu-west-1'] });
    await check('running again with a gap', { locations: ['eu-west-1'] });
    await check('paused', { locations: ['eu-west-1'], activated: false });
    await check('a status with no time', { locations: ['eu-west-1'] });

    now = Date.now();
    // Made an hour ago; their runs as the state would have recorded them.
    await svc.deps.sql`update checks set created_at = ${new Date(now - 60 * MINUTE)} where id = any(${Object.values(ids)}::uuid[])`;
    await svc.deps.sql`update check_activity set from_at = ${new Date(now - 60 * MINUTE)} where check_id = any(${Object.values(ids)}::uuid[])`;
    const ran = async (name: string, latest: Record<string, number>) => {
      const at = Math.max(...Object.values(latest));
      const byLocation = Object.fromEntries(Object.entries(latest).map(([l, t]) => [l, { at: t, duration: 100 }]));
      await svc.deps.sql`insert into check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, last_run_location,
          last_check_run_id, last_run_at, latest_by_location)
        select id, account_id, false, false, false, 'eu-west-1', gen_random_uuid(), ${new Date(at)}, ${svc.deps.sql.json(byLocation)}
        from checks where id = ${ids[name]}`;
    };
    await ran('running', { 'eu-west-1': now - 30_000, 'us-east-1': now - 90_000 });
    await ran('one location stopped', { 'eu-west-1': now - 30_000, 'us-east-1': now - 20 * MINUTE });
    // Ran where the check itself says, never in the group's second location.
    await ran("group's locations", { 'eu-west-1': now - 30_000 });
    // Within two of its own 10-minute periods, past two of the group's 1-minute periods and the grace.
    await ran("group's frequency", { 'eu-west-1': now - 5 * MINUTE });
    await ran('running again with a gap', { 'eu-west-1': now - 30_000 });
    await ran('paused', { 'eu-west-1': now - 30 * MINUTE });
    // A run time that is not a number (no writer makes one): read as never ran there, by the filter as by the plan.
    await svc.deps.sql`insert into check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, last_run_location,
        last_check_run_id, last_run_at, latest_by_location)
      select id, account_id, false, false, false, 'eu-west-1', gen_random_uuid(), ${new Date(now - 30_000)},
        ${svc.deps.sql.json({ 'eu-west-1': { at: 'a moment ago', duration: 100 } })}
      from checks where id = ${ids['a status with no time']}`;
    await svc.deps.sql`insert into check_gaps (check_id, account_id, since, locations)
      select id, account_id, ${new Date(now - 30 * MINUTE)}, array['eu-west-1'] from checks where id = ${ids['running again with a gap']}`;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('leaves out only checks that ran everywhere within their periods and have no gap', async () => {
    const read = await loadPlans(svc.deps.sql, { activatedOnly: true, mayHaveStopped: { now, periods: SETTINGS.afterPeriods } }, SETTINGS.graceMs);
    const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    expect(read.map((p) => names[p.checkId]).sort()).toEqual(
      ["group's frequency", "group's locations", 'a status with no time', 'never ran', 'one location stopped', 'running again with a gap'].sort(),
    );

    // Against every plan read whole, as coverageOf sees it: what is left out is running everywhere, with no gap.
    const all = await loadPlans(svc.deps.sql, { activatedOnly: true }, SETTINGS.graceMs);
    const windows = await maintenanceWindows(svc.deps.sql, [svc.defaultAccountId]);
    const gaps = new Set((await openGaps(svc.deps.sql)).map((g) => g.check_id));
    const kept = new Set(read.map((p) => p.checkId));
    const leftOut = all.filter((p) => !kept.has(p.checkId));
    expect(leftOut.map((p) => names[p.checkId])).toEqual(['running']);
    for (const plan of leftOut) {
      const coverage = coverageOf(plan, windows.get(plan.accountId) ?? [], now, SETTINGS.afterPeriods);
      expect({ state: coverage.state, silent: coverage.silentLocations, gap: gaps.has(plan.checkId) }).toEqual({ state: 'RUNNING', silent: [], gap: false });
    }
  });

  it("finds each stopped location by the group's settings, and closes the gap of a check running again", async () => {
    const hooks = { opened: async () => {}, resolved: async () => {} };
    const sweep = await sweepGaps(svc.deps.sql, now, SETTINGS, hooks);
    expect({ opened: sweep.opened, closed: sweep.closed }).toEqual({ opened: 5, closed: 1 });
    const gaps = Object.fromEntries((await openGaps(svc.deps.sql)).map((g) => [g.check_id, g.locations]));
    expect(gaps).toEqual({
      [ids['one location stopped']]: ['us-east-1'],
      [ids["group's locations"]]: ['ap-south-1'],
      [ids["group's frequency"]]: ['eu-west-1'],
      [ids['never ran']]: ['eu-west-1'],
      [ids['a status with no time']]: ['eu-west-1'],
    });
  });
});

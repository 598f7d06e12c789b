import type { AnyRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { iso } from '../model/time.js';
import { BY_NUMERIC_ID, crudRoutes, operationsOf } from '../resources/index.js';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { insertWindow, replaceWindow, unknownPages, unknownServices, type WindowRow } from './repository.js';
import { MaintenanceWindow, WindowBody } from './schemas.js';

/** Calendar dates a window can use: ISO 8601 allows year 0000, but no maintenance happens before 1970. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The pages and services a window shows on must be the account's own (another account's ids are a 400). */
async function checkVisibility(sql: Sql, accountId: string, body: WindowBody): Promise<void> {
  const visibility = body.statusPageVisibility;
  if (!visibility) return;
  const [pages, services] = await Promise.all([
    unknownPages(sql, accountId, visibility.statusPageIds ?? []),
    unknownServices(sql, accountId, visibility.serviceIds ?? []),
  ]);
  const rules = new Rules();
  rules.check(!pages.length, 'body.statusPageVisibility.statusPageIds', 'exists', `names no status page of this account: ${pages.join(', ')}`);
  rules.check(!services.length, 'body.statusPageVisibility.serviceIds', 'exists', `names no status-page service of this account: ${services.join(', ')}`);
  rules.throwIfAny();
}

/** Rules across fields; a repeat unit without an interval gets interval 1 here. */
function checkRules(body: WindowBody): void {
  const rules = new Rules();
  if (body.timezone) rules.check(isTimeZone(body.timezone), 'body.timezone', 'timezone', 'must be a named IANA time zone');
  for (const field of ['startsAt', 'endsAt', 'repeatEndsAt'] as const) {
    const value = body[field];
    if (value === null) continue;
    const ms = Date.parse(value);
    rules.check(ms >= EARLIEST && ms < LATEST, `body.${field}`, 'range', 'must be a date from 1970-01-01 to 9999-12-31');
  }
  const starts = Date.parse(body.startsAt);
  rules.check(starts < Date.parse(body.endsAt), 'body.endsAt', 'after', 'must be after startsAt');
  const repeats = body.repeatUnit !== null;
  // A unit alone repeats every unit (the anchor's form: repeatInterval defaults to null); an interval needs its unit.
  if (repeats && body.repeatInterval === null) body.repeatInterval = 1;
  rules.check(repeats || body.repeatInterval === null, 'body.repeatUnit', 'requires', 'is required with repeatInterval');
  if (body.repeatEndsAt !== null) {
    rules.check(repeats, 'body.repeatEndsAt', 'requires', 'needs repeatUnit');
    rules.check(Date.parse(body.repeatEndsAt) > starts, 'body.repeatEndsAt', 'after', 'must be after startsAt');
  }
  rules.throwIfAny();
}

function toWindow(row: WindowRow) {
  return { id: row.id, ...row.data, timezone: row.data.timezone ?? 'UTC', created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}

/** Maintenance windows: when an account's checks are paused or their alerts silenced, and what status pages show. */
export function maintenanceWindowRoutes({ sql }: Deps): AnyRoute[] {
  const write = async (db: Sql, accountId: string, body: WindowBody) => {
    checkRules(body);
    await checkVisibility(db, accountId, body);
  };
  return crudRoutes(sql, {
    tag: 'Maintenance windows',
    path: '/v1/maintenance-windows',
    table: 'maintenance_windows',
    ...BY_NUMERIC_ID,
    operations: operationsOf({ id: 'MaintenanceWindow', ids: 'MaintenanceWindows', one: 'a maintenance window', many: 'maintenance windows' }),
    view: MaintenanceWindow,
    toView: toWindow,
    create: {
      body: WindowBody,
      run: async (db, principal, body) => {
        await write(db, principal.account.id, body);
        return insertWindow(db, principal.account.id, body);
      },
    },
    update: {
      body: WindowBody,
      run: async (db, principal, id, body) => {
        await write(db, principal.account.id, body);
        return replaceWindow(db, principal.account.id, id, body);
      },
    },
  });
}

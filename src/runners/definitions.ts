import { effectiveSettings } from '../checks/index.js';
import { DEFAULT_LOCATION } from '../coverage/index.js';
import { CHECK_TYPE_FACTS, type CheckType, LOCATIONS } from '../model/checks.js';
import { hashSecret } from '../model/secrets.js';
import type { EnvVar } from '../model/variables.js';
import type { RunnableCheck } from '../run-kernel/index.js';
import type { Sql } from '../storage/postgres.js';
import { openVariables } from '../storage/secret-box.js';
import { privateRunQueueName, runQueueName } from './jobs.js';

const PUBLIC_LOCATIONS: ReadonlySet<string> = new Set(LOCATIONS);

export { DEFAULT_LOCATION, maintenanceWindows } from '../coverage/index.js';

interface CheckRow {
  id: string;
  name: string;
  check_type: CheckType;
  activated: boolean;
  muted: boolean;
  tags: string[];
  group_id: number | null;
  data: Record<string, unknown>;
}

/** The account's checks of `ids` with their groups' settings applied (`data`), each with its row. */
async function effectiveChecks(sql: Sql, accountId: string, ids: readonly string[]): Promise<{ row: CheckRow; data: Record<string, unknown> }[]> {
  const rows = await sql<CheckRow[]>`
    select id, name, check_type, activated, muted, tags, group_id, data from checks where account_id = ${accountId} and id = any(${[...ids]}::uuid[])`;
  return effectiveSettings(sql, accountId, rows);
}

/** Where a check runs: its locations and private locations (its group's when the group names some), else the default. */
function locationsOf(data: Record<string, unknown>): string[] {
  const locations = [...((data.locations as string[] | undefined) ?? []), ...((data.privateLocations as string[] | undefined) ?? [])];
  return locations.length ? [...new Set(locations)] : [DEFAULT_LOCATION];
}

/** What the scheduler needs of a check to make its runs: no variables opened, no scripts read. */
export type SchedulableCheck = Pick<RunnableCheck, 'id' | 'checkType' | 'activated' | 'tags' | 'locations' | 'runParallel'>;

/** The account's checks of `ids` as the scheduler sees them; missing ids are simply absent. */
export async function loadSchedulable(sql: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, SchedulableCheck>> {
  if (!ids.length) return new Map();
  const checks = await effectiveChecks(sql, accountId, ids);
  return new Map(
    checks.map(({ row, data }) => [
      row.id,
      {
        id: row.id,
        checkType: row.check_type,
        activated: data.activated !== false,
        tags: (data.tags as string[] | undefined) ?? [],
        locations: locationsOf(data),
        runParallel: data.runParallel === true,
      },
    ]),
  );
}

/** The account's checks of `ids` as they run; missing ids are simply absent. */
export async function loadRunnable(sql: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, RunnableCheck>> {
  const out = new Map<string, RunnableCheck>();
  if (!ids.length) return out;
  const [effective, accountVars] = await Promise.all([
    effectiveChecks(sql, accountId, ids),
    sql<{ key: string; value: string; secret: boolean }[]>`select key, value, secret from variables where account_id = ${accountId}`,
  ]);
  const snippetIds = new Set<number>();
  for (const { data } of effective)
    for (const key of ['setupSnippetId', 'tearDownSnippetId']) if (typeof data[key] === 'number') snippetIds.add(data[key] as number);
  const snippets = new Map(
    snippetIds.size
      ? (
          await sql<
            { id: number; script: string }[]
          >`select id, script from snippets where account_id = ${accountId} and id = any(${[...snippetIds]}::bigint[])`
        ).map((r) => [Number(r.id), r.script])
      : [],
  );
  // Browser scripts may import snippets as ./snippets/<name>.js (the anchor's convention).
  const wantsSnippets = (data: Record<string, unknown>) =>
    typeof data.script === 'string' && data.script.includes('snippets/') && CHECK_TYPE_FACTS[data.checkType as CheckType]?.script !== 'none';
  const named = effective.some((e) => wantsSnippets(e.data))
    ? (await sql<{ name: string; script: string }[]>`select name, script from snippets where account_id = ${accountId} order by id`).filter(
        (s) => /^[\w.-]{1,100}$/.test(s.name) && !s.name.startsWith('.'),
      )
    : [];
  // The account's variables opened once for every check (their secrets sealed at rest), not once a check.
  const opened = effective.length ? openVariables(accountVars) : [];
  for (const { row, data } of effective) {
    const variables: Record<string, string> = {};
    const secrets: string[] = [];
    for (const v of opened) {
      variables[v.key] = v.value;
      if (v.secret && v.value) secrets.push(v.value);
    }
    for (const v of openVariables(data.environmentVariables as EnvVar[] | null | undefined) ?? []) {
      if (v.value === null) continue;
      variables[v.key] = v.value;
      if (v.secret && v.value) secrets.push(v.value);
    }
    out.set(row.id, {
      id: row.id,
      accountId,
      name: row.name,
      checkType: row.check_type,
      activated: data.activated !== false,
      tags: (data.tags as string[] | undefined) ?? [],
      groupId: row.group_id,
      data,
      variables,
      secrets,
      locations: locationsOf(data),
      runParallel: data.runParallel === true,
      setupScript: scriptOf(data.localSetupScript, data.setupSnippetId, snippets),
      teardownScript: scriptOf(data.localTearDownScript, data.tearDownSnippetId, snippets),
      ...(wantsSnippets(data) ? { snippets: named } : {}),
    });
  }
  return out;
}

/** The queue of each location an account's checks name: public ones by name, private slugs by their location's id. */
export async function locationQueues(sql: Sql, accountId: string, locations: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const privateSlugs: string[] = [];
  for (const location of new Set(locations)) {
    if (PUBLIC_LOCATIONS.has(location)) out.set(location, runQueueName(location));
    else privateSlugs.push(location);
  }
  if (privateSlugs.length) {
    const rows = await sql<{ id: string; slug_name: string }[]>`select id, slug_name from private_locations
      where account_id = ${accountId} and slug_name = any(${privateSlugs}::text[])`;
    for (const r of rows) out.set(r.slug_name, privateRunQueueName(r.id));
  }
  return out;
}

/** The account's maintenance windows (to skip slots a window pauses). */
function scriptOf(local: unknown, snippetId: unknown, snippets: Map<number, string>): string | undefined {
  if (typeof local === 'string' && local.trim()) return local;
  return typeof snippetId === 'number' ? snippets.get(snippetId) : undefined;
}

/** The private location a runner key belongs to (keys are stored as digests, as API keys are). */
export async function privateLocationOfKey(sql: Sql, key: string): Promise<{ id: string; slugName: string; accountId: string } | undefined> {
  const [row] = await sql<{ id: string; slug_name: string; account_id: string }[]>`select l.id, l.slug_name, l.account_id
    from private_location_keys k join private_locations l on l.id = k.private_location_id where k.key_hash = ${hashSecret(key)}`;
  return row ? { id: row.id, slugName: row.slug_name, accountId: row.account_id } : undefined;
}

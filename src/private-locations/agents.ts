import { compareVersions } from '../model/agent.js';
import { groupBy } from '../model/collections.js';
import { hashSecret } from '../model/secrets.js';
import type { Sql } from '../storage/postgres.js';

/** The location a key belongs to, for an agent's calls: keys are stored as digests, as API keys are. */
export interface AgentLocation {
  id: string;
  slugName: string;
  accountId: string;
  keyId: string;
}

export async function locationOfKey(sql: Sql, key: string): Promise<AgentLocation | undefined> {
  const [row] = await sql<{ id: string; slug_name: string; account_id: string; key_id: string }[]>`
    select l.id, l.slug_name, l.account_id, k.id as key_id
    from private_location_keys k join private_locations l on l.id = k.private_location_id
    where k.key_hash = ${hashSecret(key)}`;
  return row ? { id: row.id, slugName: row.slug_name, accountId: row.account_id, keyId: row.key_id } : undefined;
}

export interface AgentRegistration {
  id: string;
  version: string;
  capabilities: string[];
  concurrency: number;
  address: string | null;
  egressIps: string[];
}

/** Records an agent of the location (again, after a restart or reconnect); false when its id is another location's. */
export async function registerAgent(sql: Sql, locationId: string, a: AgentRegistration): Promise<boolean> {
  const rows = await sql`insert into agents (id, private_location_id, version, capabilities, concurrency, address, egress_ips)
    values (${a.id}, ${locationId}, ${a.version}, ${a.capabilities}, ${a.concurrency}, ${a.address}, ${a.egressIps})
    on conflict (id) do update set version = excluded.version, capabilities = excluded.capabilities, concurrency = excluded.concurrency,
      address = excluded.address, egress_ips = excluded.egress_ips, started_at = now(), last_seen_at = now()
      where agents.private_location_id = excluded.private_location_id
    returning id`;
  if (rows.length) await sql`update private_locations set last_agent_at = now() where id = ${locationId}`;
  return rows.length > 0;
}

/** Stamps an agent's call and answers what it can run; undefined when it is not registered for the location. */
export async function touchAgent(sql: Sql, locationId: string, agentId: string, address: string | null): Promise<string[] | undefined> {
  const [row] = await sql<{ capabilities: string[] }[]>`with seen as (
      update agents set last_seen_at = now(), address = coalesce(${address}, address)
      where id = ${agentId} and private_location_id = ${locationId} returning capabilities
    ), location as (
      update private_locations set last_agent_at = now() where id = ${locationId} and exists (select 1 from seen)
    )
    select capabilities from seen`;
  return row?.capabilities;
}

export interface AgentRow {
  id: string;
  private_location_id: string;
  version: string;
  capabilities: string[];
  concurrency: number;
  address: string | null;
  egress_ips: string[];
  started_at: Date;
  last_seen_at: Date;
}

/** The agents of these locations seen within `seenSeconds`, newest first. */
export async function agentsOf(sql: Sql, locationIds: string[], seenSeconds: number): Promise<Map<string, AgentRow[]>> {
  const out = new Map(locationIds.map((id) => [id, [] as AgentRow[]]));
  if (!locationIds.length) return out;
  const rows = await sql<AgentRow[]>`select * from agents where private_location_id = any(${locationIds}::uuid[])
    and last_seen_at > now() - make_interval(secs => ${seenSeconds}) order by last_seen_at desc`;
  for (const r of rows) out.get(r.private_location_id)!.push(r);
  return out;
}

/** When each location was last served by any agent. */
export async function lastAgentAt(sql: Sql, locationIds: string[]): Promise<Map<string, Date | null>> {
  if (!locationIds.length) return new Map();
  const rows = await sql<{ id: string; last_agent_at: Date | null }[]>`select id, last_agent_at from private_locations where id = any(${locationIds}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.last_agent_at]));
}

/** The egress addresses of an account's agents seen within `seenSeconds`, by location slug. */
export async function agentEgress(sql: Sql, accountId: string, seenSeconds: number): Promise<Map<string, string[]>> {
  const rows = await sql<{ slug_name: string; address: string | null; egress_ips: string[] }[]>`
    select l.slug_name, a.address, a.egress_ips from agents a join private_locations l on l.id = a.private_location_id
    where l.account_id = ${accountId} and a.last_seen_at > now() - make_interval(secs => ${seenSeconds})`;
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const set = new Set(out.get(r.slug_name) ?? []);
    for (const ip of [...r.egress_ips, ...(r.address ? [r.address] : [])]) set.add(ip);
    out.set(r.slug_name, [...set].sort());
  }
  return out;
}

/** A location's fleet as the anchor shows it: when an agent was last seen, and the agents running, by version. */
export interface Fleet {
  lastSeen: string | null;
  agentCount: number;
  /** The lowest version among the agents running, or null with none. */
  minAgentVersion: string | null;
  runningAgents: { version: string; isOutdated: boolean; count: number; agents: { id: string; lastSeenAt: string }[] }[];
}

export async function fleetsOf(sql: Sql, locationIds: string[], settings: { seenSeconds: number; minVersion: string }): Promise<Map<string, Fleet>> {
  const [agents, last] = await Promise.all([agentsOf(sql, locationIds, settings.seenSeconds), lastAgentAt(sql, locationIds)]);
  const out = new Map<string, Fleet>();
  for (const id of locationIds) {
    const running = agents.get(id) ?? [];
    const byVersion = groupBy(running, (a) => a.version);
    const versions = [...byVersion.keys()].sort((a, b) => compareVersions(b, a));
    out.set(id, {
      lastSeen: last.get(id)?.toISOString() ?? null,
      agentCount: running.length,
      minAgentVersion: versions.at(-1) ?? null,
      runningAgents: versions.map((version) => ({
        version,
        isOutdated: compareVersions(version, settings.minVersion) < 0,
        count: byVersion.get(version)!.length,
        agents: byVersion.get(version)!.map((a) => ({ id: a.id, lastSeenAt: a.last_seen_at.toISOString() })),
      })),
    });
  }
  return out;
}

/** One agent of a location as the fleet view shows it: online (seen within `seenSeconds`) or not, and since when. */
export interface FleetAgent {
  id: string;
  version: string;
  isOutdated: boolean;
  online: boolean;
  lastSeenAt: string;
  startedAt: string;
  concurrency: number;
}

/** Every agent of the location seen in the last `keepSeconds` (the offline ones too), newest first. */
export async function fleetAgents(
  sql: Sql,
  locationId: string,
  settings: { seenSeconds: number; minVersion: string },
  keepSeconds = 7 * 86_400,
): Promise<FleetAgent[]> {
  const agents = (await agentsOf(sql, [locationId], keepSeconds)).get(locationId) ?? [];
  const onlineAfter = Date.now() - settings.seenSeconds * 1000;
  return agents.map((a) => ({
    id: a.id,
    version: a.version,
    isOutdated: compareVersions(a.version, settings.minVersion) < 0,
    online: a.last_seen_at.getTime() > onlineAfter,
    lastSeenAt: a.last_seen_at.toISOString(),
    startedAt: a.started_at.toISOString(),
    concurrency: a.concurrency,
  }));
}

/** A private location whose availability changed, as an alert names it. */
export interface AvailabilityChange {
  id: string;
  accountId: string;
  name: string;
  slugName: string;
  /** When an agent last called (null: never). */
  lastAgentAt: Date | null;
  unavailable: boolean;
  /** Names this change (the same outage, the same key) however often it is found before it is marked. */
  key: string;
}

/**
 * The locations that went without an agent for `unavailableMs` while an activated, unmuted check (or a check of a
 * group) runs in them, and the ones an agent came back to. Found again until `markAvailability` records them, so
 * a crash between finding and sending loses nothing (the change's key keeps a second send out).
 */
export async function availabilityChanges(sql: Sql, unavailableMs: number): Promise<AvailabilityChange[]> {
  const seconds = unavailableMs / 1000;
  type Row = { id: string; account_id: string; name: string; slug_name: string; last_agent_at: Date | null; unavailable_since: Date | null };
  const down = await sql<Row[]>`select l.id, l.account_id, l.name, l.slug_name, l.last_agent_at, l.unavailable_since from private_locations l
    where l.unavailable_since is null
      and coalesce(l.last_agent_at, l.created_at) < now() - make_interval(secs => ${seconds})
      and exists (
        select 1 from checks c left join check_groups g on g.id = c.group_id
        where c.account_id = l.account_id and c.activated and not c.muted
          and (c.data->'privateLocations' ? l.slug_name or g.data->'privateLocations' ? l.slug_name))`;
  const up = await sql<Row[]>`select id, account_id, name, slug_name, last_agent_at, unavailable_since from private_locations
    where unavailable_since is not null and last_agent_at > unavailable_since`;
  const change = (r: Row, unavailable: boolean): AvailabilityChange => ({
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    slugName: r.slug_name,
    lastAgentAt: r.last_agent_at,
    unavailable,
    key: `${r.id}-${unavailable ? `down-${r.last_agent_at?.getTime() ?? 0}` : `up-${r.unavailable_since!.getTime()}`}`,
  });
  return [...down.map((r) => change(r, true)), ...up.map((r) => change(r, false))];
}

/** Records a change as sent: the location is marked unavailable (or available again) unless it changed meanwhile. */
export async function markAvailability(sql: Sql, change: AvailabilityChange): Promise<void> {
  if (change.unavailable) await sql`update private_locations set unavailable_since = now() where id = ${change.id} and unavailable_since is null`;
  else
    await sql`update private_locations set unavailable_since = null where id = ${change.id} and unavailable_since is not null and last_agent_at > unavailable_since`;
}

import type { Sql } from '../storage/postgres.js';

/** Deployment triggers and the lookups their routes need. */
export interface DeploymentTriggerRow<D> {
  id: number;
  check_id: string | null;
  group_id: number | null;
  data: D;
  created_at: Date;
  updated_at: Date | null;
}

export async function listDeploymentTriggers<D>(sql: Sql, accountId: string): Promise<DeploymentTriggerRow<D>[]> {
  return sql<DeploymentTriggerRow<D>[]>`select * from deployment_triggers where account_id = ${accountId} order by id`;
}

/** Whether the account has the check (or group) a trigger names. */
export async function deploymentTargetExists(sql: Sql, accountId: string, checkId: string | null, groupId: number | null): Promise<boolean> {
  const rows = checkId
    ? await sql`select 1 from checks where id = ${checkId} and account_id = ${accountId}`
    : await sql`select 1 from check_groups where id = ${groupId} and account_id = ${accountId}`;
  return rows.length > 0;
}

/** The trigger of a check or group: made, or the existing one returned unchanged (idempotent per target). */
export async function upsertDeploymentTrigger<D extends { checkId?: string | null; groupId?: number | null }>(
  sql: Sql,
  accountId: string,
  data: D,
): Promise<{ row: DeploymentTriggerRow<D>; created: boolean }> {
  const checkId = data.checkId ?? null;
  const groupId = data.groupId ?? null;
  const [created] = await sql<DeploymentTriggerRow<D>[]>`insert into deployment_triggers (account_id, check_id, group_id, data)
    values (${accountId}, ${checkId}, ${groupId}, ${sql.json(data as never)}) on conflict do nothing returning *`;
  if (created) return { row: created, created: true };
  const [existing] = checkId
    ? await sql<DeploymentTriggerRow<D>[]>`select * from deployment_triggers where check_id = ${checkId}`
    : await sql<DeploymentTriggerRow<D>[]>`select * from deployment_triggers where group_id = ${groupId}`;
  return { row: existing, created: false };
}

export async function privateLocationExists(sql: Sql, accountId: string, id: string): Promise<boolean> {
  return (await sql`select 1 from private_locations where id = ${id} and account_id = ${accountId}`).length > 0;
}

/** Every private location's queue name and slug (for the per-location run gauges). */
export async function privateLocationQueues(sql: Sql): Promise<{ location: string; slug: string }[]> {
  const rows = await sql<{ id: string; slug_name: string }[]>`select id, slug_name from private_locations order by id`;
  return rows.map((r) => ({ location: `private-${r.id}`, slug: r.slug_name }));
}

/** A store-holding runner serving private locations counts as their agent (no "no agent" alert while it runs). */
export async function stampPrivateLocations(sql: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length) await sql`update private_locations set last_agent_at = now() where id = any(${[...ids]}::uuid[])`;
}

import type { Sql } from '../storage/postgres.js';

/** The project (monitoring as code) a resource belongs to, and its logicalId there. */
export interface ProjectRef {
  project: { logicalId: string; name: string | null };
  logicalId: string;
}

/** Which project manages each of the account's resources, keyed `<type>:<physical id>` (type as projects store it). */
export async function projectRefs(sql: Sql, accountId: string): Promise<Map<string, ProjectRef>> {
  const rows = await sql<{ type: string; physical_id: string; logical_id: string; project_logical_id: string; project_name: string | null }[]>`
    select r.type, r.physical_id, r.logical_id, p.logical_id as project_logical_id, p.name as project_name
    from project_resources r join projects p on p.id = r.project_id
    where p.account_id = ${accountId} and r.type in ('check', 'check-group', 'alert-channel')`;
  return new Map(
    rows.map((r) => [`${r.type}:${r.physical_id}`, { project: { logicalId: r.project_logical_id, name: r.project_name }, logicalId: r.logical_id }]),
  );
}

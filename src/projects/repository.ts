import { createHash } from 'node:crypto';
import { iso } from '../model/time.js';
import type { Sql } from '../storage/postgres.js';
import type { Deployment, DeploymentStatus, DeployResponse, ResourceType } from './model.js';

export interface ProjectRow {
  id: string;
  account_id: string;
  logical_id: string;
  name: string;
  repo_url: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export interface MappingRow {
  type: ResourceType;
  logical_id: string;
  physical_id: string;
  payload_hash: string | null;
}

export function toProject(row: ProjectRow) {
  return { id: row.id, name: row.name, logicalId: row.logical_id, repoUrl: row.repo_url, createdAt: iso(row.created_at)!, updatedAt: iso(row.updated_at) };
}

export async function findProject(db: Sql, accountId: string, logicalId: string): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`select * from projects where account_id = ${accountId} and logical_id = ${logicalId}`;
  return row;
}

/** The project, made or renamed to `name` and `repoUrl`. */
export async function upsertProject(db: Sql, accountId: string, p: { logicalId: string; name: string; repoUrl?: string | null }): Promise<ProjectRow> {
  const [row] = await db<ProjectRow[]>`insert into projects (account_id, logical_id, name, repo_url)
    values (${accountId}, ${p.logicalId}, ${p.name}, ${p.repoUrl ?? null})
    on conflict (account_id, logical_id) do update set name = excluded.name, repo_url = excluded.repo_url,
      updated_at = case when (projects.name, projects.repo_url) is distinct from (excluded.name, excluded.repo_url) then now() else projects.updated_at end
    returning *`;
  return row;
}

/** A new project; undefined when the account has one with this logicalId. */
export async function insertProject(
  db: Sql,
  accountId: string,
  p: { logicalId: string; name: string; repoUrl?: string | null },
): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`insert into projects (account_id, logical_id, name, repo_url)
    values (${accountId}, ${p.logicalId}, ${p.name}, ${p.repoUrl ?? null}) on conflict do nothing returning *`;
  return row;
}

export async function deleteProject(db: Sql, projectId: string): Promise<void> {
  await db`delete from projects where id = ${projectId}`;
}

export async function listProjects(db: Sql, accountId: string): Promise<ProjectRow[]> {
  return db<ProjectRow[]>`select * from projects where account_id = ${accountId} order by created_at, id`;
}

export async function mappingsOf(db: Sql, projectId: string): Promise<MappingRow[]> {
  return db<MappingRow[]>`select type, logical_id, physical_id, payload_hash from project_resources where project_id = ${projectId}`;
}

export async function saveMapping(db: Sql, projectId: string, m: MappingRow): Promise<void> {
  await db`insert into project_resources (project_id, type, logical_id, physical_id, payload_hash)
    values (${projectId}, ${m.type}, ${m.logical_id}, ${m.physical_id}, ${m.payload_hash})
    on conflict (project_id, type, logical_id) do update set physical_id = excluded.physical_id,
      payload_hash = excluded.payload_hash, updated_at = now()`;
}

export async function deleteMapping(db: Sql, projectId: string, type: ResourceType, logicalId: string): Promise<void> {
  await db`delete from project_resources where project_id = ${projectId} and type = ${type} and logical_id = ${logicalId}`;
}

/** Physical ids of `type` some project of the account (other than `exceptProject`) manages. */
export async function managedElsewhere(db: Sql, accountId: string, type: ResourceType, exceptProject?: string): Promise<Map<string, string>> {
  const rows = await db<{ physical_id: string; logical_id: string }[]>`select r.physical_id, p.logical_id from project_resources r
    join projects p on p.id = r.project_id
    where p.account_id = ${accountId} and r.type = ${type} and p.id is distinct from ${exceptProject ?? null}::uuid`;
  return new Map(rows.map((r) => [r.physical_id, r.logical_id]));
}

// Deployments.

export interface DeploymentRow {
  id: string;
  account_id: string;
  project_logical_id: string;
  kind: 'DEPLOY' | 'DESTROY';
  status: DeploymentStatus;
  dry_run: boolean;
  progress: number;
  error: { code: string; message: string } | null;
  result: DeployResponse | null;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  cancel_requested_at: Date | null;
}

export function toDeployment(row: DeploymentRow): Deployment {
  return {
    id: row.id,
    logicalId: row.project_logical_id,
    status: row.status,
    dryRun: row.dry_run,
    progress: row.progress,
    error: row.error,
    result: row.result,
    createdAt: iso(row.created_at)!,
    startedAt: iso(row.started_at),
    endedAt: iso(row.ended_at),
    cancelRequestedAt: iso(row.cancel_requested_at),
  };
}

/** The advisory-lock key of one account's project: held by the transaction that deploys it. */
export function projectLockKey(accountId: string, logicalId: string): bigint {
  return createHash('sha256').update(`project\0${accountId}\0${logicalId}`).digest().readBigInt64BE(0);
}

/** Takes the project's lock for the rest of the transaction `tx`; false when another transaction holds it. */
export async function tryLockProject(tx: Sql, key: bigint): Promise<boolean> {
  const [row] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${key.toString()}::bigint) as ok`;
  return row.ok;
}

export async function findDeployment(db: Sql, accountId: string, logicalId: string, id: string): Promise<DeploymentRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await db<DeploymentRow[]>`select * from project_deployments
    where id = ${id} and account_id = ${accountId} and project_logical_id = ${logicalId}`;
  return row;
}

export async function activeDeployments(db: Sql, accountId: string, logicalId: string): Promise<DeploymentRow[]> {
  return db<DeploymentRow[]>`select * from project_deployments where account_id = ${accountId}
    and project_logical_id = ${logicalId} and status in ('PENDING', 'RUNNING') order by created_at`;
}

export async function insertDeployment(
  db: Sql,
  d: { accountId: string; logicalId: string; kind: 'DEPLOY' | 'DESTROY'; dryRun: boolean },
): Promise<DeploymentRow> {
  const [row] = await db<DeploymentRow[]>`insert into project_deployments (account_id, project_logical_id, kind, status, dry_run, started_at)
    values (${d.accountId}, ${d.logicalId}, ${d.kind}, 'RUNNING', ${d.dryRun}, now()) returning *`;
  return row;
}

/** Forgets a deployment (a synchronous deploy the body made fail: its 4xx answer leaves nothing behind). */
export async function deleteDeployment(db: Sql, id: string): Promise<void> {
  await db`delete from project_deployments where id = ${id}`;
}

export async function setProgress(db: Sql, id: string, progress: number): Promise<void> {
  await db`update project_deployments set progress = ${progress} where id = ${id} and status = 'RUNNING' and progress < ${progress}`;
}

export async function finishDeployment(
  db: Sql,
  id: string,
  status: Exclude<DeploymentStatus, 'PENDING' | 'RUNNING'>,
  outcome: { result?: DeployResponse; error?: { code: string; message: string } },
): Promise<void> {
  await db`update project_deployments set status = ${status}, ended_at = now(),
      progress = ${status === 'SUCCEEDED' ? 100 : db`progress`},
      result = ${outcome.result ? db.json(outcome.result as never) : null}, error = ${outcome.error ? db.json(outcome.error as never) : null}
    where id = ${id} and status in ('PENDING', 'RUNNING')`;
}

/** Marks deployments of the project still PENDING or RUNNING (whose process is gone) as FAILED. */
export async function failAbandoned(db: Sql, accountId: string, logicalId: string): Promise<void> {
  await db`update project_deployments set status = 'FAILED', ended_at = now(),
      error = ${db.json({ code: 'INTERRUPTED', message: 'The deployment stopped before it finished (its server went away); nothing of it was applied.' } as never)}
    where account_id = ${accountId} and project_logical_id = ${logicalId} and status in ('PENDING', 'RUNNING')`;
}

export async function requestCancel(db: Sql, id: string): Promise<void> {
  await db`update project_deployments set cancel_requested_at = coalesce(cancel_requested_at, now()) where id = ${id}`;
}

export async function cancelRequested(db: Sql, id: string): Promise<boolean> {
  const [row] = await db<{ requested: boolean }[]>`select cancel_requested_at is not null as requested from project_deployments where id = ${id}`;
  return row?.requested ?? false;
}

// Import plans.

export interface ImportRow {
  id: string;
  account_id: string;
  project_id: string;
  preview: boolean;
  changes: unknown;
  created_at: Date;
  applied_at: Date | null;
  committed_at: Date | null;
}

export function toImportPlan(row: ImportRow) {
  return {
    id: row.id,
    createdAt: iso(row.created_at)!,
    ...(row.applied_at ? { appliedAt: iso(row.applied_at)! } : {}),
    ...(row.committed_at ? { committedAt: iso(row.committed_at)! } : {}),
    changes: row.changes,
  };
}

export async function insertImport(db: Sql, accountId: string, projectId: string, preview: boolean, changes: unknown): Promise<ImportRow> {
  const [row] = await db<ImportRow[]>`insert into project_imports (account_id, project_id, preview, changes)
    values (${accountId}, ${projectId}, ${preview}, ${db.json(changes as never)}) returning *`;
  return row;
}

export async function listImports(
  db: Sql,
  accountId: string,
  projectId: string | undefined,
  f: { onlyUnapplied: boolean; onlyUncommitted: boolean },
): Promise<ImportRow[]> {
  return db<ImportRow[]>`select * from project_imports where account_id = ${accountId}
    ${projectId ? db`and project_id = ${projectId}` : db``}
    ${f.onlyUnapplied ? db`and applied_at is null` : db``}
    ${f.onlyUncommitted ? db`and committed_at is null` : db``}
    order by created_at, id`;
}

export async function lockImport(db: Sql, accountId: string, id: string): Promise<ImportRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await db<ImportRow[]>`select * from project_imports where id = ${id} and account_id = ${accountId} for update`;
  return row;
}

export async function markImport(db: Sql, id: string, field: 'applied' | 'committed'): Promise<void> {
  if (field === 'applied') await db`update project_imports set applied_at = now() where id = ${id}`;
  else await db`update project_imports set committed_at = now() where id = ${id}`;
}

export async function deleteImport(db: Sql, id: string): Promise<void> {
  await db`delete from project_imports where id = ${id}`;
}

/** Tables of the types a project can manage by id, and the type of their id (fixed text, never from a request). */
const ID_TABLES = {
  check: { table: 'checks', cast: 'uuid' },
  'check-group': { table: 'check_groups', cast: 'bigint' },
  'alert-channel': { table: 'alert_channels', cast: 'bigint' },
  'maintenance-window': { table: 'maintenance_windows', cast: 'bigint' },
  'private-location': { table: 'private_locations', cast: 'uuid' },
  dashboard: { table: 'dashboards', cast: 'bigint' },
  'status-page-service': { table: 'status_page_services', cast: 'uuid' },
  'status-page': { table: 'status_pages', cast: 'uuid' },
} as const;
export type IdTableType = keyof typeof ID_TABLES;

/** Which of `ids` (text) name a resource of `type` in the account. */
export async function existingIds(db: Sql, accountId: string, type: IdTableType, ids: string[]): Promise<Set<string>> {
  const { table, cast } = ID_TABLES[type];
  const wellFormed = ids.filter((id) => (cast === 'uuid' ? /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) : /^\d{1,15}$/.test(id)));
  if (!wellFormed.length) return new Set();
  const rows = await db<{ id: string }[]>`select id::text as id from ${db(table)}
    where account_id = ${accountId} and id = any(${wellFormed}::${db.unsafe(cast)}[])`;
  return new Set(rows.map((r) => r.id));
}

/** Which subscriptions (`<channel>:check:<uuid>` or `<channel>:group:<id>`) exist on the account's channels. */
export async function existingSubscriptions(db: Sql, accountId: string): Promise<Set<string>> {
  const rows = await db<{ key: string }[]>`select s.alert_channel_id::text || ':' ||
      case when s.check_id is not null then 'check:' || s.check_id::text else 'group:' || s.group_id::text end as key
    from alert_subscriptions s join alert_channels c on c.id = s.alert_channel_id where c.account_id = ${accountId}`;
  return new Set(rows.map((r) => r.key));
}

/** Slug names of the account's private locations, by id. */
export async function locationSlugs(db: Sql, accountId: string): Promise<Map<string, string>> {
  const rows = await db<{ id: string; slug_name: string }[]>`select id::text as id, slug_name from private_locations where account_id = ${accountId}`;
  return new Map(rows.map((r) => [r.id, r.slug_name]));
}

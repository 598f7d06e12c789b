import type { Sql } from '../storage/postgres.js';

/**
 * The audit log (docs/people.md): every write (resource, key, member, role, deploy, sign-in, failed sign-in) with
 * who (user or key), what (operation, resource id, the names of the fields sent: never a value), when, from which
 * address, and how it ended (status).
 */
export interface AuditEntry {
  accountId: string | null;
  actor: { type: 'user' | 'key' | 'anonymous'; id: string | null; name: string | null };
  operation: string;
  method: string;
  path: string;
  resourceId?: string | null;
  fields?: string[];
  status: number;
  address?: string | null;
}

export interface AuditRow {
  id: number;
  account_id: string | null;
  at: Date;
  actor_type: 'user' | 'key' | 'anonymous';
  actor_id: string | null;
  actor_name: string | null;
  operation: string;
  method: string;
  path: string;
  resource_id: string | null;
  fields: string[];
  status: number;
  address: string | null;
}

export async function recordAudit(db: Sql, e: AuditEntry): Promise<void> {
  await db`insert into audit_log (account_id, actor_type, actor_id, actor_name, operation, method, path, resource_id, fields, status, address)
    values (${e.accountId}, ${e.actor.type}, ${e.actor.id}, ${e.actor.name}, ${e.operation}, ${e.method}, ${e.path.slice(0, 2048)},
      ${e.resourceId ?? null}, ${(e.fields ?? []).slice(0, 100)}, ${e.status}, ${e.address ?? null})`;
}

export interface AuditFilter {
  from?: Date;
  to?: Date;
  actorId?: string;
  operation?: string;
  resourceId?: string;
}

/** A page of the account's entries, newest first, after `before` (an entry id: the cursor). */
export async function auditPage(db: Sql, accountId: string, f: AuditFilter, limit: number, before?: number): Promise<AuditRow[]> {
  return db<AuditRow[]>`select * from audit_log where account_id = ${accountId}
    and (${f.from ?? null}::timestamptz is null or at >= ${f.from ?? null}::timestamptz)
    and (${f.to ?? null}::timestamptz is null or at < ${f.to ?? null}::timestamptz)
    and (${f.actorId ?? null}::text is null or actor_id = ${f.actorId ?? null})
    and (${f.operation ?? null}::text is null or operation = ${f.operation ?? null})
    and (${f.resourceId ?? null}::text is null or resource_id = ${f.resourceId ?? null})
    and (${before ?? null}::bigint is null or id < ${before ?? null}::bigint)
    order by id desc limit ${limit}`;
}

/** Removes entries older than `days`; answers how many. */
export async function sweepAudit(db: Sql, days: number): Promise<number> {
  const result = await db`delete from audit_log where at < now() - ${`${days} days`}::interval`;
  return result.count;
}

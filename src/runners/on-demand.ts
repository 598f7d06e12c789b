import type { RunJob, RunSource } from '../run-kernel/index.js';
import type { Sql } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { createSessions, type SessionRow } from './check-sessions.js';
import { loadRunnable, locationQueues } from './definitions.js';
import { enqueueRuns } from './jobs.js';
import { RUNNABLE_TYPES } from './schedule.js';

/** Which checks a trigger names: any of `checkId`, or matching `matchTags` (OR of AND-lists; `!tag` excludes). */
export interface TriggerTarget {
  checkId?: string[];
  matchTags?: string[][];
  groupId?: number;
}

/** Whether tags (the check's and its group's) match `[[a, b], [c, !d]]`: (a and b) or (c and not d). */
export function matchesTags(tags: readonly string[], matchTags: readonly (readonly string[])[]): boolean {
  const have = new Set(tags.map((t) => t.toLowerCase()));
  return matchTags.some((all) => all.every((t) => (t.startsWith('!') ? !have.has(t.slice(1).toLowerCase()) : have.has(t.toLowerCase()))));
}

/** The account's activated, runnable checks a target names. No target: all of them. */
export async function matchChecks(sql: Sql, accountId: string, target: TriggerTarget = {}): Promise<string[]> {
  const rows = await sql<{ id: string; tags: string[]; group_tags: string[] | null; group_id: number | null }[]>`
    select c.id, c.tags, g.data->'tags' as group_tags, c.group_id from checks c left join check_groups g on g.id = c.group_id
    where c.account_id = ${accountId} and c.activated and c.check_type = any(${RUNNABLE_TYPES}::text[])
      and (g.id is null or coalesce((g.data->>'activated')::boolean, true))
    order by c.created_at, c.id`;
  const ids = new Set((target.checkId ?? []).map((id) => id.toLowerCase()));
  const filtered = target.checkId !== undefined || target.matchTags !== undefined || target.groupId !== undefined;
  return rows
    .filter((r) => {
      if (!filtered) return true;
      if (ids.has(r.id)) return true;
      if (target.groupId !== undefined && r.group_id === target.groupId) return true;
      return target.matchTags !== undefined && target.matchTags.length > 0 && matchesTags([...r.tags, ...(r.group_tags ?? [])], target.matchTags);
    })
    .map((r) => r.id);
}

/**
 * Starts a check session per check and queues its runs now: in every location with runParallel, else in its
 * first. Returns the sessions (empty when the account has none of the checks).
 */
export async function startSessions(
  sql: Sql,
  queues: Queues,
  accountId: string,
  checkIds: readonly string[],
  source: RunSource,
  timeoutMs: number,
): Promise<SessionRow[]> {
  const checks = [...(await loadRunnable(sql, accountId, checkIds)).values()];
  if (!checks.length) return [];
  const planned = checks.map((c) => ({ id: c.id, name: c.name, checkType: c.checkType, locations: c.runParallel ? c.locations : c.locations.slice(0, 1) }));
  const sessions = await createSessions(sql, accountId, planned, source, timeoutMs);
  const typeOf = new Map(checks.map((c) => [c.id, c.checkType]));
  const queueOf = await locationQueues(
    sql,
    accountId,
    planned.flatMap((p) => p.locations),
  );
  const now = Date.now();
  const runs: { job: RunJob; queue: string; startAt: number }[] = [];
  for (const s of sessions) {
    for (const location of s.run_locations) {
      const queue = queueOf.get(location);
      // A location that does not exist leaves its session to time out, visibly.
      if (!queue) continue;
      runs.push({
        job: { v: 1, accountId, checkId: s.check_id, location, slot: now, attempt: 1, sessionId: s.id, source, checkType: typeOf.get(s.check_id) },
        queue,
        startAt: now,
      });
    }
  }
  await enqueueRuns(queues, runs, now);
  return sessions;
}

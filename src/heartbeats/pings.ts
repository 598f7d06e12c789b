import { createHash, randomUUID } from 'node:crypto';
import { toRow } from '../ingest/index.js';
import { groupBy } from '../model/collections.js';
import { graceMs, HEARTBEAT_LOCATION, type HeartbeatSettings, periodMs } from '../model/heartbeats.js';
import { maintenanceEffect } from '../model/maintenance.js';
import { ingestJob, type ResultQueue } from '../model/results.js';
import { accountContext, lockChecks } from '../state/index.js';
import { type Sql, transaction } from '../storage/postgres.js';

/** A run id (and batch id) made from what it records: two sweepers recording the same miss record one run. */
function deterministicUuid(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function heartbeatRun(checkId: string, at: number, failed: boolean) {
  const iso = new Date(at).toISOString();
  return {
    checkId,
    checkType: 'HEARTBEAT' as const,
    runLocation: HEARTBEAT_LOCATION,
    startedAt: iso,
    stoppedAt: iso,
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    aborted: false,
    attempts: 1,
  };
}

/**
 * A ping: one run through the normal ingest path (a failure with /fail), and the next deadline moved on.
 * Unknown tokens name nothing (undefined: the route answers 404).
 */
export async function recordPing(sql: Sql, ingest: ResultQueue, token: string, failed: boolean, now = Date.now()): Promise<{ checkId: string } | undefined> {
  const [check] = await sql<{ id: string; account_id: string; heartbeat: HeartbeatSettings }[]>`select id, account_id, data->'heartbeat' as heartbeat
    from checks where ping_token = ${token} and check_type = 'HEARTBEAT'`;
  if (!check) return undefined;
  const runId = randomUUID();
  await ingest.enqueue(ingestJob(randomUUID(), check.account_id, [toRow(check.account_id, runId, heartbeatRun(check.id, now, failed))]));
  await sql`insert into heartbeat_deadlines (check_id, account_id, next_deadline_at, last_ping_at)
    values (${check.id}, ${check.account_id}, ${new Date(now + periodMs(check.heartbeat) + graceMs(check.heartbeat))}, ${new Date(now)})
    on conflict (check_id) do update set next_deadline_at = excluded.next_deadline_at, last_ping_at = excluded.last_ping_at`;
  return { checkId: check.id };
}

/**
 * Deadlines that passed without a ping: each records one failed run (at the deadline) and moves on by a
 * period; a deactivated or paused check records nothing and just moves on. Rows are taken with SKIP
 * LOCKED, and the run id is made from the check and deadline, so several sweepers record each miss once.
 */
export async function sweepHeartbeats(sql: Sql, ingest: ResultQueue, now = Date.now(), limit = 500): Promise<number> {
  return transaction(sql, async (tx) => {
    type Due = { check_id: string; account_id: string; next_deadline_at: Date };
    const due = await tx<Due[]>`select check_id, account_id, next_deadline_at
      from heartbeat_deadlines where next_deadline_at <= ${new Date(now)}
      order by next_deadline_at limit ${limit} for update skip locked`;
    let recorded = 0;
    const byAccount = groupBy(due, (d) => d.account_id);
    for (const [accountId, rows] of byAccount) {
      const { accountSettings, windows } = await accountContext(tx, accountId);
      const checks = new Map(
        (
          await lockChecks(
            tx,
            accountId,
            rows.map((r) => r.check_id),
            accountSettings,
          )
        ).map((c) => [c.check.id, c.check]),
      );
      const misses = [];
      for (const row of rows) {
        const check = checks.get(row.check_id);
        const heartbeat = check?.data.heartbeat as HeartbeatSettings | undefined;
        if (check?.checkType !== 'HEARTBEAT' || !heartbeat) {
          await tx`delete from heartbeat_deadlines where check_id = ${row.check_id}`;
          continue;
        }
        const deadline = row.next_deadline_at.getTime();
        const period = periodMs(heartbeat);
        if (check.activated && !maintenanceEffect(windows, check.tags, deadline).paused) {
          const id = deterministicUuid(`${check.id}:${deadline}`);
          misses.push({ id, row: toRow(accountId, id, heartbeatRun(check.id, deadline, true)) });
        }
        // One miss per sweep however long it has been: the next deadline is the first one after now.
        const next = deadline + period * Math.max(1, Math.ceil((now - deadline + 1) / period));
        await tx`update heartbeat_deadlines set next_deadline_at = ${new Date(next)} where check_id = ${row.check_id}`;
      }
      if (misses.length) {
        const batchId = deterministicUuid(misses.map((m) => m.id).join(','));
        await ingest.enqueue(
          ingestJob(
            batchId,
            accountId,
            misses.map((m) => m.row),
          ),
        );
        recorded += misses.length;
      }
    }
    return recorded;
  });
}

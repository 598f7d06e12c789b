import { effectiveSchedule } from '../checks/index.js';
import { periodOf } from '../model/checks.js';

export { periodOf };

import { phaseOf, RUNNABLE_TYPES, slotAtOrAfter } from '../model/schedule.js';
import type { Sql } from '../storage/postgres.js';

/**
 * When checks run. Each runnable check has a period (its frequency; 10, 20 or 30 seconds for frequency 0 with
 * that frequencyOffset) and a phase within it, derived from its id, so 10,000 checks of one minute start spread
 * over the minute rather than all at :00. Slots are epoch-aligned (slot = k × period + phase): every scheduler
 * process computes the same slots, and a slot is claimed once (check_schedules, FOR UPDATE SKIP LOCKED).
 */

export { locationsForSlot, phaseOf, RUNNABLE_TYPES, slotAtOrAfter } from '../model/schedule.js';

export interface DesiredSchedule {
  checkId: string;
  accountId: string;
  periodMs: number;
  phaseMs: number;
}

/**
 * What check_schedules should hold: every activated check (and activated group) of a runnable type, with its
 * effective frequency (the group's when it sets one, as group settings apply).
 */
export async function desiredSchedules(sql: Sql): Promise<DesiredSchedule[]> {
  const rows = await sql<{ id: string; account_id: string; frequency: number | null; offset: number | null; group_frequency: number | null }[]>`
    select c.id, c.account_id, c.frequency, (c.data->>'frequencyOffset')::int as offset, (g.data->>'frequency')::int as group_frequency
    from checks c left join check_groups g on g.id = c.group_id
    where c.activated and c.check_type = any(${RUNNABLE_TYPES}::text[])
      and (g.id is null or coalesce((g.data->>'activated')::boolean, true))`;
  return rows.map((r) => {
    const { periodMs } = effectiveSchedule(
      { frequency: r.frequency ?? 10, data: { frequencyOffset: r.offset ?? undefined } },
      { frequency: r.group_frequency },
    );
    return { checkId: r.id, accountId: r.account_id, periodMs, phaseMs: phaseOf(r.id, periodMs) };
  });
}

/**
 * Makes check_schedules what the checks say: new checks get their first slot after `now`, a changed period or
 * phase starts again from the next slot, and schedules of checks gone (deleted, deactivated, their type
 * changed) are dropped. Only differences are written; safe to run in several processes at once.
 */
export async function reconcileSchedules(sql: Sql, now = Date.now()): Promise<{ added: number; changed: number; removed: number }> {
  const desired = await desiredSchedules(sql);
  const current = new Map(
    (await sql<{ check_id: string; period_ms: number; phase_ms: number }[]>`select check_id, period_ms, phase_ms from check_schedules`).map((r) => [
      r.check_id,
      r,
    ]),
  );
  const writes = desired.filter((d) => {
    const c = current.get(d.checkId);
    return !c || c.period_ms !== d.periodMs || c.phase_ms !== d.phaseMs;
  });
  const wanted = new Set(desired.map((d) => d.checkId));
  const gone = [...current.keys()].filter((id) => !wanted.has(id));
  if (writes.length) {
    for (let i = 0; i < writes.length; i += 5000) {
      const part = writes.slice(i, i + 5000);
      await sql`insert into check_schedules (check_id, account_id, period_ms, phase_ms, next_run_ms)
        select * from unnest(${part.map((w) => w.checkId)}::uuid[], ${part.map((w) => w.accountId)}::uuid[],
          ${part.map((w) => w.periodMs)}::int[], ${part.map((w) => w.phaseMs)}::int[],
          ${part.map((w) => slotAtOrAfter(now, w.periodMs, w.phaseMs))}::bigint[])
        on conflict (check_id) do update set period_ms = excluded.period_ms, phase_ms = excluded.phase_ms,
          next_run_ms = excluded.next_run_ms, updated_at = now()
        where check_schedules.period_ms <> excluded.period_ms or check_schedules.phase_ms <> excluded.phase_ms`;
    }
  }
  if (gone.length) await sql`delete from check_schedules where check_id = any(${gone}::uuid[])`;
  return { added: writes.filter((w) => !current.has(w.checkId)).length, changed: writes.filter((w) => current.has(w.checkId)).length, removed: gone.length };
}

export interface ClaimedSlot {
  checkId: string;
  accountId: string;
  /** The slot to run: the latest one due (older missed slots are skipped, never run in a burst). */
  slot: number;
  periodMs: number;
}

/**
 * Claims the slots due by `now + lookaheadMs` (rows locked SKIP LOCKED, so concurrent schedulers split them)
 * and moves each schedule on to its next slot after `now`. Runs inside the caller's transaction: the caller
 * enqueues the runs before it commits, so a crash in between leaves the slots to claim again (the run's job id
 * makes a second enqueue a no-op).
 */
/** When the earliest schedule comes due (epoch ms), or null when there is none. */
export async function nextDueMs(tx: Sql): Promise<number | null> {
  const [row] = await tx<{ next: string | null }[]>`select min(next_run_ms)::text as next from check_schedules`;
  return row?.next == null ? null : Number(row.next);
}

export async function claimDueSlots(tx: Sql, now: number, lookaheadMs: number, limit: number): Promise<ClaimedSlot[]> {
  const rows = await tx<{ check_id: string; account_id: string; slot_from: string; period_ms: number }[]>`
    with due as (
      select check_id, next_run_ms, period_ms from check_schedules
      where next_run_ms <= ${now + lookaheadMs} order by next_run_ms limit ${limit} for update skip locked
    )
    update check_schedules s
    set next_run_ms = due.next_run_ms + due.period_ms * (floor(greatest(0, ${now} - due.next_run_ms)::numeric / due.period_ms)::bigint + 1)
    from due where s.check_id = due.check_id
    returning s.check_id, s.account_id, due.next_run_ms::text as slot_from, s.period_ms`;
  return rows.map((r) => {
    const from = Number(r.slot_from);
    // The latest slot not after now (or the coming one within the lookahead).
    const slot = from > now ? from : from + r.period_ms * Math.floor((now - from) / r.period_ms);
    return { checkId: r.check_id, accountId: r.account_id, slot, periodMs: r.period_ms };
  });
}

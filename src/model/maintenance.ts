/** What the state needs of a maintenance window (its stored body). */
export interface WindowData {
  tags?: string[];
  startsAt: string;
  endsAt: string;
  repeatInterval?: number | null;
  repeatUnit?: 'DAY' | 'WEEK' | 'MONTH' | null;
  repeatEndsAt?: string | null;
  pauseAllChecks?: boolean;
  silenceAlertsTags?: string[];
  silenceAllAlerts?: boolean;
}

const DAY_MS = 86_400_000;

/** Adds `months` calendar months in UTC, keeping the time of day (the 31st becomes the month's last day). */
function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const target = new Date(
    Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

/**
 * Whether the window is on at `t` (epoch ms): inside the first occurrence [startsAt, endsAt), or inside a
 * repeat of it every `repeatInterval` days, weeks or calendar months that starts before `repeatEndsAt`.
 * Dates are read in UTC (a date alone is its midnight).
 */
export function isActive(w: WindowData, t: number): boolean {
  const start = Date.parse(w.startsAt);
  const length = Date.parse(w.endsAt) - start;
  if (!(length > 0) || t < start) return false;
  if (t < start + length) return true;
  if (!w.repeatUnit) return false;
  const every = Math.max(1, w.repeatInterval ?? 1);
  const until = w.repeatEndsAt ? Date.parse(w.repeatEndsAt) : Infinity;
  const occurs = (at: number) => at < until && at <= t && t < at + length;
  if (w.repeatUnit === 'MONTH') {
    const s = new Date(start);
    const n = new Date(t);
    const months = (n.getUTCFullYear() - s.getUTCFullYear()) * 12 + (n.getUTCMonth() - s.getUTCMonth());
    // The occurrence holding t started in this month's step or, for windows longer than a step, an earlier one.
    for (let k = Math.floor(months / every); k >= 0 && k >= Math.floor(months / every) - Math.ceil(length / (28 * DAY_MS * every)) - 1; k--) {
      if (occurs(addMonths(start, k * every))) return true;
    }
    return false;
  }
  const period = (w.repeatUnit === 'WEEK' ? 7 : 1) * every * DAY_MS;
  const last = Math.floor((t - start) / period);
  for (let k = last; k >= 0 && k >= last - Math.ceil(length / period); k--) if (occurs(start + k * period)) return true;
  return false;
}

const overlaps = (a: readonly string[] | undefined, b: ReadonlySet<string>) => (a ?? []).some((x) => b.has(x));

/**
 * What the account's windows do to a check at `t`. A window applies to the checks carrying one of its
 * `tags` (every check when it has none). While on, `pauseAllChecks` pauses the checks it applies to (no
 * heartbeat misses, runs flagged); alerts are silenced for those checks with `silenceAllAlerts`, for checks
 * carrying one of `silenceAlertsTags`, and for paused checks.
 */
export function maintenanceEffect(windows: readonly WindowData[], checkTags: readonly string[], t: number): { paused: boolean; silenced: boolean } {
  const tags = new Set(checkTags);
  let paused = false;
  let silenced = false;
  for (const w of windows) {
    if (!isActive(w, t)) continue;
    const applies = !w.tags?.length || overlaps(w.tags, tags);
    if (applies && w.pauseAllChecks) paused = true;
    if ((w.silenceAllAlerts && applies) || overlaps(w.silenceAlertsTags, tags)) silenced = true;
  }
  return { paused, silenced: silenced || paused };
}

/**
 * The occurrences of a window that overlap [from, to), oldest first, at most `max`: each its start and end
 * (epoch ms). Repeats as `isActive` reads them (every n days, weeks or calendar months, before repeatEndsAt).
 */
export function occurrences(w: WindowData, from: number, to: number, max = 100): { start: number; end: number }[] {
  const start = Date.parse(w.startsAt);
  const length = Date.parse(w.endsAt) - start;
  if (!(length > 0) || !Number.isFinite(start)) return [];
  const out: { start: number; end: number }[] = [];
  const until = w.repeatEndsAt ? Date.parse(w.repeatEndsAt) : Infinity;
  const every = Math.max(1, w.repeatInterval ?? 1);
  const at = (k: number) => (w.repeatUnit === 'MONTH' ? addMonths(start, k * every) : start + k * (w.repeatUnit === 'WEEK' ? 7 : 1) * every * DAY_MS);
  if (!w.repeatUnit) return start < to && start + length > from ? [{ start, end: start + length }] : [];
  // The first step that could overlap `from` (months: a step is at least 28 days).
  const step = w.repeatUnit === 'MONTH' ? 28 * DAY_MS * every : (w.repeatUnit === 'WEEK' ? 7 : 1) * every * DAY_MS;
  let k = Math.max(0, Math.floor((from - start - length) / (w.repeatUnit === 'MONTH' ? 31 * DAY_MS * every : step)));
  for (; out.length < max; k++) {
    const s = at(k);
    if (s >= to || s >= until) break;
    if (s + length > from) out.push({ start: s, end: s + length });
  }
  return out;
}

/** Whether a window that applies to a check (one of its tags, or every check when it has none) is on at `t`. */
export function inMaintenance(windows: readonly WindowData[], checkTags: readonly string[], t: number): boolean {
  const tags = new Set(checkTags);
  return windows.some((w) => isActive(w, t) && (!w.tags?.length || overlaps(w.tags, tags)));
}

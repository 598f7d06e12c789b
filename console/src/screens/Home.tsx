import { useMemo } from 'preact/hooks';
import { allPages, get, inSlices, post } from '../api';
import { bucketsOf, type CheckType, type TimelineItem, typeLabel } from '../checks';
import { ms, pct } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { can, useSession } from '../session';
import { type Bucket, type CheckState, Empty, ErrorNote, Field, Loading, StateBadge, Strip, useData } from '../ui';

export interface Check {
  id: string;
  name: string;
  checkType: CheckType;
  activated: boolean;
  muted: boolean;
  tags: string[];
  locations?: string[];
  privateLocations?: string[];
  groupId?: number | null;
  frequency?: number;
}
interface Group {
  id: number;
  name: string;
}
export interface CheckStatus {
  checkId: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  /** RUNNING, or NO_DATA when its runs stopped (its other fields are then as old as lastRunAt). */
  runState?: 'RUNNING' | 'NO_DATA' | 'PAUSED' | 'MAINTENANCE';
  lastRunAt?: string | null;
  noDataSince?: string | null;
  noDataLocations?: string[];
  updated_at: string | null;
  created_at: string;
}
/** What Home shows of a window: its success ratio, the share of expected runs that did not happen, and p95. */
interface Summary {
  availability: number | null;
  noData: number | null;
  p95: number | null;
}

/** A window's runs as Home shows them: passed (degraded included) over all runs, and the p95 of the check's headline figure. */
function summaryOf(check: Check, t: TimelineItem | undefined): Summary | undefined {
  if (!t) return undefined;
  const { runs, failed, responseTimeP95, latencyP95, noDataRatio } = t.total;
  return {
    availability: runs ? (100 * (runs - failed)) / runs : null,
    noData: noDataRatio ?? null,
    p95: check.checkType === 'ICMP' ? latencyP95 : responseTimeP95,
  };
}

/** A check's state as the console shows it: paused and maintenance first, then its latest runs, else no data. */
export function stateOf(check: Check, status: CheckStatus | undefined, inMaintenance: boolean): CheckState {
  if (!check.activated) return 'paused';
  if (inMaintenance) return 'maintenance';
  // Never ran, or its runs stopped: its last result is not its state now.
  if (!status || status.runState === 'NO_DATA') return 'nodata';
  if (status.hasFailures || status.hasErrors) return 'failing';
  if (status.isDegraded) return 'degraded';
  return 'passing';
}

/** The share of a window's expected runs that did not happen, under its success ratio: said only when some are missing. */
function NoData({ value }: { value: number | null | undefined }) {
  if (!value) return null;
  return <div class="muted no-data">{pct(value)} no data</div>;
}

const ORDER: Record<CheckState, number> = { failing: 0, degraded: 1, nodata: 2, maintenance: 3, passing: 4, paused: 5 };
const p95Of = (s: Summary | undefined) => s?.p95 ?? null;

interface Row {
  check: Check;
  group?: Group;
  state: CheckState;
  strip: Bucket[];
  day?: Summary;
  week?: Summary;
  /** When the check last failed within the strip (for "failing recently" first). */
  lastFailure: number;
}

async function loadHome(signal: AbortSignal): Promise<Row[]> {
  const [checks, groups, statuses] = await Promise.all([
    allPages<Check>('/v1/checks', signal),
    allPages<Group>('/v1/check-groups', signal),
    get<CheckStatus[]>('/v1/check-statuses', signal),
  ]);
  const ids = checks.map((c) => c.id);
  // Two calls for a thousand checks: the last 24 hours in half hours (the strip, its ratio and p95), and 7 days.
  const [timeline, week] = await Promise.all([
    inSlices(ids, 1000, (checkIds) => post<TimelineItem[]>('/v1/analytics/checks/timeline?hours=24&buckets=48', { checkIds })),
    inSlices(ids, 1000, (checkIds) => post<TimelineItem[]>('/v1/analytics/checks/timeline?hours=168&buckets=7', { checkIds })),
  ]);
  const by = <T extends { checkId: string }>(items: T[]) => new Map(items.map((i) => [i.checkId, i]));
  const [statusOf, weekOf, stripOf] = [by(statuses), by(week), by(timeline)];
  const groupOf = new Map(groups.map((g) => [g.id, g]));
  return checks.map((check) => {
    const t = stripOf.get(check.id);
    const strip = t ? bucketsOf(t) : [];
    const failedAt = [...strip].reverse().find((b) => b.failed > 0);
    return {
      check,
      group: check.groupId ? groupOf.get(check.groupId) : undefined,
      state: stateOf(check, statusOf.get(check.id), t?.inMaintenance ?? false),
      strip,
      day: summaryOf(check, t),
      week: summaryOf(check, weekOf.get(check.id)),
      lastFailure: failedAt ? Date.parse(failedAt.from) : 0,
    };
  });
}

const SORTS: Record<string, { label: string; compare: (a: Row, b: Row) => number }> = {
  attention: {
    label: 'Failing recently first',
    compare: (a, b) => ORDER[a.state] - ORDER[b.state] || b.lastFailure - a.lastFailure || a.check.name.localeCompare(b.check.name),
  },
  name: { label: 'Name', compare: (a, b) => a.check.name.localeCompare(b.check.name) },
  availability: { label: 'Success ratio (24 h), lowest first', compare: (a, b) => (a.day?.availability ?? 101) - (b.day?.availability ?? 101) },
  p95: { label: 'p95 (24 h), slowest first', compare: (a, b) => (p95Of(b.day) ?? -1) - (p95Of(a.day) ?? -1) },
};

/** Every check and its state at a glance, refreshed as runs land (every 15 s), filtered and sorted in the address. */
export function Home() {
  const session = useSession();
  const { query } = useLocation();
  const { data, error, loading } = useData(loadHome, [], 15_000);
  const filters = {
    q: query.get('q') ?? '',
    state: query.get('state') ?? '',
    type: query.get('type') ?? '',
    tag: query.get('tag') ?? '',
    location: query.get('location') ?? '',
    group: query.get('group') ?? '',
  };
  const sort = SORTS[query.get('sort') ?? 'attention'] ?? SORTS.attention!;

  const options = useMemo(() => {
    const rows = data ?? [];
    const uniq = (xs: string[]) => [...new Set(xs)].sort();
    return {
      types: uniq(rows.map((r) => r.check.checkType)),
      tags: uniq(rows.flatMap((r) => r.check.tags)),
      locations: uniq(rows.flatMap((r) => [...(r.check.locations ?? []), ...(r.check.privateLocations ?? [])])),
      groups: uniq(rows.map((r) => r.group?.name ?? '').filter(Boolean)),
    };
  }, [data]);

  const rows = useMemo(() => {
    const q = filters.q.toLowerCase();
    return (data ?? [])
      .filter((r) => !q || r.check.name.toLowerCase().includes(q) || r.check.tags.some((t) => t.toLowerCase().includes(q)))
      .filter((r) => !filters.state || r.state === filters.state)
      .filter((r) => !filters.type || r.check.checkType === filters.type)
      .filter((r) => !filters.tag || r.check.tags.includes(filters.tag))
      .filter((r) => !filters.location || [...(r.check.locations ?? []), ...(r.check.privateLocations ?? [])].includes(filters.location))
      .filter((r) => !filters.group || r.group?.name === filters.group)
      .sort(sort.compare);
  }, [data, filters.q, filters.state, filters.type, filters.tag, filters.location, filters.group, sort]);

  const counts = useMemo(() => {
    const c: Partial<Record<CheckState, number>> = {};
    for (const r of data ?? []) c[r.state] = (c[r.state] ?? 0) + 1;
    return c;
  }, [data]);

  const select = (name: keyof typeof filters, label: string, values: string[], show = (v: string) => v) => (
    <Field label={label}>
      <select value={filters[name]} onChange={(e) => setQuery({ [name]: (e.target as HTMLSelectElement).value })}>
        <option value="">All</option>
        {values.map((v) => (
          <option value={v}>{show(v)}</option>
        ))}
      </select>
    </Field>
  );

  return (
    <>
      <div class="title-row">
        <h1>Checks</h1>
        {can(session, 'write') && (
          <Link class="btn btn-primary" href="/checks/new">
            New check
          </Link>
        )}
      </div>
      {data && (
        <p class="muted" aria-live="polite">
          {data.length} checks · <span class="state-failing">{counts.failing ?? 0} failing</span> ·{' '}
          <span class="state-degraded">{counts.degraded ?? 0} degraded</span> · <span class="state-passing">{counts.passing ?? 0} passing</span> ·{' '}
          {counts.nodata ?? 0} without data · {counts.paused ?? 0} paused · {counts.maintenance ?? 0} in maintenance
        </p>
      )}
      <search class="toolbar">
        <Field label="Search">
          <input type="search" placeholder="Name or tag" value={filters.q} onInput={(e) => setQuery({ q: (e.target as HTMLInputElement).value })} />
        </Field>
        {select(
          'state',
          'State',
          ['failing', 'degraded', 'passing', 'nodata', 'paused', 'maintenance'],
          (v) => ({ failing: 'Failing', degraded: 'Degraded', passing: 'Passing', nodata: 'No data', paused: 'Paused', maintenance: 'In maintenance' })[v] ?? v,
        )}
        {select('type', 'Type', options.types, typeLabel)}
        {select('tag', 'Tag', options.tags)}
        {select('location', 'Location', options.locations)}
        {options.groups.length > 0 && select('group', 'Group', options.groups)}
        <Field label="Sort">
          <select value={query.get('sort') ?? 'attention'} onChange={(e) => setQuery({ sort: (e.target as HTMLSelectElement).value })}>
            {Object.entries(SORTS).map(([k, s]) => (
              <option value={k}>{s.label}</option>
            ))}
          </select>
        </Field>
      </search>
      <ErrorNote error={error} />
      {!data && loading && <Loading what="Loading checks" />}
      {data && data.length === 0 && (
        <Empty>
          No checks yet.{' '}
          {can(session, 'write') ? (
            <>
              <Link href="/checks/new">Make the first one</Link>: an API call, a page in a browser, a heartbeat from a cron job…
            </>
          ) : (
            'A member who may change checks makes them.'
          )}{' '}
          Teams with checks in code deploy them with this service's copy of the CLI, <code>npm run checkly -- deploy</code> (README, “Monitoring as code”).
        </Empty>
      )}
      {data && data.length > 0 && rows.length === 0 && <Empty>No check matches these filters.</Empty>}
      {rows.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <caption class="skip">Checks, {sort.label.toLowerCase()}</caption>
            <thead>
              <tr>
                <th scope="col">Check</th>
                <th scope="col">State</th>
                <th scope="col">Last 24 hours</th>
                <th scope="col" class="num">
                  Success 24 h
                </th>
                <th scope="col" class="num hide-narrow">
                  Success 7 d
                </th>
                <th scope="col" class="num">
                  p95 24 h
                </th>
                <th scope="col" class="num hide-narrow">
                  p95 7 d
                </th>
                <th scope="col" class="hide-narrow">
                  Type
                </th>
                <th scope="col" class="hide-narrow">
                  Tags
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.check.id} data-check-id={r.check.id}>
                  <td>
                    <Link href={`/checks/${r.check.id}`}>{r.check.name}</Link>
                    {r.group && <div class="muted">{r.group.name}</div>}
                  </td>
                  <td>
                    <StateBadge state={r.state} />
                  </td>
                  <td>{r.strip.length ? <Strip buckets={r.strip} label={`${r.check.name}, last 24 hours`} /> : <span class="muted">—</span>}</td>
                  <td class="num">
                    {pct(r.day?.availability)}
                    <NoData value={r.day?.noData} />
                  </td>
                  <td class="num hide-narrow">
                    {pct(r.week?.availability)}
                    <NoData value={r.week?.noData} />
                  </td>
                  <td class="num">{ms(p95Of(r.day))}</td>
                  <td class="num hide-narrow">{ms(p95Of(r.week))}</td>
                  <td class="hide-narrow">{typeLabel(r.check.checkType)}</td>
                  <td class="hide-narrow">
                    <span class="tags">
                      {r.check.tags.map((t) => (
                        <span class="tag">{t}</span>
                      ))}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

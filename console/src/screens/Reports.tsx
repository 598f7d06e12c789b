import { get } from '../api';
import { typeLabel } from '../checks';
import { ms, pct } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { Button, Empty, ErrorNote, Field, Loading, useData } from '../ui';

/** The anchor's reporting view, from `GET /v1/reporting`: each check's success ratio, average, p95 and p99 over a period, whole or per day, week or month in a time zone. */
interface Aggregate {
  successRatio: number;
  avg: number;
  p95: number;
  p99: number;
  from?: string;
  to?: string;
}
interface ReportRow {
  name: string;
  checkId: string;
  checkType: string;
  deactivated: boolean;
  tags: string[];
  aggregate?: Aggregate;
  aggregates?: Aggregate[];
}

const RANGES = {
  last24Hrs: 'Last 24 hours',
  last7Days: 'Last 7 days',
  last30Days: 'Last 30 days',
  thisWeek: 'This week',
  thisMonth: 'This month',
  lastWeek: 'Last week',
  lastMonth: 'Last month',
};
const ZONES = [
  Intl.DateTimeFormat().resolvedOptions().timeZone,
  'UTC',
  'Europe/London',
  'Europe/Berlin',
  'America/New_York',
  'America/Los_Angeles',
  'Asia/Kolkata',
  'Asia/Tokyo',
  'Australia/Sydney',
].filter((z, i, all) => z && all.indexOf(z) === i);

function csvOf(rows: ReportRow[], granularity: string): string {
  const quote = (v: unknown) => (/[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v));
  const head = ['check', 'checkId', 'type', 'tags', ...(granularity ? ['from', 'to'] : []), 'successRatio', 'avgMs', 'p95Ms', 'p99Ms'];
  const lines = [head.join(',')];
  for (const r of rows) {
    const aggs = granularity ? (r.aggregates ?? []) : r.aggregate ? [r.aggregate] : [];
    for (const a of aggs)
      lines.push(
        [r.name, r.checkId, r.checkType, r.tags.join(' '), ...(granularity ? [a.from, a.to] : []), a.successRatio, a.avg, a.p95, a.p99].map(quote).join(','),
      );
  }
  return `${lines.join('\n')}\n`;
}

export function Reports() {
  const { query } = useLocation();
  const range = query.get('range') ?? 'last7Days';
  const granularity = query.get('granularity') ?? '';
  const timezone = query.get('timezone') ?? ZONES[0]!;
  const tag = query.get('tag') ?? '';
  // A time zone cuts days, weeks and months: it goes with a granularity only.
  const params = new URLSearchParams({ quickRange: range, ...(granularity ? { granularity, timezone } : {}), ...(tag ? { filterByTags: tag } : {}) });
  const report = useData((signal) => get<ReportRow[]>(`/v1/reporting?${params}`, signal), [params.toString()]);

  function download() {
    const blob = new Blob([csvOf(report.data ?? [], granularity)], { type: 'text/csv' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `report-${range}${granularity ? `-${granularity}` : ''}.csv`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  const rows = report.data ?? [];
  return (
    <>
      <h1>Reports</h1>
      <div class="toolbar">
        <Field label="Period">
          <select value={range} onChange={(e) => setQuery({ range: (e.target as HTMLSelectElement).value })}>
            {Object.entries(RANGES).map(([k, v]) => (
              <option value={k}>{v}</option>
            ))}
          </select>
        </Field>
        <Field label="Per">
          <select value={granularity} onChange={(e) => setQuery({ granularity: (e.target as HTMLSelectElement).value })}>
            <option value="">Whole period</option>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </Field>
        <Field label="Time zone" hint={granularity ? undefined : 'Cuts days, weeks and months'}>
          <select disabled={!granularity} value={timezone} onChange={(e) => setQuery({ timezone: (e.target as HTMLSelectElement).value })}>
            {ZONES.map((z) => (
              <option value={z}>{z}</option>
            ))}
          </select>
        </Field>
        <Field label="Tag">
          <input value={tag} onChange={(e) => setQuery({ tag: (e.target as HTMLInputElement).value })} />
        </Field>
        <Button onClick={download} disabled={!rows.length}>
          Download CSV
        </Button>
      </div>
      <ErrorNote error={report.error} />
      {report.loading && !report.data && <Loading what="Computing the report" />}
      {report.data && rows.length === 0 && <Empty>No check matches.</Empty>}
      {rows.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <caption class="skip">Report, {RANGES[range as keyof typeof RANGES] ?? range}</caption>
            <thead>
              <tr>
                <th scope="col">Check</th>
                {granularity && <th scope="col">Period</th>}
                <th scope="col" class="num">
                  Success
                </th>
                <th scope="col" class="num">
                  Average
                </th>
                <th scope="col" class="num">
                  p95
                </th>
                <th scope="col" class="num">
                  p99
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.flatMap((r) => {
                const aggs = granularity ? (r.aggregates ?? []) : [r.aggregate];
                return aggs.map((a, i) => (
                  <tr>
                    <td>
                      {i === 0 ? (
                        <>
                          <Link href={`/checks/${r.checkId}`}>{r.name}</Link> <span class="muted">{typeLabel(r.checkType)}</span>
                        </>
                      ) : (
                        ''
                      )}
                    </td>
                    {granularity && <td>{a?.from ? new Date(a.from).toLocaleDateString(undefined, { timeZone: timezone }) : ''}</td>}
                    <td class="num">{a ? pct(a.successRatio) : <span class="muted">no runs</span>}</td>
                    <td class="num">{ms(a?.avg)}</td>
                    <td class="num">{ms(a?.p95)}</td>
                    <td class="num">{ms(a?.p99)}</td>
                  </tr>
                ));
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

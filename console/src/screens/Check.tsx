import { useMemo, useState } from 'preact/hooks';
import { allPages, del, get, post, put, request } from '../api';
import { LineChart } from '../chart';
import { channelName } from '../check-form/common';
import { bucketsOf, CHECK_SEGMENTS, type CheckResult, RANGES, REPORT_SEGMENTS, resultState, type TimelineItem, typeLabel, windowOf } from '../checks';
import { ago, ms, pct, shortTime, time } from '../format';
import { valueLabel } from '../forms/words';
import { Link, navigate, setQuery, useLocation } from '../router';
import { can, useSession } from '../session';
import { type Bucket, Button, CopyBox, confirmAction, Empty, ErrorNote, Field, Loading, StateBadge, useData } from '../ui';
import { Explain, type Rca } from './Explain';
import { type Check as CheckRow, type CheckStatus, stateOf } from './Home';
import { RunNow } from './RunNow';

interface FullCheck extends CheckRow {
  locations: string[];
  frequency: number;
  request?: { url?: string; hostname?: string; method?: string };
  [key: string]: unknown;
}
interface Timeline {
  checkId: string;
  inMaintenance: boolean;
  buckets: Bucket[];
}

interface Report {
  series: { runLocation?: string; data: Record<string, number | string | null>[] }[];
}
interface ErrorGroup {
  id: string;
  errorHash?: string;
  rawErrorMessage?: string;
  cleanedErrorMessage?: string;
  firstSeen: string;
  lastSeen: string;
  occurrences: number;
  locations: string[];
  archivedUntilNextEvent?: boolean;
  rootCauseAnalyses?: Rca[];
}
interface Notification {
  id: string;
  type: string;
  status: string;
  timestamp: string | null;
  attempts: { at: string; ok: boolean; error?: string }[];
  alertChannelId: number;
  notificationResult: string | null;
  created_at: string;
}

const BUCKETS = 60;

/** One check's story over a window: its runs by bucket, response times by location, errors, alerts, and actions. */
export function Check({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const session = useSession();
  const { query } = useLocation();
  const [actionError, setActionError] = useState<unknown>(null);

  const check = useData((signal) => get<FullCheck>(`/v1/checks/${id}`, signal), [id]);
  const win = windowOf(query, Date.now(), check.data?.created_at as string | undefined);
  const status = useData((signal) => get<CheckStatus>(`/v1/check-statuses/${id}`, signal).catch(() => undefined), [id], 15_000);
  const timeline = useData(
    async () => {
      const [item] = await post<TimelineItem[]>(
        `/v1/analytics/checks/timeline?buckets=${BUCKETS}&from=${new Date(win.from).toISOString()}&to=${new Date(win.to).toISOString()}`,
        { checkIds: [id] },
      );
      return item ? { checkId: item.checkId, inMaintenance: item.inMaintenance, buckets: bucketsOf(item) } : undefined;
    },
    [id, win.from, win.to],
    win.key === 'custom' ? undefined : 30_000,
  );

  if (check.error)
    return (
      <>
        <h1>Check</h1>
        <ErrorNote error={check.error} />
        <Link href="/">Back to the checks</Link>
      </>
    );
  if (!check.data) return <Loading what="Loading the check" />;
  const c = check.data;
  const state = stateOf(c, status.data, timeline.data?.inMaintenance ?? false);
  const segment = CHECK_SEGMENTS[c.checkType];

  async function act(body: Record<string, unknown>) {
    setActionError(null);
    try {
      await put(`/v1/checks/${segment}/${id}`, body);
      check.reload();
    } catch (err) {
      setActionError(err);
    }
  }
  async function clone() {
    setActionError(null);
    try {
      const body = Object.fromEntries(
        Object.entries(c).filter(([k]) => !['id', 'created_at', 'updated_at', 'alertChannels', 'alertChannelSubscriptions'].includes(k)),
      );
      const copy = await post<{ id: string }>(`/v1/checks/${segment}`, { ...body, name: `${c.name} (copy)`, activated: false });
      navigate(`/checks/${copy.id}`);
    } catch (err) {
      setActionError(err);
    }
  }
  async function remove() {
    if (!confirmAction(`Delete ${c.name}? Its history stays in the analytics store but the check stops running.`)) return;
    try {
      await del(`/v1/checks/${id}`);
      navigate('/');
    } catch (err) {
      setActionError(err);
    }
  }

  return (
    <>
      <p>
        <Link href="/">← Checks</Link>
      </p>
      <div class="card">
        <h1>{c.name}</h1>
        <p>
          <StateBadge state={state} /> · {typeLabel(c.checkType)} · every {c.frequency} min ·{' '}
          {[...(c.locations ?? []), ...(c.privateLocations ?? [])].join(', ') || 'no location'}
          {c.muted && ' · muted'}
          {status.data?.updated_at && <> · last run {ago(status.data.updated_at)}</>}
        </p>
        {status.data?.runState === 'NO_DATA' && status.data.noDataSince && (
          <p class="gap-note" role="status">
            Not running: no results since {time(status.data.noDataSince)} ({ago(status.data.noDataSince)}). What it last showed is not its state now.
          </p>
        )}
        {status.data?.runState === 'RUNNING' && status.data.noDataLocations?.length ? (
          <p class="gap-note" role="status">
            Not running in {status.data.noDataLocations.join(', ')}
            {status.data.noDataSince ? ` since ${time(status.data.noDataSince)}` : ''}.
          </p>
        ) : null}
        {c.request?.url && (
          <p class="muted">
            <code>
              {c.request.method ?? 'GET'} {c.request.url}
            </code>
          </p>
        )}
        {c.tags.length > 0 && (
          <p class="tags">
            {c.tags.map((t) => (
              <span class="tag">{t}</span>
            ))}
          </p>
        )}
        <div class="actions">
          {can(session, 'run') && c.checkType !== 'HEARTBEAT' && (
            <RunNow
              checkId={id}
              onDone={() => {
                timeline.reload();
                status.reload();
              }}
            />
          )}
          {can(session, 'write') && (
            <>
              <Button onClick={() => void act({ activated: !c.activated })}>{c.activated ? 'Pause' : 'Resume'}</Button>
              <Button onClick={() => void act({ muted: !c.muted })}>{c.muted ? 'Unmute' : 'Mute'}</Button>
              <Link class="btn" href={`/checks/${id}/edit`}>
                Edit
              </Link>
              <Button onClick={() => void clone()}>Clone</Button>
              <Button kind="danger" onClick={() => void remove()}>
                Delete
              </Button>
            </>
          )}
        </div>
        <ErrorNote error={actionError} />
      </div>
      {c.checkType === 'HEARTBEAT' && <PingUrl check={c} />}

      <WindowPicker current={win.key} from={win.from} to={win.to} />
      <Results checkId={id} timeline={timeline.data} error={timeline.error} />
      <Figures check={c} from={win.from} to={win.to} />
      <ErrorGroups checkId={id} />
      <Notifications checkId={id} from={win.from} to={win.to} />
    </>
  );
}

/** A heartbeat's ping URL, to copy, with the lines that call it from a shell or a crontab. */
function PingUrl({ check }: { check: FullCheck }) {
  const { query } = useLocation();
  const hb = (check.heartbeat ?? {}) as { pingUrl?: string; period?: number; periodUnit?: string };
  if (!hb.pingUrl) return null;
  const url = hb.pingUrl.startsWith('/') ? `${location.origin}${hb.pingUrl}` : hb.pingUrl;
  return (
    <section class="card" aria-labelledby="ping-title">
      <h2 id="ping-title">Ping URL</h2>
      {query.get('created') && (
        <p role="status" class="state-passing">
          The monitor is saved. Call this URL each time your job runs:
        </p>
      )}
      <CopyBox value={url} label="The ping URL" />
      <h3>From a shell</h3>
      <CopyBox value={`curl -fsS -m 10 --retry 3 ${url}`} label="curl command" />
      <h3>From a crontab</h3>
      <CopyBox value={`0 * * * * /path/to/your-job && curl -fsS -m 10 --retry 3 ${url}`} label="crontab line" />
      <p class="muted">
        Expected every {hb.period} {hb.periodUnit}; a GET or POST counts.
      </p>
    </section>
  );
}

function WindowPicker({ current, from, to }: { current: string; from: number; to: number }) {
  const local = (t: number) => new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const [custom, setCustom] = useState({ from: local(from), to: local(to) });
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of buttons; a fieldset would draw a frame and need a legend
    <div class="toolbar" role="group" aria-label="Window">
      {Object.entries(RANGES).map(([key, r]) => (
        <Button
          kind={current === key ? 'primary' : 'secondary'}
          aria-pressed={current === key}
          onClick={() => setQuery({ range: key, from: null, to: null, bucket: null })}
        >
          {r.label}
        </Button>
      ))}
      <Field label="From">
        <input type="datetime-local" value={custom.from} onInput={(e) => setCustom({ ...custom, from: (e.target as HTMLInputElement).value })} />
      </Field>
      <Field label="To">
        <input type="datetime-local" value={custom.to} onInput={(e) => setCustom({ ...custom, to: (e.target as HTMLInputElement).value })} />
      </Field>
      <Button
        kind={current === 'custom' ? 'primary' : 'secondary'}
        onClick={() => setQuery({ from: new Date(custom.from).toISOString(), to: new Date(custom.to).toISOString(), range: null, bucket: null })}
      >
        Show
      </Button>
    </div>
  );
}

/** Runs by bucket (passed, degraded, failed; empty buckets are gaps); choosing a bucket lists its runs. */
function Results({ checkId, timeline, error }: { checkId: string; timeline?: Timeline; error?: unknown }) {
  const { query } = useLocation();
  const chosen = query.get('bucket');
  if (error) return <ErrorNote error={error} />;
  if (!timeline) return <Loading what="Loading runs" />;
  const max = Math.max(1, ...timeline.buckets.map((b) => Math.max(b.runs, b.expected ?? 0)));
  const size = timeline.buckets.length > 1 ? Date.parse(timeline.buckets[1]!.from) - Date.parse(timeline.buckets[0]!.from) : 60_000;
  const total = timeline.buckets.reduce((n, b) => n + b.runs, 0);
  const failed = timeline.buckets.reduce((n, b) => n + b.failed, 0);
  const expected = timeline.buckets.reduce((n, b) => n + (b.expected ?? 0), 0);
  const missing = timeline.buckets.reduce((n, b) => n + Math.max(0, (b.expected ?? 0) - b.runs), 0);
  return (
    <section class="card" aria-labelledby="results-title">
      <h2 id="results-title">Results</h2>
      <p class="muted">
        {total} runs, {failed} failed{total ? ` (${pct((100 * (total - failed)) / total)} passed)` : ''}
        {missing ? `; ${missing} of ${expected} expected runs did not happen (${pct((100 * missing) / expected)} no data)` : ''}. Choose a bar to list its runs.
        Shaded: maintenance. Grey: expected runs that did not happen (no data).
      </p>
      <div class="bars">
        {timeline.buckets.map((b) => {
          const gap = b.expected !== null && b.runs < b.expected ? `, ${b.expected - b.runs} of ${b.expected} expected runs missing` : '';
          const label = `${time(b.from)}: ${b.runs} runs, ${b.failed} failed, ${b.degraded} degraded${gap}${b.inMaintenance ? ', in maintenance' : ''}`;
          return (
            <button
              type="button"
              data-runs={b.runs}
              data-failed={b.failed}
              class={`bar ${b.inMaintenance ? 'maint' : ''} ${chosen === b.from ? 'chosen' : ''}`}
              aria-label={label}
              title={label}
              aria-pressed={chosen === b.from}
              onClick={() => setQuery({ bucket: chosen === b.from ? null : b.from })}
            >
              <span class="fail" style={{ height: `${(100 * b.failed) / max}%` }} />
              <span class="degraded" style={{ height: `${(100 * b.degraded) / max}%` }} />
              <span class="pass" style={{ height: `${(100 * (b.runs - b.failed - b.degraded)) / max}%` }} />
              <span class="nodata" style={{ height: `${(100 * Math.max(0, (b.expected ?? 0) - b.runs)) / max}%` }} />
            </button>
          );
        })}
      </div>
      <div class="bars-axis muted">
        <span>{time(timeline.buckets[0]?.from)}</span>
        <span>{time(Date.parse(timeline.buckets.at(-1)?.from ?? '') + size)}</span>
      </div>
      {chosen && <BucketRuns checkId={checkId} from={Date.parse(chosen)} to={Date.parse(chosen) + size} />}
      {!chosen && <LatestRuns checkId={checkId} />}
    </section>
  );
}

function RunsTable({ runs, caption }: { runs: CheckResult[]; caption: string }) {
  if (!runs.length) return <Empty>No runs.</Empty>;
  return (
    <div class="table-wrap" tabIndex={0}>
      <table>
        <caption class="skip">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Result</th>
            <th scope="col">Location</th>
            <th scope="col" class="num">
              Response time
            </th>
            <th scope="col" class="num hide-narrow">
              Attempts
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr>
              <td>
                <Link href={`/checks/${r.checkId}/results/${r.id}`}>{time(r.startedAt)}</Link>
              </td>
              <td>
                <StateBadge state={resultState(r)} />
              </td>
              <td>{r.runLocation}</td>
              <td class="num">{ms(r.responseTime)}</td>
              <td class="num hide-narrow">{r.attempts ?? 1}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BucketRuns({ checkId, from, to }: { checkId: string; from: number; to: number }) {
  const runs = useData(
    (signal) => get<CheckResult[]>(`/v1/check-results/${checkId}?limit=100&from=${from / 1000}&to=${to / 1000}`, signal),
    [checkId, from, to],
  );
  return (
    <>
      <h3>
        Runs from {shortTime(from)} to {shortTime(to)}
      </h3>
      <ErrorNote error={runs.error} />
      {runs.data ? <RunsTable runs={runs.data} caption="Runs of the chosen period" /> : <Loading />}
    </>
  );
}

function LatestRuns({ checkId }: { checkId: string }) {
  const runs = useData((signal) => get<CheckResult[]>(`/v1/check-results/${checkId}?limit=10`, signal), [checkId], 30_000);
  return (
    <>
      <h3>Latest runs</h3>
      <ErrorNote error={runs.error} />
      {runs.data ? <RunsTable runs={runs.data} caption="Latest runs" /> : <Loading />}
    </>
  );
}

/** Response times by location (p50/p95/p99) over the window and per bucket, and an API check's timing phases. */
function Figures({ check, from, to }: { check: FullCheck; from: number; to: number }) {
  const segment = REPORT_SEGMENTS[check.checkType];
  const metrics = useData((signal) => get<{ name: string }[]>(`/v1/analytics/metrics?checkType=${check.checkType}`, signal), [check.checkType]);
  const names = new Set((metrics.data ?? []).map((m) => m.name));
  const headline = ['responseTime', 'latencyAvg', 'latency'].find((m) => names.has(`${m}_p95`));
  const span = `from=${Math.floor(from / 1000)}&to=${Math.floor(to / 1000)}`;
  const interval = Math.max(1, Math.round((to - from) / 60_000 / 60));
  const whole = useData(
    (signal) =>
      headline
        ? get<Report>(
            `/v1/analytics/${segment}/${check.id}?${span}&groupBy=runLocation&metrics=availability,${headline}_p50,${headline}_p95,${headline}_p99&limit=100`,
            signal,
          )
        : Promise.resolve(undefined),
    [check.id, headline, from, to],
  );
  const series = useData(
    (signal) =>
      headline
        ? get<Report>(
            `/v1/analytics/${segment}/${check.id}?${span}&groupBy=runLocation&aggregationInterval=${interval}&metrics=${headline}_p95&limit=100`,
            signal,
          )
        : Promise.resolve(undefined),
    [check.id, headline, from, to],
  );
  const phases = useData(
    (signal) =>
      check.checkType === 'API'
        ? get<Report>(`/v1/analytics/api-checks/${check.id}?${span}&metrics=wait_avg,dns_avg,tcp_avg,firstByte_avg,download_avg`, signal)
        : Promise.resolve(undefined),
    [check.id, from, to],
  );
  const chart = useMemo(() => {
    if (!series.data || !headline) return undefined;
    const xs = [...new Set(series.data.series.flatMap((s) => s.data.map((d) => Date.parse(String(d.bucketStart)) / 1000)))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    return {
      x: xs,
      series: series.data.series.map((s) => {
        const values: (number | null)[] = xs.map(() => null);
        for (const d of s.data) values[at.get(Date.parse(String(d.bucketStart)) / 1000)!] = d[`${headline}_p95`] as number | null;
        return { label: s.runLocation ?? 'all', values };
      }),
    };
  }, [series.data, headline]);

  if (!headline) return null;
  const rows = whole.data?.series ?? [];
  const phase = phases.data?.series[0]?.data[0];
  return (
    <section class="card" aria-labelledby="times-title">
      <h2 id="times-title">Response times by location</h2>
      <ErrorNote error={whole.error ?? series.error} />
      {chart && chart.x.length > 0 && (
        <LineChart
          label={`p95 response time by location, ${chart.series.length} locations`}
          x={chart.x}
          series={chart.series}
          unit="ms"
          range={[from / 1000, to / 1000]}
        />
      )}
      {chart && chart.x.length === 0 && <Empty>No runs in this window.</Empty>}
      {rows.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <caption class="skip">Response times by location over the window</caption>
            <thead>
              <tr>
                <th scope="col">Location</th>
                <th scope="col" class="num">
                  Success
                </th>
                <th scope="col" class="num">
                  p50
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
              {rows.map((s) => {
                const d = s.data[0] ?? {};
                return (
                  <tr>
                    <td>{s.runLocation}</td>
                    <td class="num">{pct(d.availability as number | null)}</td>
                    <td class="num">{ms(d[`${headline}_p50`] as number | null)}</td>
                    <td class="num">{ms(d[`${headline}_p95`] as number | null)}</td>
                    <td class="num">{ms(d[`${headline}_p99`] as number | null)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {phase && (
        <>
          <h3>Timing phases (average)</h3>
          <dl class="phases">
            {(['wait', 'dns', 'tcp', 'firstByte', 'download'] as const).map((p) => (
              <>
                <dt>{{ wait: 'Wait', dns: 'DNS', tcp: 'TCP connect', firstByte: 'First byte', download: 'Download' }[p]}</dt>
                <dd>{ms(phase[`${p}_avg`] as number | null)}</dd>
              </>
            ))}
          </dl>
        </>
      )}
    </section>
  );
}

function ErrorGroups({ checkId }: { checkId: string }) {
  const groups = useData((signal) => get<ErrorGroup[]>(`/v1/error-groups/checks/${checkId}`, signal), [checkId]);
  return (
    <section class="card" aria-labelledby="errors-title">
      <h2 id="errors-title">Errors</h2>
      <ErrorNote error={groups.error} />
      {groups.data && groups.data.length === 0 && <Empty>No errors recorded.</Empty>}
      {groups.data && groups.data.length > 0 && (
        <ul class="plain">
          {groups.data.map((g) => (
            <li>
              <code>{g.cleanedErrorMessage ?? g.rawErrorMessage}</code>{' '}
              <span class="muted">
                · {g.occurrences} {g.occurrences === 1 ? 'time' : 'times'} in {g.locations.length} {g.locations.length === 1 ? 'location' : 'locations'} · last{' '}
                {ago(g.lastSeen)}
              </span>
              <Explain errorGroupId={g.id} latest={g.rootCauseAnalyses?.[0]} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Notifications({ checkId, from, to }: { checkId: string; from: number; to: number }) {
  const list = useData(
    async (signal) =>
      (await request<Notification[]>('GET', `/v1/alert-notifications?checkId=${checkId}&limit=20&from=${from / 1000}&to=${to / 1000}`, undefined, { signal }))
        .data,
    [checkId, from, to],
  );
  const channels = useData((signal) => allPages<{ id: number; type: string; config?: Record<string, unknown> }>('/v1/alert-channels', signal), []);
  const byId = new Map((channels.data ?? []).map((c) => [c.id, c]));
  return (
    <section class="card" aria-labelledby="alerts-title">
      <h2 id="alerts-title">Alerts sent</h2>
      <ErrorNote error={list.error} />
      {list.data && list.data.length === 0 && <Empty>No alert was sent for this check in this window.</Empty>}
      {list.data && list.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Channel</th>
                <th scope="col">Delivery</th>
                <th scope="col" class="hide-narrow">
                  Attempts
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((n) => (
                <tr>
                  <td>{time(n.timestamp ?? n.created_at)}</td>
                  <td>
                    {byId.get(n.alertChannelId) ? channelName(byId.get(n.alertChannelId)!) : 'A deleted channel'}{' '}
                    <span class="muted">{valueLabel(n.type)}</span>
                  </td>
                  <td>{valueLabel(n.status)}</td>
                  <td class="hide-narrow">{n.attempts.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

import { get } from '../api';
import { resultState, typeLabel } from '../checks';
import { ms, time } from '../format';
import { Link } from '../router';
import { Empty, ErrorNote, Loading, StateBadge, useData } from '../ui';
import { ApiResult, Assets, BrowserResult, Details } from './Run';
import { type CheckSession as CheckSessionData, SessionProgress } from './RunNow';

/** Where the anchor CLI's links land: a test session (`checkly test`, `trigger`), one of its results, a check session. */
interface TestSessionResult {
  testSessionResultId: string;
  checkId: string | null;
  checkType: string;
  name: string;
  runLocation: string;
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  status: string;
  responseTime: number | null;
  startedAt: string | null;
}
interface TestSessionData {
  testSessionId: string;
  name: string;
  status: string;
  startedAt: string;
  timeElapsed: number;
  metadata?: { branchName?: string | null; commitId?: string | null; commitOwner?: string | null; environment?: string };
  results?: TestSessionResult[];
}

export function TestSession({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const s = useData((signal) => get<TestSessionData>(`/v1/test-sessions/${id}`, signal), [id], 5_000);
  if (s.error)
    return (
      <>
        <h1>Test session</h1>
        <ErrorNote error={s.error} />
      </>
    );
  if (!s.data) return <Loading what="Loading the test session" />;
  const d = s.data;
  return (
    <>
      <h1>{d.name}</h1>
      <p>
        {d.status.toLowerCase()} · started {time(d.startedAt)} · {(d.timeElapsed / 1000).toFixed(1)} s
        {d.metadata?.branchName ? ` · ${d.metadata.branchName}` : ''}
        {d.metadata?.commitOwner ? ` · ${d.metadata.commitOwner}` : ''}
      </p>
      {!d.results?.length ? (
        <Empty>No results yet.</Empty>
      ) : (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Check</th>
                <th scope="col">Result</th>
                <th scope="col">Location</th>
                <th scope="col" class="num">
                  Time
                </th>
              </tr>
            </thead>
            <tbody>
              {d.results.map((r) => (
                <tr>
                  <td>
                    <Link href={`/test-sessions/${d.testSessionId}/results/${r.testSessionResultId}`}>{r.name}</Link>
                  </td>
                  <td>
                    <StateBadge state={resultState(r)} />
                  </td>
                  <td>{r.runLocation}</td>
                  <td class="num">{ms(r.responseTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function TestSessionResultScreen({ params }: { params: Record<string, string> }) {
  const { id, resultId } = params as { id: string; resultId: string };
  const r = useData((signal) => get<TestSessionResult & Record<string, unknown>>(`/v1/test-sessions/${id}/results/${resultId}`, signal), [id, resultId]);
  if (r.error)
    return (
      <>
        <h1>Test result</h1>
        <ErrorNote error={r.error} />
      </>
    );
  if (!r.data) return <Loading what="Loading the result" />;
  const d = r.data;
  const api = d.apiCheckResult as Record<string, unknown> | undefined;
  const browser = (d.browserCheckResult ?? d.multiStepCheckResult ?? d.playwrightCheckResult) as Record<string, unknown> | undefined;
  const other = Object.entries(d).find(
    ([k, v]) =>
      k.endsWith('CheckResult') &&
      v &&
      typeof v === 'object' &&
      !['apiCheckResult', 'browserCheckResult', 'multiStepCheckResult', 'playwrightCheckResult'].includes(k),
  )?.[1] as Record<string, unknown> | undefined;
  const logs = (d.logs ?? []) as { msg: string; level: string }[];
  const stopped = d.stoppedAt as string | null | undefined;
  return (
    <>
      <p>
        <Link href={`/test-sessions/${id}`}>← The test session</Link>
      </p>
      <div class="card">
        <h1>{d.name}</h1>
        <p>
          <StateBadge state={resultState(d)} /> · {typeLabel(d.checkType)} · {d.runLocation} · {ms(d.responseTime)} · {time(d.startedAt)}
          {d.startedAt && stopped ? ` · ran ${ms(Date.parse(stopped) - Date.parse(d.startedAt))}` : ''}
          {typeof d.attempts === 'number' && d.attempts > 1 ? ` · ${d.attempts} attempts` : ''}
        </p>
        {typeof d.errorMessage === 'string' && d.errorMessage && <p class="error">{d.errorMessage}</p>}
        {d.checkId && (
          <p>
            <Link href={`/checks/${d.checkId}`}>The check</Link>
          </p>
        )}
      </div>
      {api && <ApiResult result={api} />}
      {browser && <BrowserResult result={browser} playwright={Boolean(d.playwrightCheckResult)} />}
      {other && <Details detail={other} />}
      {logs.length > 0 && (
        <section class="card" aria-labelledby="logs-title">
          <h2 id="logs-title">Console</h2>
          <pre tabIndex={0}>{logs.map((l) => `${l.level} ${l.msg}`).join('\n')}</pre>
        </section>
      )}
      {!api && !browser && !other && <p class="muted">This result was reported by a client: the run's details stayed with it.</p>}
      <Assets listUrl={`/v1/test-sessions/${id}/results/${resultId}/assets`} />
    </>
  );
}

export function CheckSessionScreen({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const s = useData((signal) => get<CheckSessionData>(`/v2/check-sessions/${id}`, signal), [id], 2_000);
  if (s.error)
    return (
      <>
        <h1>Check session</h1>
        <ErrorNote error={s.error} />
      </>
    );
  if (!s.data) return <Loading what="Loading the check session" />;
  return (
    <>
      <p>
        <Link href={`/checks/${s.data.checkId}`}>← {s.data.name ?? 'The check'}</Link>
      </p>
      <h1>Run of {s.data.name ?? 'a check'}</h1>
      <SessionProgress session={s.data} />
    </>
  );
}

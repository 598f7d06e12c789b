import { get } from '../api';
import { resultState } from '../checks';
import { ms, time } from '../format';
import { Link } from '../router';
import { Empty, ErrorNote, Loading, StateBadge, useData } from '../ui';
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
  const detail = Object.entries(d).find(([k, v]) => k.endsWith('CheckResult') && v && typeof v === 'object')?.[1];
  return (
    <>
      <p>
        <Link href={`/test-sessions/${id}`}>← The test session</Link>
      </p>
      <div class="card">
        <h1>{d.name}</h1>
        <p>
          <StateBadge state={resultState(d)} /> · {d.runLocation} · {ms(d.responseTime)} · {time(d.startedAt)}
        </p>
      </div>
      {detail ? (
        <section class="card">
          <h2>Details</h2>
          <pre tabIndex={0}>{JSON.stringify(detail, null, 2)}</pre>
        </section>
      ) : null}
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

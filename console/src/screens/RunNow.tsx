import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from '../api';
import { resultState } from '../checks';
import { ms } from '../format';
import { Link } from '../router';
import { Button, ErrorNote, StateBadge } from '../ui';

interface SessionResult {
  checkResultId: string;
  checkId: string;
  runLocation: string;
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  isCancelled: boolean;
  responseTime?: number | null;
}
export interface CheckSession {
  checkSessionId: string;
  checkId: string;
  name?: string;
  status: string;
  startedAt: string;
  timeElapsed: number;
  runLocations: string[];
  results: SessionResult[];
}

const RUNNING = new Set(['STARTED', 'PROGRESS', 'PROGRESS_FAILED', 'PROGRESS_DEGRADED']);

/** A check session's progress: each location as it reports, then the outcome. */
export function SessionProgress({ session }: { session: CheckSession }) {
  const results = session.results ?? [];
  const pending = (session.runLocations ?? []).filter((l) => !results.some((r) => r.runLocation === l));
  return (
    <div aria-live="polite">
      <p>
        <strong>{session.status.replace('_', ' ').toLowerCase()}</strong> · {((session.timeElapsed ?? 0) / 1000).toFixed(1)} s
      </p>
      <ul class="plain">
        {results.map((r) => (
          <li>
            {r.runLocation}: <StateBadge state={resultState(r)} /> {ms(r.responseTime)} ·{' '}
            <Link href={`/checks/${r.checkId}/results/${r.checkResultId}`}>the run</Link>
          </li>
        ))}
        {pending.map((l) => (
          <li class="muted">{l}: running…</li>
        ))}
      </ul>
    </div>
  );
}

/** Runs the check now in its locations (a check session) and follows it until it ends. */
export function RunNow({ checkId, onDone }: { checkId: string; onDone: () => void }) {
  const [session, setSession] = useState<CheckSession | null>(null);
  const [error, setError] = useState<unknown>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  async function follow(id: string) {
    try {
      const s = await get<CheckSession>(`/v2/check-sessions/${id}`);
      setSession(s);
      if (RUNNING.has(s.status)) timer.current = setTimeout(() => void follow(id), 1000);
      else onDone();
    } catch (err) {
      setError(err);
    }
  }

  async function start() {
    setError(null);
    setSession(null);
    try {
      const { sessions } = await post<{ sessions: CheckSession[] }>('/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
      const first = sessions[0];
      if (!first) throw new ApiError(404, 'The check did not start');
      setSession(first);
      timer.current = setTimeout(() => void follow(first.checkSessionId), 700);
    } catch (err) {
      setError(err);
    }
  }

  const running = session !== null && RUNNING.has(session.status);
  return (
    <>
      <Button kind="primary" disabled={running} onClick={() => void start()}>
        {running ? 'Running…' : 'Run now'}
      </Button>
      {(session || error) && (
        <section class="card run-now" aria-label="Run now">
          <ErrorNote error={error} />
          {session && <SessionProgress session={session} />}
        </section>
      )}
    </>
  );
}

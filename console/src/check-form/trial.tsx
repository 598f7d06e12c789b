import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from '../api';
import { resultState } from '../checks';
import { ms } from '../format';
import { useFormState } from '../forms/form';
import { ApiResult, type Asset, BrowserResult, Details, Files } from '../screens/Run';
import { Button, ErrorNote, StateBadge } from '../ui';
import { type Choices, servedFirst } from './common';

/** How long a trial waits for a runner to take it before saying none did. */
const WAIT_FOR_RUNNER_MS = 90_000;

/** A run of a draft as GET /v1/check-runs/{id} answers it. */
export interface TrialRun {
  id: string;
  status: 'QUEUED' | 'RUNNING' | 'DONE' | 'CANCELLED';
  location: string;
  result: {
    hasFailures: boolean;
    hasErrors: boolean;
    isDegraded: boolean;
    responseTime: number | null;
    startedAt: string;
    stoppedAt: string;
    error?: string | null;
    detail?: Record<string, Record<string, unknown> | null>;
  } | null;
  assets: Asset[];
}

/**
 * "Run": the form as it stands, run once on a chosen location (POST /v1/check-runs/{type}), its result shown here
 * as a saved check's run is (the request and response with each assertion's actual value, or a script's steps,
 * console, errors and screenshots). Nothing is stored as the account's: no check, no result in its history.
 */
export function Trial({ segment, checkId, choices, notReady }: { segment: string; checkId?: string; choices: Choices; notReady: string | null }) {
  const form = useFormState();
  const served = servedFirst(choices.locations);
  const [location, setLocation] = useState<string>('');
  const [run, setRun] = useState<TrialRun | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const live = useRef(true);
  useEffect(
    () => () => {
      live.current = false;
    },
    [],
  );
  const picked =
    location ||
    ((form.value('privateLocations') as string[] | undefined)?.[0] ?? (form.value('locations') as string[] | undefined)?.[0] ?? served[0]?.region ?? '');

  async function start() {
    setBusy(true);
    setError(null);
    setRun(null);
    try {
      const draft = { ...form.draft, name: String(form.draft.name ?? '').trim() || 'Trial run' };
      const query = new URLSearchParams({ location: picked, ...(checkId ? { checkId } : {}) });
      const started = await post<TrialRun>(`/v1/check-runs/${segment}?${query}`, draft);
      setRun(started);
      let current = started;
      const giveUpAt = Date.now() + WAIT_FOR_RUNNER_MS;
      while (live.current && (current.status === 'QUEUED' || current.status === 'RUNNING')) {
        if (current.status === 'QUEUED' && Date.now() > giveUpAt) {
          throw new Error(
            `No runner took the run in ${WAIT_FOR_RUNNER_MS / 1000} s: is a runner serving ${current.location}? (Private locations: is its agent online?)`,
          );
        }
        current = await get<TrialRun>(`/v1/check-runs/${started.id}?waitSeconds=10`);
        if (live.current) setRun(current);
      }
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length) form.fail(err);
      setError(err);
    } finally {
      if (live.current) setBusy(false);
    }
  }

  const r = run?.result;
  const detail = r?.detail ?? {};
  const api = detail.apiCheckResult;
  const browser = detail.browserCheckResult ?? detail.multiStepCheckResult ?? detail.playwrightCheckResult;
  const other = Object.entries(detail).find(
    ([k, v]) => v && !['apiCheckResult', 'browserCheckResult', 'multiStepCheckResult', 'playwrightCheckResult'].includes(k),
  )?.[1];
  return (
    <section class="card trial" aria-labelledby="trial-title">
      <h2 id="trial-title">Try it</h2>
      <p class="hint">Runs the form as it is, once, and shows what the run saw. Nothing is saved.</p>
      <div class="toolbar">
        <ChoiceField
          value={picked}
          onChange={setLocation}
          options={[
            ...served.map((l) => ({ value: l.region, label: `${l.name} (${l.region})${l.runners === 0 ? ', no runner' : ''}` })),
            ...choices.privateLocations.map((p) => ({ value: p.slugName, label: `${p.name} (private)` })),
          ]}
        />
        <Button kind="primary" disabled={busy || Boolean(notReady) || !picked} onClick={() => void start()}>
          {busy ? 'Running…' : 'Run'}
        </Button>
        {notReady && <span class="hint">{notReady}</span>}
      </div>
      <ErrorNote error={error instanceof ApiError && Object.keys(error.fields).length ? null : error} />
      {run && (
        <div aria-live="polite" class="trial-result">
          {!r ? (
            <p role="status">{run.status === 'CANCELLED' ? 'The run was cancelled.' : `Waiting for a runner in ${run.location}…`}</p>
          ) : (
            <>
              <p role="status">
                <StateBadge state={resultState(r)} /> in {run.location} · {ms(r.responseTime)}
                {r.error ? <span class="error"> · {r.error}</span> : null}
              </p>
              {api && <ApiResult result={api} />}
              {browser && <BrowserResult result={browser} playwright={Boolean(detail.playwrightCheckResult)} />}
              {other && !api && !browser && <Details detail={other} />}
              <Files assets={run.assets} />
            </>
          )}
        </div>
      )}
    </section>
  );
}

/** The location picker (a plain select, outside the draft: where a trial runs is not part of the check). */
function ChoiceField({ value, onChange, options }: { value: string; onChange: (v: string) => void; options: { value: string; label: string }[] }) {
  return (
    <div class="field">
      <label class="label" for="trial-location">
        Run in
      </label>
      <select id="trial-location" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
    </div>
  );
}

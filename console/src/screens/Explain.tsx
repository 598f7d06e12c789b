import { useState } from 'preact/hooks';
import { request } from '../api';
import { valueLabel } from '../forms/words';
import { can, useSession } from '../session';
import { Button, ErrorNote } from '../ui';

/** A root-cause analysis as the API answers it (docs/rca.md). */
export interface Rca {
  id: string;
  provider: string;
  model: string;
  durationMs: number;
  created_at: string;
  analysis: {
    classification: string;
    rootCause: string;
    userImpact: string;
    codeFix: string | null;
    evidence: { description: string; artifacts: { name: string; type: string }[] }[] | null;
    referenceLinks: { url: string; title: string }[] | null;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * "Explain this failure": asks the service for a root-cause analysis of an error group, waits for it, and shows it
 * (or the latest one already made). People who may not run checks see the latest one only.
 */
export function Explain({ errorGroupId, latest }: { errorGroupId: string; latest?: Rca }) {
  const session = useSession();
  const [rca, setRca] = useState<Rca | undefined>(latest);
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<unknown>(null);
  const ask = async () => {
    setBusy(true);
    setFailed(null);
    try {
      const asked = await request<{ id: string }>('POST', `/v1/root-cause-analyses/error-groups/${errorGroupId}`);
      for (let i = 0; i < 240; i++) {
        const got = await request<Rca>('GET', `/v1/root-cause-analyses/${asked.data.id}`);
        if (got.status === 200) {
          setRca(got.data);
          return;
        }
        await sleep(500);
      }
      setFailed(new Error('The analysis is taking longer than two minutes; open this page again later to see it.'));
    } catch (err) {
      setFailed(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="explain">
      {session && can(session, 'run') && (
        <Button onClick={ask} disabled={busy} aria-describedby={`explain-${errorGroupId}`}>
          {busy ? 'Explaining…' : rca ? 'Explain again' : 'Explain this failure'}
        </Button>
      )}
      <span id={`explain-${errorGroupId}`} class="muted">
        {' '}
        Made by this service from the runs and changes it holds.
      </span>
      <ErrorNote error={failed} />
      {rca && <Analysis rca={rca} />}
    </div>
  );
}

export function Analysis({ rca }: { rca: Rca }) {
  const a = rca.analysis;
  return (
    <div class="analysis" aria-live="polite">
      <p>
        <strong>{valueLabel(a.classification.replace(/ /g, '_'))}</strong>
      </p>
      <p>{a.rootCause}</p>
      <p class="muted">{a.userImpact}</p>
      {a.codeFix && (
        <p>
          <strong>What to do:</strong> {a.codeFix}
        </p>
      )}
      {a.evidence && a.evidence.length > 0 && (
        <details>
          <summary>What it rests on ({a.evidence.length})</summary>
          <ul>
            {a.evidence.map((e) => (
              <li>
                {e.description} <span class="muted">({e.artifacts.map((x) => x.name).join(', ')})</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      {a.referenceLinks && a.referenceLinks.length > 0 && (
        <ul class="plain">
          {a.referenceLinks.map((l) => (
            <li>
              <a href={new URL(l.url, location.origin).pathname}>{l.title}</a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

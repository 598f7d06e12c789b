import { useEffect, useState } from 'preact/hooks';
import { fetchBlob, get } from '../api';
import { type CheckResult, resultState } from '../checks';
import { ms, time } from '../format';
import { humanize, valueLabel } from '../forms/words';

/** A response's timing phases, as people name them. */
const PHASES: Record<string, string> = {
  dns: 'DNS lookup',
  tcp: 'Connect',
  tls: 'TLS handshake',
  wait: 'Wait',
  firstByte: 'First byte',
  download: 'Download',
  total: 'Total',
};

import { Link } from '../router';
import { Empty, ErrorNote, Loading, StateBadge, useData } from '../ui';
import { Explain, type Rca } from './Explain';

export interface Asset {
  type: 'log' | 'trace' | 'video' | 'screenshot' | 'pcap' | 'report' | 'file';
  name: string;
  url: string;
  contentType: string;
}
type Json = Record<string, unknown>;

/** One run, everything it left: the request and response with every assertion, or the steps, errors and files of a browser run. */
export function Run({ params }: { params: Record<string, string> }) {
  const { checkId, resultId } = params as { checkId: string; resultId: string };
  const run = useData((signal) => get<CheckResult & Json>(`/v1/check-results/${checkId}/${resultId}`, signal), [checkId, resultId]);
  if (run.error)
    return (
      <>
        <p>
          <Link href={`/checks/${checkId}`}>← The check</Link>
        </p>
        <ErrorNote error={run.error} />
      </>
    );
  if (!run.data) return <Loading what="Loading the run" />;
  const r = run.data;
  const api = r.apiCheckResult as Json | null | undefined;
  const browser = (r.browserCheckResult ?? r.multiStepCheckResult ?? r.playwrightCheckResult) as Json | null | undefined;
  const other = (r.tracerouteCheckResult ?? r.grpcCheckResult ?? r.sslCheckResult ?? r.agenticCheckResult) as Json | null | undefined;
  return (
    <>
      <p>
        <Link href={`/checks/${checkId}`}>← {r.name ?? 'The check'}</Link>
      </p>
      <div class="card">
        <h1>Run of {time(r.startedAt)}</h1>
        <p>
          <StateBadge state={resultState(r)} /> · {r.runLocation} · {ms(r.responseTime)} · attempt {r.attempts ?? 1}
          {r.resultType ? ` · ${r.resultType.toLowerCase()}` : ''}
        </p>
        {typeof r.statusCode === 'number' && <p>Status code {r.statusCode}</p>}
        {typeof r.traceId === 'string' && (
          <p>
            Trace{' '}
            {typeof r.traceUrl === 'string' && /^https?:\/\//.test(r.traceUrl) ? (
              <a href={r.traceUrl} target="_blank" rel="noreferrer">
                {r.traceId}
              </a>
            ) : (
              <code>{r.traceId}</code>
            )}
          </p>
        )}
      </div>
      {(r.hasFailures || r.hasErrors) && <ExplainRun checkId={checkId} run={r} />}
      {api && <ApiResult result={api} />}
      {browser && <BrowserResult result={browser} playwright={Boolean(r.playwrightCheckResult)} />}
      {other && <Details detail={other} />}
      <Assets listUrl={`/v1/check-results/${checkId}/${resultId}/assets`} />
    </>
  );
}

/** A result's own figures (a certificate, hops, a gRPC answer) as named values, nested lists as lists. */
export function Details({ detail }: { detail: Json }) {
  return (
    <section class="card" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <Values value={detail} depth={0} />
    </section>
  );
}

function Values({ value, depth }: { value: unknown; depth: number }) {
  if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
  if (typeof value !== 'object') return <code>{String(value)}</code>;
  if (depth > 4) return <code>{JSON.stringify(value)}</code>;
  if (Array.isArray(value))
    return value.length === 0 ? (
      <span class="muted">none</span>
    ) : (
      <ol class="values">
        {value.slice(0, 200).map((v) => (
          <li>
            <Values value={v} depth={depth + 1} />
          </li>
        ))}
      </ol>
    );
  return (
    <dl class="kv">
      {Object.entries(value as Json).map(([k, v]) => (
        <>
          <dt>{humanize(k)}</dt>
          <dd>
            <Values value={v} depth={depth + 1} />
          </dd>
        </>
      ))}
    </dl>
  );
}

function Headers({ headers }: { headers: unknown }) {
  const entries = Array.isArray(headers)
    ? (headers as { key: string; value: string }[]).map((h) => [h.key, h.value])
    : Object.entries((headers ?? {}) as Record<string, unknown>);
  if (!entries.length) return <p class="muted">No headers.</p>;
  return (
    <dl class="kv">
      {entries.map(([k, v]) => (
        <>
          <dt>{String(k)}</dt>
          <dd>
            <code>{String(v)}</code>
          </dd>
        </>
      ))}
    </dl>
  );
}

function JobLog({ log }: { log: unknown }) {
  const lines = Array.isArray(log)
    ? log
    : Object.entries((log ?? {}) as Record<string, unknown[]>).flatMap(([phase, ls]) => (ls ?? []).map((l) => ({ ...(l as Json), phase })));
  if (!lines.length) return null;
  return (
    <>
      <h3>Job log</h3>
      <pre tabIndex={0}>
        {(lines as Json[]).map((l) => `${l.phase ? `[${String(l.phase)}] ` : ''}${String(l.level ?? 'INFO')} ${String(l.msg ?? '')}`).join('\n')}
      </pre>
    </>
  );
}

export function ApiResult({ result }: { result: Json }) {
  const req = (result.request ?? {}) as Json;
  const res = (result.response ?? {}) as Json;
  const assertions = (result.assertions ?? []) as { source: string; property?: string; comparison: string; target: string; actual?: unknown; error?: string }[];
  const phases = (res.timingPhases ?? {}) as Record<string, number>;
  return (
    <>
      <section class="card" aria-labelledby="req-title">
        <h2 id="req-title">Request</h2>
        <p>
          <code>
            {String(req.method ?? 'GET')} {String(req.url ?? '')}
          </code>
        </p>
        <h3>Headers</h3>
        <Headers headers={req.headers} />
        {req.data ? (
          <>
            <h3>Body</h3>
            <pre tabIndex={0}>{String(req.data)}</pre>
          </>
        ) : null}
        {result.requestError ? <p class="error">{String(result.requestError)}</p> : null}
      </section>
      <section class="card" aria-labelledby="res-title">
        <h2 id="res-title">Response</h2>
        {res.status !== undefined ? (
          <p>
            Status <strong>{String(res.status)}</strong> {res.statusText ? String(res.statusText) : ''}
          </p>
        ) : (
          <p class="muted">No response.</p>
        )}
        {Object.keys(phases).length > 0 && (
          <dl class="phases">
            {Object.entries(phases).map(([k, v]) => (
              <>
                <dt>{PHASES[k] ?? humanize(k)}</dt>
                <dd>{ms(v)}</dd>
              </>
            ))}
          </dl>
        )}
        <h3>Headers</h3>
        <Headers headers={res.headers} />
        {res.body !== undefined && res.body !== '' && (
          <>
            <h3>Body</h3>
            <pre tabIndex={0}>{String(res.body)}</pre>
          </>
        )}
      </section>
      <section class="card" aria-labelledby="assert-title">
        <h2 id="assert-title">Assertions</h2>
        {assertions.length === 0 ? (
          <Empty>No assertions.</Empty>
        ) : (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Property</th>
                  <th scope="col">Comparison</th>
                  <th scope="col">Target</th>
                  <th scope="col">Actual</th>
                  <th scope="col">Result</th>
                </tr>
              </thead>
              <tbody>
                {assertions.map((a) => (
                  <tr>
                    <td>{valueLabel(a.source)}</td>
                    <td>
                      <code>{a.property ?? ''}</code>
                    </td>
                    <td>{valueLabel(a.comparison)}</td>
                    <td>
                      <code>{a.target}</code>
                    </td>
                    <td>
                      <code>{a.actual === undefined ? '—' : typeof a.actual === 'string' ? a.actual : JSON.stringify(a.actual)}</code>
                    </td>
                    <td>{a.error ? <span class="state-failing">{a.error}</span> : <span class="state-passing">Passed</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <JobLog log={result.jobLog} />
      </section>
    </>
  );
}

interface Step {
  title: string;
  duration?: number;
  error?: string;
  status?: string;
  steps?: Step[];
}

function Steps({ steps }: { steps: Step[] }) {
  if (!steps.length) return null;
  return (
    <ol class="steps">
      {steps.map((s) => (
        <li class={s.error || (s.status && s.status !== 'passed' && s.status !== 'skipped') ? 'state-failing' : ''}>
          <span>{s.title}</span>{' '}
          <span class="muted">
            {ms(s.duration)}
            {s.status ? ` · ${s.status}` : ''}
          </span>
          {s.error && <pre tabIndex={0}>{s.error}</pre>}
          {s.steps && <Steps steps={s.steps} />}
        </li>
      ))}
    </ol>
  );
}

export function BrowserResult({ result, playwright }: { result: Json; playwright: boolean }) {
  const errors = (result.errors ?? []) as { title?: string; message: string; stack?: string; location?: { line: number; column: number } }[];
  return (
    <section class="card" aria-labelledby="steps-title">
      {errors.length > 0 && (
        <>
          <h2>Errors</h2>
          {errors.map((e) => (
            <div class="run-error">
              {e.title && <strong>{e.title}</strong>}
              {e.location && (
                <p>
                  At line {e.location.line}, column {e.location.column} of the script
                </p>
              )}
              <pre tabIndex={0}>
                {e.message}
                {e.stack ? `\n\n${e.stack}` : ''}
              </pre>
            </div>
          ))}
        </>
      )}
      <h2 id="steps-title">{playwright ? 'Tests' : 'Steps'}</h2>
      {((result.steps ?? []) as Step[]).length ? <Steps steps={result.steps as Step[]} /> : <p class="muted">No steps recorded.</p>}
      <JobLog log={result.jobLog} />
    </section>
  );
}

/** The run's files: screenshots and video shown here (fetched with the session, for the account in use), the trace and the rest to download. */
export function Assets({ listUrl }: { listUrl: string }) {
  const list = useData((signal) => get<{ assets: Asset[] }>(listUrl, signal), [listUrl]);
  if (list.error) return <ErrorNote error={list.error} />;
  return <Files assets={list.data?.assets ?? []} />;
}

export function Files({ assets }: { assets: Asset[] }) {
  if (!assets.length) return null;
  return (
    <section class="card" aria-labelledby="files-title">
      <h2 id="files-title">Files</h2>
      <div class="shots">
        {assets
          .filter((a) => a.type === 'screenshot')
          .map((a) => (
            <BlobMedia asset={a} />
          ))}
        {assets
          .filter((a) => a.type === 'video')
          .map((a) => (
            <BlobMedia asset={a} />
          ))}
      </div>
      <ul class="plain">
        {assets
          .filter((a) => a.type !== 'screenshot')
          .map((a) => (
            <li>
              <Download asset={a} /> <span class="muted">{a.type}</span>
            </li>
          ))}
      </ul>
    </section>
  );
}

async function blobOf(url: string): Promise<string> {
  return URL.createObjectURL(await fetchBlob(url));
}

function BlobMedia({ asset }: { asset: Asset }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    blobOf(asset.url)
      .then((u) => setSrc((url = u)))
      .catch(() => setSrc(null));
    return () => {
      if (url) URL.revokeObjectURL(url);
    };
  }, [asset.url]);
  if (!src) return <p class="muted">{asset.name}…</p>;
  return asset.type === 'video' ? (
    // biome-ignore lint/a11y/useMediaCaption: a run's screen recording has no speech to caption
    <video src={src} controls aria-label={`Video: ${asset.name}`} />
  ) : (
    <figure>
      <img src={src} alt={`Screenshot: ${asset.name}`} />
      <figcaption>{asset.name}</figcaption>
    </figure>
  );
}

function Download({ asset }: { asset: Asset }) {
  return (
    <a
      href={asset.url}
      onClick={(e) => {
        e.preventDefault();
        void blobOf(asset.url).then((u) => {
          const a = document.createElement('a');
          a.href = u;
          a.download = asset.name;
          a.click();
          setTimeout(() => URL.revokeObjectURL(u), 10_000);
        });
      }}
    >
      {asset.name}
    </a>
  );
}

/** A failed run's error group (the one with this run's message, else the one whose last failure is this run), explained. */
function ExplainRun({ checkId, run }: { checkId: string; run: CheckResult & Json }) {
  const groups = useData(
    (signal) =>
      get<{ id: string; rawErrorMessage: string | null; lastSeen: string; rootCauseAnalyses?: Rca[] }[]>(
        `/v1/error-groups/checks/${checkId}?limit=100`,
        signal,
      ),
    [checkId],
  );
  if (!groups.data) return null;
  const detail = [
    run.apiCheckResult,
    run.browserCheckResult,
    run.multiStepCheckResult,
    run.playwrightCheckResult,
    run.tcpCheckResult,
    run.dnsCheckResult,
    run.sslCheckResult,
  ]
    .map((d) => d as { errors?: { message?: string }[]; requestError?: string } | null | undefined)
    .find((d) => d && (d.errors?.length || d.requestError));
  const message = detail?.errors?.[0]?.message ?? detail?.requestError;
  const group =
    groups.data.find((g) => message && g.rawErrorMessage === message) ?? groups.data.find((g) => Date.parse(g.lastSeen) === Date.parse(String(run.startedAt)));
  if (!group) return null;
  return (
    <section class="card" aria-labelledby="explain-title">
      <h2 id="explain-title">Why it failed</h2>
      <Explain errorGroupId={group.id} latest={group.rootCauseAnalyses?.[0]} />
    </section>
  );
}

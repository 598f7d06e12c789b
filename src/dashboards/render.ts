import type { StoredItem } from '../ingest/index.js';
import { RESULT_DETAIL_KEYS } from '../model/results.js';
import { pageTemplates, responseTimeChart } from '../pages/index.js';
import { type CheckView, type DashboardView, type Status, WINDOWS } from './data.js';
import type { DashboardBody } from './schemas.js';

// Every `<%= %>` is HTML-escaped; the only raw output is the layout's body and the sanitised custom CSS.
const eta = pageTemplates(import.meta.url);

const LABELS: Record<Status, string> = { passing: 'Passing', degraded: 'Degraded', failing: 'Failing', unknown: 'No data' };

const helpers = {
  label: (s: Status) => LABELS[s],
  pct: (v: number | null) => (v === null ? '—' : `${v >= 99.995 && v < 100 ? '99.99' : v.toFixed(2)} %`),
  ms: (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${Math.round(v)} ms`),
  when: (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`,
  windows: WINDOWS,
  /** The check's recent runs' response times, oldest first, as a line (SVG built from numbers only). */
  chart: (c: CheckView) =>
    responseTimeChart(
      [...c.recentRuns].reverse().map((r) => r.responseTime),
      { label: `${c.name}: response time of recent runs` },
    ),
};

/** The status of the page as a whole: the worst of its checks. */
export function overallStatus(checks: readonly CheckView[]): { status: Status; text: string } {
  if (!checks.length) return { status: 'unknown', text: 'No checks' };
  const failing = checks.filter((c) => c.status === 'failing').length;
  const degraded = checks.filter((c) => c.status === 'degraded').length;
  if (failing) return { status: 'failing', text: `${failing} of ${checks.length} checks failing` };
  if (degraded) return { status: 'degraded', text: `${degraded} of ${checks.length} checks degraded` };
  if (checks.every((c) => c.status === 'unknown')) return { status: 'unknown', text: 'No results yet' };
  return { status: 'passing', text: 'All checks passing' };
}

export function renderDashboard(d: DashboardBody, view: DashboardView, base: string, customCss: string): string {
  const perPage = d.checksPerPage ?? 15;
  const paginate = d.paginate !== false;
  const overall = overallStatus(view.checks);
  return eta.render('./dashboard', {
    ...helpers,
    d,
    view,
    base,
    customCss,
    perPage,
    paginate,
    pages: Math.max(1, Math.ceil(view.checks.length / perPage)),
    overall: overall.status,
    overallText: overall.text,
  });
}

export function renderLogin(d: DashboardBody, base: string, error?: string): string {
  // Nothing of the dashboard (title, description, logo, favicon) shows until a key opens it.
  void d;
  return eta.render('./login', { base, error });
}

export function renderMessage(title: string, message: string): string {
  return eta.render('./message', { title, message });
}

/** A run's page: its details, why it failed (its first error) and its screenshots, each linked to the full image. */
export function renderRun(
  d: DashboardBody,
  base: string,
  customCss: string,
  check: CheckView,
  run: StoredItem,
  status: Status,
  screenshots: string[] = [],
): string {
  const detail = (RESULT_DETAIL_KEYS.map((k) => run[k]).find((v) => v && typeof v === 'object') ?? {}) as {
    errors?: { message?: unknown }[];
    requestError?: unknown;
  };
  const first = detail.errors?.find((e) => typeof e?.message === 'string')?.message ?? detail.requestError;
  const error = status === 'failing' && typeof first === 'string' ? first.slice(0, 2000) : null;
  const shots = screenshots.map((name) => ({ name, url: `${base}/runs/${check.id}/${run.id}/screenshots/${encodeURIComponent(name)}` }));
  return eta.render('./run', { ...helpers, header: d.header, favicon: d.favicon, customCss, base, check, run: { ...run, status }, error, shots });
}

import { pageTemplates, responseTimeChart } from '../pages/index.js';
import { HISTORY_DAYS, type ServiceStatus, type ServiceView, type StatusPageView } from './data.js';
import type { IncidentView } from './incident-repository.js';
import { COLOUR_FIELDS, type Palette } from './schemas.js';

// Every `<%= %>` is HTML-escaped; raw output is only the layout's body, the CSS (built here from validated
// colours) and SVG drawn here from numbers.
const eta = pageTemplates(import.meta.url);

const LABELS: Record<ServiceStatus, string> = {
  operational: 'Operational',
  degraded: 'Degraded performance',
  'partial-outage': 'Partial outage',
  'major-outage': 'Major outage',
  'no-data': 'No data: not monitored right now',
  maintenance: 'Under maintenance',
};
const OVERALL: Record<ServiceStatus, string> = {
  operational: 'All systems operational',
  degraded: 'Some systems are degraded',
  'partial-outage': 'Partial outage',
  'major-outage': 'Major outage',
  'no-data': 'Some systems are not monitored right now',
  maintenance: 'Maintenance in progress',
};
const PROGRESS: Record<string, string> = { INVESTIGATING: 'Investigating', IDENTIFIED: 'Identified', MONITORING: 'Monitoring', RESOLVED: 'Resolved' };
const MAINTENANCE: Record<string, string> = {
  SCHEDULED: 'Scheduled',
  IN_PROGRESS: 'In progress',
  VERIFYING: 'Verifying',
  COMPLETED: 'Completed',
  CANCELLED: 'Cancelled',
};

export type Theme = 'light' | 'dark' | 'auto';

const DEFAULT_LIGHT: Palette = {
  bodyBackgroundColor: '#F6F8FA',
  headerBackgroundColor: '#FFFFFF',
  headerFontColor: '#1F2328',
  titleFontColor: '#1F2328',
  bodyFontColor: '#1F2328',
  bodyFontColorMuted: '#59636E',
  navigationFontColor: '#1F2328',
  linkFontColor: '#0969DA',
  cardBackgroundColor: '#FFFFFF',
  borderColor: '#D1D9E0',
  primaryButtonBackgroundColor: '#1F883D',
  primaryButtonFontColor: '#FFFFFF',
};
const DEFAULT_DARK: Palette = {
  bodyBackgroundColor: '#0D1117',
  headerBackgroundColor: '#161B22',
  headerFontColor: '#F0F6FC',
  titleFontColor: '#F0F6FC',
  bodyFontColor: '#E6EDF3',
  bodyFontColorMuted: '#9198A1',
  navigationFontColor: '#E6EDF3',
  linkFontColor: '#4493F8',
  cardBackgroundColor: '#161B22',
  borderColor: '#3D444D',
  primaryButtonBackgroundColor: '#238636',
  primaryButtonFontColor: '#FFFFFF',
};
const HEX = /^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;

/** CSS custom properties of a palette: only colours that are plain hex codes reach the page. */
function variables(p: Palette): string {
  return COLOUR_FIELDS.map((f) => (HEX.test(p[f]) ? `--${f}:${p[f]};` : '')).join('');
}

function css(view: StatusPageView, theme: Theme): string {
  const light = variables({ ...DEFAULT_LIGHT, ...(view.page.themeColors?.light ?? {}) });
  const dark = variables({ ...DEFAULT_DARK, ...(view.page.themeColors?.dark ?? {}) });
  const palettes =
    theme === 'light' ? `:root{${light}}` : theme === 'dark' ? `:root{${dark}}` : `:root{${light}}@media (prefers-color-scheme: dark){:root{${dark}}}`;
  return `${palettes}
*{box-sizing:border-box}
body{margin:0;background:var(--bodyBackgroundColor);color:var(--bodyFontColor);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--linkFontColor)}
.page{max-width:860px;margin:0 auto;padding:0 16px}
.narrow{max-width:560px;padding-top:48px}
.top{background:var(--headerBackgroundColor);color:var(--headerFontColor);border-bottom:1px solid var(--borderColor);padding:28px 0 20px}
.top h1{margin:0;color:var(--titleFontColor);font-size:1.6rem}
.lead{margin:.3rem 0 0}
.muted{color:var(--bodyFontColorMuted)}
.overall{margin:24px 0;padding:14px 16px;border-radius:8px;border:1px solid var(--borderColor);background:var(--cardBackgroundColor);display:flex;gap:10px;align-items:center}
.block{margin:24px 0}
.block h2{font-size:1.1rem;margin:0 0 10px;color:var(--titleFontColor)}
.card,.incident{background:var(--cardBackgroundColor);border:1px solid var(--borderColor);border-radius:8px;padding:14px 16px}
.incident{margin:0 0 12px}
.incident h3{margin:0 0 4px;font-size:1rem}
.services{list-style:none;margin:0;padding:0}
.service{padding:12px 0;border-top:1px solid var(--borderColor)}
.service:first-child{border-top:0;padding-top:0}
.service-head{display:flex;gap:8px;align-items:center;flex-wrap:wrap}
.service-name{font-weight:600;flex:1;min-width:8rem;overflow-wrap:anywhere}
.dot{width:10px;height:10px;border-radius:50%;display:inline-block;background:#1a7f37;flex:none}
.status-degraded .dot,.status-maintenance .dot{background:#bf8700}
.status-maintenance .dot{background:#0969da}
.status-partial-outage .dot{background:#d1242f}
.status-major-outage .dot{background:#82071e}
.status-no-data .dot{background:#8c959f}
.bars svg{width:100%;height:34px;display:block;margin-top:8px}
.bar-legend{display:flex;justify-content:space-between;font-size:.8rem}
.chart{color:var(--bodyFontColorMuted);margin-top:6px}
.chart .rt-chart{width:100%;height:40px;display:block}
.pill{font-size:.75rem;font-weight:500;border:1px solid var(--borderColor);border-radius:999px;padding:1px 8px;margin-left:4px;white-space:nowrap}
.timeline{margin:8px 0 0;padding-left:18px}
.timeline li{margin:4px 0;overflow-wrap:anywhere}
.update-text{white-space:pre-wrap}
.subscribe-form{display:flex;gap:8px;flex-wrap:wrap;align-items:center}
.subscribe-form input{flex:1;min-width:12rem;padding:8px 10px;border:1px solid var(--borderColor);border-radius:6px;background:var(--cardBackgroundColor);color:var(--bodyFontColor)}
.button{background:var(--primaryButtonBackgroundColor);color:var(--primaryButtonFontColor);border:0;border-radius:6px;padding:9px 14px;font-weight:600;cursor:pointer}
.foot{display:flex;justify-content:space-between;flex-wrap:wrap;gap:8px;padding:24px 16px 40px;font-size:.85rem}
.sr{position:absolute;left:-9999px}
@media (max-width:520px){.top h1{font-size:1.3rem}.bars svg{height:28px}}`;
}

const pct = (v: number | null) => (v === null ? 'no data' : `${v >= 99.995 && v < 100 ? '99.99' : v.toFixed(2)} %`);
const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The 90 daily bars of a service as one SVG: colour by that day's uptime, each with its date and figure as title. */
function bars(s: ServiceView): string {
  const width = 4;
  const gap = 1.5;
  const total = s.days.length * (width + gap) - gap;
  const rects = s.days
    .map((d, i) => {
      const colour = d.uptime === null ? '#8c959f' : d.uptime >= 99.9 ? '#2da44e' : d.uptime >= 99 ? '#8cc265' : d.uptime >= 95 ? '#d4a72c' : '#cf222e';
      const missing = d.noData ? `; no data for ${pct(d.noData)} of the expected runs` : '';
      const title = escapeHtml(
        `${d.date}: ${d.uptime === null ? (d.expected ? 'no data: no runs' : 'no runs') : `${pct(d.uptime)} of ${d.runs} runs passed${missing}`}`,
      );
      // A day with part of its runs missing shows that part in grey at the top of its bar.
      const grey = d.uptime !== null && d.noData ? Math.min(34, Math.max(2, (34 * d.noData) / 100)) : 0;
      const top = grey ? `<rect x="${(i * (width + gap)).toFixed(1)}" y="0" width="${width}" height="${grey.toFixed(1)}" fill="#8c959f"/>` : '';
      return `<g><rect x="${(i * (width + gap)).toFixed(1)}" y="0" width="${width}" height="34" rx="1" fill="${colour}"/>${top}<title>${title}</title></g>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${total} 34" preserveAspectRatio="none" aria-hidden="true">${rects}</svg>`;
}

const helpers = {
  label: (s: ServiceStatus) => LABELS[s],
  progressLabel: (s: string) => PROGRESS[s] ?? s,
  maintenanceLabel: (s: string) => MAINTENANCE[s] ?? s,
  severityLabel: (s: string) => `${s.charAt(0)}${s.slice(1).toLowerCase()}`,
  pct,
  when,
  bars,
  chart: (s: ServiceView) =>
    responseTimeChart(
      s.days.map((d) => d.responseTime),
      { label: `${s.name}: mean response time per day`, width: 450, height: 40 },
    ),
  days: HISTORY_DAYS,
};

/** The theme a viewer sees: their ?theme= choice, else the page's default (AUTO follows the system's). */
export function themeOf(view: StatusPageView, asked: unknown): Theme {
  if (asked === 'light' || asked === 'dark' || asked === 'auto') return asked;
  return view.page.defaultTheme === 'LIGHT' ? 'light' : view.page.defaultTheme === 'DARK' ? 'dark' : 'auto';
}

const frame = (view: StatusPageView, theme: Theme) => ({
  css: css(view, theme),
  themeClass: `theme-${theme}`,
  colorScheme: theme === 'auto' ? 'light dark' : theme,
});

export function renderStatusPage(view: StatusPageView, base: string, theme: Theme): string {
  return eta.render('./page', { ...helpers, ...frame(view, theme), v: view, base, overallText: OVERALL[view.overall] });
}

export function renderMessage(
  view: StatusPageView,
  theme: Theme,
  title: string,
  message: string,
  extra: { back?: string; form?: { action: string; button: string } } = {},
): string {
  return eta.render('./message', { ...frame(view, theme), title, message, back: extra.back ?? null, form: extra.form ?? null });
}

const xml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

/** The page's incidents as an Atom feed, newest first: one entry per incident, its updates as the content. */
export function renderFeed(view: StatusPageView, pageUrl: string): string {
  const incidents: IncidentView[] = [...view.open, ...view.past].sort((a, b) => (latest(b) > latest(a) ? 1 : -1));
  const updated = incidents.length ? latest(incidents[0]!) : view.generatedAt;
  const entries = incidents
    .map((i) => {
      const text = [...i.incidentUpdates]
        .reverse()
        .map((u) => `${PROGRESS[u.status] ?? u.status} (${when(u.publicIncidentUpdateDate)}): ${u.description}`)
        .join('\n\n');
      return (
        `<entry><id>urn:uuid:${i.id}</id><title>${xml(`${i.name} (${i.lastUpdateStatus.toLowerCase()})`)}</title><updated>${latest(i)}</updated><published>${i.created_at}</published>` +
        `<link rel="alternate" type="text/html" href="${xml(`${pageUrl}#incident-${i.id}`)}"/><content type="text">${xml(text)}</content></entry>`
      );
    })
    .join('\n');
  return (
    `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><id>urn:uuid:${view.page.id}</id><title>${xml(`${view.page.name} incidents`)}</title><updated>${updated}</updated>` +
    `<link rel="alternate" type="text/html" href="${xml(pageUrl)}"/><link rel="self" type="application/atom+xml" href="${xml(`${pageUrl}/feed.atom`)}"/>
${entries}
</feed>
`
  );
}

function latest(i: IncidentView): string {
  // ISO times: the latest sorts last.
  return [i.updated_at ?? i.created_at, ...i.incidentUpdates.map((u) => u.publicIncidentUpdateDate)].sort().at(-1)!;
}

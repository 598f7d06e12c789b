/**
 * Response time as a line, drawn on the server as inline SVG (no script, nothing fetched): the dashboards'
 * per-check chart of recent runs and the status pages' per-service chart of daily means. Only numbers reach the
 * drawing; the one text (its accessible label) is escaped.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface ChartOptions {
  width?: number;
  height?: number;
  /** What the chart shows, for screen readers and as its tooltip. */
  label: string;
}

/** `values` oldest first; null is a gap (no run in that slot). Answers '' when there is nothing to draw. */
export function responseTimeChart(values: readonly (number | null)[], opts: ChartOptions): string {
  const width = opts.width ?? 240;
  const height = opts.height ?? 48;
  const known = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (!known.length) return '';
  const max = Math.max(...known, 1);
  const pad = 2;
  const x = (i: number) => (values.length === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (values.length - 1));
  const y = (v: number) => height - pad - (v / max) * (height - 2 * pad);
  // One path; a gap starts a new segment.
  let d = '';
  let drawing = false;
  values.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      drawing = false;
      return;
    }
    d += `${drawing ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)}`;
    drawing = true;
  });
  const dots =
    values.length <= 60
      ? values.map((v, i) => (typeof v === 'number' && Number.isFinite(v) ? `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="1.5"/>` : '')).join('')
      : '';
  const label = escapeHtml(`${opts.label}: up to ${Math.round(max)} ms`);
  return (
    `<svg class="rt-chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${label}" preserveAspectRatio="none">` +
    `<title>${label}</title><path d="${d}" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round"/>` +
    `<g fill="currentColor">${dots}</g></svg>`
  );
}

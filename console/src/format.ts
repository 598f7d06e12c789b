/** How the console writes numbers and times: the browser's locale, the viewer's time zone. */
export const ms = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
export const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${v >= 99.995 ? '100' : v.toFixed(2)} %`);
export const time = (iso: string | number | null | undefined) =>
  iso === null || iso === undefined ? '—' : new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
export const shortTime = (iso: string | number) => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

export function ago(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return 'never';
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/**
 * Lines over time (uPlot: made for many points). Gaps stay gaps (a null is no data, never zero); maintenance
 * windows are shaded behind the lines. The figures are also in a table next to it for who cannot see the chart.
 */
export interface LineSeries {
  label: string;
  values: (number | null)[];
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];

export function LineChart({
  label,
  x,
  series,
  unit,
  range,
  shaded = [],
}: {
  label: string;
  x: number[];
  series: LineSeries[];
  unit: string;
  range: [number, number];
  shaded?: [number, number][];
}) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const host = el.current;
    if (!host) return;
    const css = getComputedStyle(document.documentElement);
    const text = css.getPropertyValue('--muted').trim() || '#666';
    const grid = css.getPropertyValue('--border').trim() || '#ddd';
    const shade = css.getPropertyValue('--maintenance').trim() || '#a080e0';
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: Math.max(280, host.clientWidth),
      height: 240,
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${Math.round(v)} ${unit}`),
        })),
      ],
      axes: [axis, { ...axis, values: (_u: uPlot, vals: number[]) => vals.map((v) => `${v} ${unit}`), size: 70 }],
      // The window chosen, whatever the runs in it: one run is a point in its place, not a stretched axis.
      scales: { x: { time: true, range: () => range } },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        drawClear: [
          (u: uPlot) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.globalAlpha = 0.15;
            ctx.fillStyle = shade;
            for (const [a, b] of shaded) {
              const left = u.valToPos(a, 'x', true);
              const right = u.valToPos(b, 'x', true);
              ctx.fillRect(left, u.bbox.top, Math.max(1, right - left), u.bbox.height);
            }
            ctx.restore();
          },
        ],
      },
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, host);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, host.clientWidth), height: 240 }));
    resize.observe(host);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, unit, range[0], range[1], shaded]);
  return <div class="chart" ref={el} role="img" aria-label={label} />;
}

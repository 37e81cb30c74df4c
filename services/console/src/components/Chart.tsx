/**
 * A uPlot chart that follows its container's width: a time (or category) x axis and one or more series, drawn as
 * lines (with points), bars, or bars stacked per x; on a left and optionally a right y scale. uPlot draws on a canvas,
 * so the chart carries a text summary as its accessible name, and callers show the numbers in text or a table as well.
 * The x domain comes from the data, padded so that points and bars sit inside it (one point gets a day each side).
 */
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { stackValues, xDomain } from './chart-data.js';

/** One series of a {@link Chart}. */
export interface ChartSeries {
  label: string;
  /** One value per x; null leaves a gap. */
  values: (number | null)[];
  /** CSS colour of the line or bars. */
  color: string;
  /** Draw as bars instead of a line. */
  bars?: boolean;
  /** Plot against the right-hand axis (its label is `y2Label`). */
  right?: boolean;
  /** How a value prints in the legend (e.g. as USD). */
  format?: (v: number) => string;
}

/** Props of {@link Chart}. */
export interface ChartProps {
  /** What the chart shows, in one sentence, for screen readers (its accessible name). */
  summary: string;
  /** x values: Unix seconds when `time` (default), else 0..n-1 with `xLabels` naming them. */
  x: number[];
  series: ChartSeries[];
  /** Names of the x positions when the x axis is not time (e.g. histogram buckets). */
  xLabels?: string[];
  yLabel?: string;
  y2Label?: string;
  /** Height in CSS px. @default 240 */
  height?: number;
  /** Stack the series as bars per x (the first series at the bottom); the legend and the tooltip show each own value. */
  stacked?: boolean;
}

/** A responsive uPlot chart; re-created when its data changes, resized when its container does. */
export function Chart({ summary, x, series, xLabels, yLabel, y2Label, height = 240, stacked = false }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [xMin, xMax] = useMemo(() => xDomain(x, { time: !xLabels, bars: stacked || series.some((s) => s.bars) }), [x, xLabels, stacked, series]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const time = !xLabels;
    // Stacked: each series is drawn as a bar up to its running sum, the top of the stack first, so each lower bar
    // covers the part of the one above it that is not its own. The legend shows each series' own value.
    const tops = stacked ? stackValues(series.map((s) => s.values)) : null;
    const drawn = tops ? series.map((s, i) => ({ s, values: tops[i]! as (number | null)[] })).reverse() : series.map((s) => ({ s, values: s.values }));
    const yRange = (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => [Math.min(0, min), max > 0 ? max * 1.1 : 1];
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      scales: { x: { time, range: () => [xMin, xMax] }, y: { auto: true, range: yRange }, y2: { auto: true, range: yRange } },
      axes: [
        time ? { stroke: '#333' } : { stroke: '#333', values: (_u, splits) => splits.map((v) => xLabels[v] ?? ''), splits: () => x },
        { stroke: '#333', label: yLabel, scale: 'y' },
        ...(series.some((s) => s.right) ? [{ stroke: '#333', label: y2Label, scale: 'y2', side: 1 as const, grid: { show: false } }] : []),
      ],
      series: [
        { label: time ? 'Day' : 'Bucket', value: time ? '{YYYY}-{MM}-{DD}' : (_u: uPlot, v: number) => (v === null ? '' : (xLabels[v] ?? '')) },
        ...drawn.map(({ s }) => {
          const bars = stacked || s.bars;
          const own = (i: number | null | undefined) => (i === null || i === undefined ? null : s.values[i]);
          return {
            label: s.label,
            stroke: s.color,
            fill: bars ? s.color : undefined,
            width: bars ? 0 : 2,
            scale: s.right ? 'y2' : 'y',
            points: { show: !bars, size: 6, fill: s.color },
            paths: bars ? uPlot.paths.bars!({ size: [0.6, 48], align: 0 }) : undefined,
            value: (_u: uPlot, v: number | null, _si: number, i: number | null) => {
              const shown = stacked ? own(i) : v;
              return shown === null || shown === undefined ? '—' : s.format ? s.format(shown) : String(shown);
            },
          };
        }),
      ],
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
    };
    const u = new uPlot(opts, [x, ...drawn.map((d) => d.values)] as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [x, series, xLabels, yLabel, y2Label, height, stacked, xMin, xMax]);
  // The x domain as an attribute (`min max`, in x units): what the axis spans, for tests and anyone inspecting it.
  return <div className="chart" ref={box} role="img" aria-label={summary} data-x-domain={`${xMin} ${xMax}`} />;
}

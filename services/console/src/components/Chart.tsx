/**
 * A uPlot chart that follows its container's width: a time (or category) x axis and one or more series, drawn as
 * lines (with points) or bars, on a left and optionally a right y scale. uPlot draws on a canvas, so the chart
 * carries a text summary as its accessible name, and callers show the numbers in text or a table as well.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

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
}

/** A responsive uPlot chart; re-created when its data changes, resized when its container does. */
export function Chart({ summary, x, series, xLabels, yLabel, y2Label, height = 240 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const time = !xLabels;
    const halfStep = (x.length > 1 ? x[1] - x[0] : time ? 86_400 : 1) / 2;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      // Half a step of room at both ends, so the first and last bars are drawn whole.
      scales: { x: { time, range: (_u, min, max) => [min - halfStep, max + halfStep] }, y: { auto: true, range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] }, y2: { auto: true, range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      axes: [
        time ? { stroke: '#333' } : { stroke: '#333', values: (_u, splits) => splits.map((v) => xLabels[v] ?? ''), splits: () => x },
        { stroke: '#333', label: yLabel, scale: 'y' },
        ...(series.some((s) => s.right) ? [{ stroke: '#333', label: y2Label, scale: 'y2', side: 1 as const, grid: { show: false } }] : []),
      ],
      series: [
        { label: time ? 'Day' : 'Bucket', value: time ? '{YYYY}-{MM}-{DD}' : (_u: uPlot, v: number) => (v === null ? '' : (xLabels[v] ?? '')) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          fill: s.bars ? s.color : undefined,
          width: s.bars ? 0 : 2,
          scale: s.right ? 'y2' : 'y',
          points: { show: !s.bars, size: 6, fill: s.color },
          paths: s.bars ? uPlot.paths.bars!({ size: [0.6, 48], align: 0 }) : undefined,
          value: s.format ? (_u: uPlot, v: number) => (v === null ? '—' : s.format!(v)) : undefined,
        })),
      ],
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
    };
    const u = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [x, series, xLabels, yLabel, y2Label, height]);
  return <div className="chart" ref={box} role="img" aria-label={summary} />;
}

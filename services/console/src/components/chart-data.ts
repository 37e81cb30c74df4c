/**
 * The numbers behind a {@link Chart} that do not need a browser: the x domain (padded around the data) and the
 * running sums of a stacked bar chart. Kept apart from Chart.tsx so they can be tested without uPlot or a DOM.
 */
import type { Chart } from './Chart.js';

/** Seconds in a day: the room either side of a single point on a time axis. */
const DAY = 86_400;

/**
 * The x domain of `x` (sorted ascending), padded: half a step either side when bars are drawn (so the first and last
 * bars are whole; the step is the smallest gap between x values), else 5% of the span; a single x (or all equal) gets
 * a day either side on a time axis and half a step on a category axis. uPlot's own range for a single time value spans about
 * 1000 days (it widens by 86400 in milliseconds on a seconds axis), so the domain is always set from the data.
 */
export function xDomain(x: readonly number[], opts: { time: boolean; bars: boolean }): [number, number] {
  if (x.length === 0) return [0, 1];
  const min = x[0]!;
  const max = x[x.length - 1]!;
  if (max <= min) return opts.time ? [min - DAY, max + DAY] : [min - 0.5, max + 0.5];
  let step = Infinity;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[i - 1]!) step = Math.min(step, x[i]! - x[i - 1]!);
  const pad = opts.bars ? step / 2 : (max - min) * 0.05;
  return [min - pad, max + pad];
}

/** Running sums of `series` per x (nulls count as 0): the top edge of each series' bar in a stack. */
export function stackValues(series: readonly (readonly (number | null)[])[]): number[][] {
  const sums: number[][] = [];
  series.forEach((values, i) => sums.push(values.map((v, j) => (v ?? 0) + (i > 0 ? sums[i - 1]![j]! : 0))));
  return sums;
}

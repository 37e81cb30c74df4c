import { describe, expect, it } from 'vitest';
import { stackValues, xDomain } from './chart-data.js';
import { plural, relative, usd, usdCents } from './format.js';
import { foldText } from './LongText.js';
import { cardColumns } from './StatCard.js';

describe('console formatting', () => {
  it('pluralises a count with one helper', () => {
    expect(plural(1, 'run')).toBe('1 run');
    expect(plural(0, 'run')).toBe('0 runs');
    expect(plural(1234, 'suite and agent pair')).toBe('1,234 suite and agent pairs');
    expect(plural(2, 'policy', 'policies')).toBe('2 policies');
    expect(plural(null, 'approval')).toBe('0 approvals');
  });

  it('rounds headline money to cents, keeping the exact amount for the title', () => {
    expect(usdCents(383.0298)).toBe('$383.03');
    expect(usd(383.0298)).toBe('$383.0298');
    expect(usdCents(0)).toBe('$0.00');
    expect(usdCents(0.0042)).toBe('<$0.01');
    expect(usdCents(-0.0042)).toBe('-<$0.01');
    expect(usdCents(1234.5)).toBe('$1,234.50');
    expect(usdCents(null)).toBe('—');
  });

  it('prints times relative to now on one line, the date past 30 days', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(relative('2026-11-25T11:59:58Z', now)).toBe('just now');
    expect(relative('2026-11-25T11:59:18Z', now)).toBe('42 s ago');
    expect(relative('2026-11-25T11:48:00Z', now)).toBe('12 min ago');
    expect(relative('2026-11-25T09:00:00Z', now)).toBe('3 h ago');
    expect(relative('2026-11-19T12:00:00Z', now)).toBe('6 d ago');
    expect(relative('2026-11-25T14:00:00Z', now)).toBe('in 2 h');
    expect(relative('2026-09-01T12:00:00Z', now)).toBe('1 Sept 2026');
    expect(relative(null, now)).toBe('—');
    expect(relative('not a time', now)).toBe('not a time');
  });

  it('folds long text at a word, not mid-word', () => {
    const text = 'Export the ledger (one entry per agent action: run, agent, action, status, e.g. refund_payment) and more';
    const folded = foldText(text, 60);
    expect(text.startsWith(folded)).toBe(true);
    expect(folded.length).toBeLessThanOrEqual(60);
    expect(text.charAt(folded.length)).toMatch(/[\s,;:]/); // cut between words ('agent', then ', action')
    // No space in the last 40%: cut at the limit.
    expect(foldText('x'.repeat(100), 60)).toBe('x'.repeat(60));
  });
});

describe('console charts and cards', () => {
  it('pads a single point by a day each side on a time axis, not years', () => {
    const t = Date.parse('2026-11-25T10:00:00Z') / 1000;
    expect(xDomain([t], { time: true, bars: false })).toEqual([t - 86_400, t + 86_400]);
    expect(xDomain([t, t], { time: true, bars: false })).toEqual([t - 86_400, t + 86_400]);
    // Lines: 5% of the span; bars: half the smallest step, so the end bars are whole.
    expect(xDomain([0, 100], { time: true, bars: false })).toEqual([-5, 105]);
    expect(xDomain([0, 86_400, 172_800], { time: true, bars: true })).toEqual([-43_200, 216_000]);
    expect(xDomain([0], { time: false, bars: true })).toEqual([-0.5, 0.5]);
  });

  it('stacks series as running sums per x, nulls as 0', () => {
    expect(stackValues([[1, 2, null], [3, 0, 4], [0, 1, 1]])).toEqual([[1, 2, 0], [4, 2, 4], [4, 3, 5]]);
    expect(stackValues([])).toEqual([]);
  });

  it('spreads cards evenly over rows instead of orphaning the last one', () => {
    const min = 135;
    const gap = 11;
    expect(cardColumns(6, 1040, min, gap)).toBe(6); // all six fit one row at 1280 px
    expect(cardColumns(6, 800, min, gap)).toBe(3); // five would fit: 3 + 3, not 5 + 1
    expect(cardColumns(6, 366, min, gap)).toBe(2); // 390 px: 2 + 2 + 2
    expect(cardColumns(4, 366, min, gap)).toBe(2);
    expect(cardColumns(5, 1040, min, gap)).toBe(5);
    expect(cardColumns(7, 800, min, gap)).toBe(4); // 4 + 3
    expect(cardColumns(1, 100, min, gap)).toBe(1);
  });
});

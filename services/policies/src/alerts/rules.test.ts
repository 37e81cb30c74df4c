import { describe, expect, it } from 'vitest';
import { autoKillReason, blockRateOf, budgetAgent, crossedPercents, trips } from './rules.js';

describe('crossedPercents', () => {
  it('names each of 50, 80 and 100 % that a rise passes, once, including landing exactly on it', () => {
    expect(crossedPercents(10, 0, 3)).toEqual([]);
    expect(crossedPercents(10, 3, 6)).toEqual([50]);
    expect(crossedPercents(10, 6, 10)).toEqual([80, 100]);
    expect(crossedPercents(10, 0, 25)).toEqual([50, 80, 100]);
    expect(crossedPercents(10, 5, 7)).toEqual([]); // 50 % was passed before
    expect(crossedPercents(0.3, 0.1, 0.1 + 0.05)).toEqual([50]); // decimal amounts: 0.15 is 50 %
    expect(crossedPercents(0.3, 0.1 + 0.05, 0.24)).toEqual([80]); // from exactly 50 %: passed already
  });
  it('names none for a budget of 0, or spend that did not rise', () => {
    expect(crossedPercents(0, 0, 5)).toEqual([]);
    expect(crossedPercents(10, 6, 6)).toEqual([]);
    expect(crossedPercents(10, 9, 4)).toEqual([]);
  });
});

describe('trips', () => {
  it('needs the minimum volume and a rate strictly above the threshold', () => {
    expect(trips({ threshold: 0.5, min_actions: 10 }, { decisions: 9, stopped: 9 })).toBe(false);
    expect(trips({ threshold: 0.5, min_actions: 10 }, { decisions: 10, stopped: 5 })).toBe(false);
    expect(trips({ threshold: 0.5, min_actions: 10 }, { decisions: 10, stopped: 6 })).toBe(true);
    expect(trips({ block_rate: 1, min_actions: 1 }, { decisions: 3, stopped: 3 })).toBe(false);
    expect(trips({ block_rate: 0.2, min_actions: 1 }, { decisions: 3, stopped: 1 })).toBe(true);
    expect(blockRateOf({ decisions: 0, stopped: 0 })).toBe(0);
  });
  it('says in the reason which policy, how many and what share', () => {
    const r = autoKillReason({ id: 'p-1', name: 'runaway guard' }, { block_rate: 0.5, window_seconds: 300, min_actions: 50 }, { decisions: 60, stopped: 42 });
    expect(r).toBe('auto_kill_switch of policy "runaway guard" (p-1): 42 of 60 decisions within 300 s stopped the action (70%), above 50%');
  });
});

describe('budgetAgent', () => {
  it('is the scope key of a budget counted per agent only', () => {
    expect(budgetAgent('period_budget:agent:day', 'bot-1')).toBe('bot-1');
    expect(budgetAgent('period_budget:organization:day', 'acme')).toBeNull();
    expect(budgetAgent('run_budget', 'run-1')).toBeNull();
  });
});

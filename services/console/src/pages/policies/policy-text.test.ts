import { describe, expect, it } from 'vitest';
import { diffLines, fieldLines } from './policy-text.js';

describe('a policy in words', () => {
  it('prints every kind of field as words, never JSON', () => {
    expect(fieldLines('agent_ids', [])).toEqual(['every agent']);
    expect(fieldLines('auto_kill_switch', null)).toEqual(['none']);
    expect(fieldLines('auto_kill_switch', { block_rate: 0.5, window_seconds: 300, min_actions: 50 })).toEqual(['stop the agent when more than 50% of its decisions within 300 s stop the action (after at least 50)']);
    expect(fieldLines('agent_ids', ['support-bot', 'billing-bot'])).toEqual(['support-bot', 'billing-bot']);
    expect(fieldLines('allowed_actions', null)).toEqual(['every action that is not denied']);
    expect(fieldLines('allowed_actions', [])).toEqual(['none: an empty allow-list blocks every action']);
    expect(fieldLines('denied_actions', ['run_shell'])).toEqual(['run_shell']);
    expect(fieldLines('approval_required_actions', [])).toEqual(['none']);
    expect(fieldLines('rate_limits', { '*': { max_calls: 100, window_seconds: 60, scope: 'agent' }, send_email: { max_calls: 1, window_seconds: 3600, scope: 'organization' }, refund: { max_calls: 5, window_seconds: 60, scope: 'process' } })).toEqual([
      'all actions together: at most 100 calls per 60 s per agent',
      'send_email: at most 1 call per 3600 s for the organisation',
      'refund: at most 5 calls per 60 s per process',
    ]);
    // A limit stored before scopes existed counts per process, as the platform decides it.
    expect(fieldLines('rate_limits', { send_email: { max_calls: 100, window_seconds: 60 } })).toEqual(['send_email: at most 100 calls per 60 s per process']);
    expect(fieldLines('period_budgets', [
      { scope: 'agent', period: 'day', max_usd: 200 },
      { scope: 'organization', period: 'month', max_usd: 5000 },
      { scope: 'agent', period: 'hour', max_usd: 12.5 },
    ])).toEqual(['$200.00 per UTC day per agent', '$5,000.00 per UTC month for the organisation', '$12.50 per UTC hour per agent']);
    expect(fieldLines('period_budgets', [])).toEqual(['none']);
    expect(fieldLines('period_budgets', undefined)).toEqual(['—']);
    expect(fieldLines('rate_limits', {})).toEqual(['none']);
    expect(fieldLines('run_budget', 12.5)).toEqual(['$12.50 per run']);
    expect(fieldLines('session_budget', null)).toEqual(['none']);
    expect(fieldLines('enabled', false)).toEqual(['disabled']);
    expect(fieldLines('downgrades', [{ action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }])).toEqual(['every action: model gpt-4o → gpt-4o-mini']);
    expect(fieldLines('guardrails', { loop: { mode: 'warn', threshold: 3, window_seconds: 60 } })).toEqual(['Loop: warn after 3 identical calls within 60 s']);
    expect(fieldLines('guardrails', {})).toEqual(['none']);
    expect(fieldLines('description', undefined)).toEqual(['—']);
  });

  it('marks the lines each side of a diff lacks, and a reordered list as changed', () => {
    const d = diffLines('denied_actions', ['run_shell', 'drop_table'], ['run_shell', 'send_email']);
    expect(d).toEqual({
      changed: true,
      from: [
        { text: 'run_shell', changed: false },
        { text: 'drop_table', changed: true },
      ],
      to: [
        { text: 'run_shell', changed: false },
        { text: 'send_email', changed: true },
      ],
    });
    expect(diffLines('denied_actions', ['a', 'b'], ['b', 'a']).changed).toBe(true);
    expect(diffLines('agent_ids', [], []).changed).toBe(false);
  });

  it('diffs period budgets and rate-limit scopes line by line', () => {
    const d = diffLines('period_budgets', [{ scope: 'agent', period: 'day', max_usd: 200 }], [
      { scope: 'agent', period: 'day', max_usd: 200 },
      { scope: 'organization', period: 'month', max_usd: 5000 },
    ]);
    expect(d).toEqual({
      changed: true,
      from: [{ text: '$200.00 per UTC day per agent', changed: false }],
      to: [
        { text: '$200.00 per UTC day per agent', changed: false },
        { text: '$5,000.00 per UTC month for the organisation', changed: true },
      ],
    });
    const scoped = diffLines('rate_limits', { send_email: { max_calls: 100, window_seconds: 60, scope: 'process' } }, { send_email: { max_calls: 100, window_seconds: 60, scope: 'agent' } });
    expect(scoped.changed).toBe(true);
    expect(scoped.from).toEqual([{ text: 'send_email: at most 100 calls per 60 s per process', changed: true }]);
    expect(scoped.to).toEqual([{ text: 'send_email: at most 100 calls per 60 s per agent', changed: true }]);
  });
});

import { describe, expect, it } from 'vitest';
import { diffLines, fieldLines } from './policy-text.js';

describe('a policy in words', () => {
  it('prints every kind of field as words, never JSON', () => {
    expect(fieldLines('agent_ids', [])).toEqual(['every agent']);
    expect(fieldLines('agent_ids', ['support-bot', 'billing-bot'])).toEqual(['support-bot', 'billing-bot']);
    expect(fieldLines('allowed_actions', null)).toEqual(['every action that is not denied']);
    expect(fieldLines('allowed_actions', [])).toEqual(['none: an empty allow-list blocks every action']);
    expect(fieldLines('denied_actions', ['run_shell'])).toEqual(['run_shell']);
    expect(fieldLines('approval_required_actions', [])).toEqual(['none']);
    expect(fieldLines('rate_limits', { '*': { max_calls: 100, window_seconds: 60 }, send_email: { max_calls: 1, window_seconds: 3600 } })).toEqual([
      'all actions together: at most 100 calls per 60 s',
      'send_email: at most 1 call per 3600 s',
    ]);
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
});

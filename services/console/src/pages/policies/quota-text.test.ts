import { describe, expect, it } from 'vitest';
import type { QuotaCounter } from '@agp/contracts';
import { when } from '../../components/format.js';
import { amountText, limitText, parseLimit, remainingText, scopeKeyText, windowText } from './quota-text.js';

/** A counter as `GET /api/v1/quotas` answers it, with `over` replacing some fields. */
const counter = (over: Partial<QuotaCounter>): QuotaCounter => ({
  policy_id: 'p-1',
  limit: 'period_budget:agent:day',
  unit: 'usd',
  scope_key: 'billing-bot',
  window_start: '2026-11-28T00:00:00.000Z',
  window_end: '2026-11-29T00:00:00.000Z',
  limit_value: 200,
  committed: 50,
  spent: 42.5,
  overshoot: 0,
  remaining: 150,
  holders: 3,
  updated_at: '2026-11-28T17:00:00.000Z',
  ...over,
});

describe('a fleet counter in words', () => {
  it('parses every form of limit name, and leaves an unknown one as it is', () => {
    expect(parseLimit('run_budget')).toEqual({ kind: 'run_budget' });
    expect(parseLimit('session_budget')).toEqual({ kind: 'session_budget' });
    expect(parseLimit('period_budget:organization:month')).toEqual({ kind: 'period_budget', scope: 'organization', period: 'month' });
    expect(parseLimit('rate_limit:send_email')).toEqual({ kind: 'rate_limit', action: 'send_email' });
    expect(parseLimit('rate_limit:a:b')).toEqual({ kind: 'rate_limit', action: 'a:b' });
    expect(parseLimit('period_budget:team:day')).toEqual({ kind: 'unknown', name: 'period_budget:team:day' });
    expect(parseLimit('rate_limit:')).toEqual({ kind: 'unknown', name: 'rate_limit:' });
  });

  it('names the limit and whom it counts for', () => {
    expect(limitText('run_budget')).toBe('Run budget');
    expect(limitText('session_budget')).toBe('Session budget');
    expect(limitText('period_budget:agent:day')).toBe('Period budget: per UTC day per agent');
    expect(limitText('period_budget:organization:month')).toBe('Period budget: per UTC month for the organisation');
    expect(limitText('rate_limit:*')).toBe('Rate limit: all actions together');
    expect(limitText('rate_limit:send_email')).toBe('Rate limit: send_email');

    expect(scopeKeyText({ limit: 'run_budget', scope_key: 'r-1' })).toBe('run r-1');
    expect(scopeKeyText({ limit: 'session_budget', scope_key: 's-1' })).toBe('session s-1');
    expect(scopeKeyText({ limit: 'period_budget:agent:hour', scope_key: 'billing-bot' })).toBe('agent billing-bot');
    expect(scopeKeyText({ limit: 'period_budget:organization:day', scope_key: 'acme' })).toBe('the organisation');
    const policy = { rate_limits: { send_email: { max_calls: 5, window_seconds: 60, scope: 'organization' as const }, '*': { max_calls: 100, window_seconds: 60, scope: 'agent' as const } } };
    expect(scopeKeyText({ limit: 'rate_limit:send_email', scope_key: 'acme' }, policy)).toBe('the organisation');
    expect(scopeKeyText({ limit: 'rate_limit:*', scope_key: 'billing-bot' }, policy)).toBe('agent billing-bot');
  });

  it('says what is left of the limit in its unit, a negative remainder as it is, and the window', () => {
    expect(remainingText(counter({}))).toBe('$150.00 of $200.00');
    expect(remainingText(counter({ unit: 'calls', limit: 'rate_limit:*', limit_value: 50, remaining: 37 }))).toBe('37 of 50 calls');
    expect(remainingText(counter({ remaining: -1.25 }))).toBe('-$1.25 of $200.00');
    expect(amountText(1, 'calls')).toBe('1 call');
    expect(amountText(1234, 'calls')).toBe('1,234 calls');
    expect(amountText(0.0125, 'usd')).toBe('$0.0125');
    expect(windowText(counter({}))).toBe(`${when('2026-11-28T00:00:00.000Z')} – ${when('2026-11-29T00:00:00.000Z')}`);
    expect(windowText(counter({ limit: 'run_budget', window_start: null, window_end: null }))).toBe('no window');
  });
});

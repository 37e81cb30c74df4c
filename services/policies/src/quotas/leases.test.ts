import { describe, expect, it } from 'vitest';
import { withPolicyDefaults, type Policy } from '@agp/contracts';
import { grantTarget } from './leases.js';

/** Where a policy's limit counts (the counter key of a grant): scope key and window per limit kind. Pure. */
describe('grantTarget', () => {
  const policy = withPolicyDefaults({
    id: 'p1',
    enabled: true,
    agent_ids: [],
    session_budget: 5,
    run_budget: 2,
    rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'organization' }, search: { max_calls: 10, window_seconds: 60, scope: 'process' } },
    period_budgets: [
      { scope: 'agent', period: 'day', max_usd: 200 },
      { scope: 'organization', period: 'month', max_usd: 5000 },
    ],
  } as unknown as Policy);
  const now = Date.parse('2026-03-02T12:34:56.789Z');
  const ids = { agent_id: 'bot', session_id: 'sess', run_id: 'run' };

  it('keys run and session budgets by the run and session, with no window', () => {
    expect(grantTarget('acme', policy, 'run_budget', ids, now)).toEqual({ key: { policy_id: 'p1', limit: 'run_budget', scope_key: 'run', window_start: 0 }, window_end: null, unit: 'usd', limit_value: 2 });
    expect(grantTarget('acme', policy, 'session_budget', ids, now)?.key.scope_key).toBe('sess');
    expect(grantTarget('acme', policy, 'session_budget', { agent_id: 'bot' }, now)).toBeUndefined();
  });

  it('keys period budgets by agent or organisation in their UTC calendar period', () => {
    expect(grantTarget('acme', policy, 'period_budget:agent:day', ids, now)).toEqual({
      key: { policy_id: 'p1', limit: 'period_budget:agent:day', scope_key: 'bot', window_start: Date.parse('2026-03-02T00:00:00Z') },
      window_end: Date.parse('2026-03-03T00:00:00Z'),
      unit: 'usd',
      limit_value: 200,
    });
    expect(grantTarget('acme', policy, 'period_budget:organization:month', ids, now)).toMatchObject({ key: { scope_key: 'acme', window_start: Date.parse('2026-03-01T00:00:00Z') }, window_end: Date.parse('2026-04-01T00:00:00Z') });
    expect(grantTarget('acme', policy, 'period_budget:agent:hour', ids, now)).toBeUndefined();
  });

  it('keys shared rate limits by their fixed window; a process limit has no counter', () => {
    expect(grantTarget('acme', policy, 'rate_limit:send_email', ids, now)).toEqual({
      key: { policy_id: 'p1', limit: 'rate_limit:send_email', scope_key: 'acme', window_start: Date.parse('2026-03-02T12:34:00Z') },
      window_end: Date.parse('2026-03-02T12:35:00Z'),
      unit: 'calls',
      limit_value: 100,
    });
    expect(grantTarget('acme', policy, 'rate_limit:search', ids, now)).toBeUndefined();
    expect(grantTarget('acme', policy, 'rate_limit:*', ids, now)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { CreatePolicySchema, PolicyEvents, UpdatePolicySchema, type Policy } from '@agp/contracts';
import { ConflictError, NotFoundError } from '@agp/runtime';
import { decideCreate, decideUpdate } from './decide.js';
import { foldPolicy, policyHistory, type PolicyEvent } from './policy.js';

const T0 = '2026-11-22T10:00:00.000Z';
const T1 = '2026-11-22T11:00:00.000Z';
const meta = { now: T0, organization_id: 'acme' };
const ID = '01900000-0000-7000-8000-000000000001';
const stored = (d: { type: string; data: object }, v: number, actor = 'key:k1') => ({
  type: d.type, data: d.data as Record<string, unknown>, stream_version: v, recorded_at: T0,
  metadata: { organization_id: 'acme', actor, schema_version: 1 },
});
const created = () => stored(decideCreate(CreatePolicySchema.parse({ name: 'spend cap', run_budget: 10, denied_actions: ['drop_db', 'drop_db'] }), ID, meta), 1);
const current = (events: PolicyEvent[]) => foldPolicy(events) as Policy;

describe('decideCreate', () => {
  it('normalises every optional setting and de-duplicates lists', () => {
    const d = decideCreate(CreatePolicySchema.parse({ name: 'p' }), ID, meta);
    expect(d).toEqual({
      type: PolicyEvents.Created,
      data: { id: ID, at: T0, name: 'p', description: null, enabled: true, session_budget: null, run_budget: null, denied_actions: [], allowed_actions: null, approval_required_actions: [], rate_limits: {}, agent_ids: [], action_budget: null, downgrades: [], guardrails: {}, period_budgets: [], approvals_required: 1, separation_of_duties: false, auto_kill_switch: null },
    });
    expect(current([created()]).denied_actions).toEqual(['drop_db']);
  });
});

describe('decideUpdate', () => {
  it('emits PolicyUpdated with only the changed fields, as from/to', () => {
    const out = decideUpdate(current([created()]), UpdatePolicySchema.parse({ run_budget: 20, name: 'spend cap', rate_limits: { '*': { max_calls: 5, window_seconds: 60 } } }), null, { ...meta, now: T1 });
    expect(out).toEqual([{ type: PolicyEvents.Updated, data: { id: ID, at: T1, changes: { run_budget: { from: 10, to: 20 }, rate_limits: { from: {}, to: { '*': { max_calls: 5, window_seconds: 60, scope: 'agent' } } } } } }]);
  });
  it('emits PolicyDisabled / PolicyEnabled for enabled, after PolicyUpdated when both change', () => {
    const p = current([created()]);
    expect(decideUpdate(p, { enabled: false }, null, meta).map((e) => e.type)).toEqual([PolicyEvents.Disabled]);
    expect(decideUpdate(p, { enabled: false, description: 'x' }, null, meta).map((e) => e.type)).toEqual([PolicyEvents.Updated, PolicyEvents.Disabled]);
    expect(decideUpdate({ ...p, enabled: false }, { enabled: true }, null, meta).map((e) => e.type)).toEqual([PolicyEvents.Enabled]);
  });
  it('emits nothing when the patch changes nothing (object key order and repeats ignored)', () => {
    const p = { ...current([created()]), rate_limits: { a: { max_calls: 1, window_seconds: 2, scope: 'process' as const } } };
    expect(decideUpdate(p, { enabled: true, run_budget: 10, denied_actions: ['drop_db', 'drop_db'], rate_limits: { a: { scope: 'process', window_seconds: 2, max_calls: 1 } } }, null, meta)).toEqual([]);
  });
  it('refuses a stale If-Match with 409 and accepts the current version', () => {
    const p = current([created()]);
    expect(() => decideUpdate(p, { run_budget: 1 }, 2, meta)).toThrow(ConflictError);
    expect(decideUpdate(p, { run_budget: 1 }, 1, meta)).toHaveLength(1);
  });
  it('hides unknown and other organisations\' policies as 404', () => {
    expect(() => decideUpdate(null, { run_budget: 1 }, null, meta)).toThrow(NotFoundError);
    expect(() => decideUpdate(current([created()]), { run_budget: 1 }, null, { ...meta, organization_id: 'globex' })).toThrow(NotFoundError);
  });
});

describe('foldPolicy and policyHistory', () => {
  const events = () => {
    const e1 = created();
    const p1 = current([e1]);
    const [upd] = decideUpdate(p1, { run_budget: 20 }, null, { ...meta, now: T1 });
    const e2 = stored(upd, 2, 'key:k2');
    const [dis] = decideUpdate(current([e1, e2]), { enabled: false }, null, { ...meta, now: T1 });
    return [e1, e2, stored(dis, 3, 'key:k3')];
  };
  it('folds any version: version 1 is the original', () => {
    expect(foldPolicy(events(), 1)).toMatchObject({ version: 1, run_budget: 10, enabled: true, created_at: T0, updated_at: T0 });
    expect(foldPolicy(events())).toMatchObject({ version: 3, run_budget: 20, enabled: false, created_at: T0, updated_at: T1, organization_id: 'acme' });
  });
  it('lists each event with its version, actor and field changes', () => {
    const h = policyHistory(events());
    expect(h.map((e) => [e.version, e.event, e.actor])).toEqual([[1, 'PolicyCreated', 'key:k1'], [2, 'PolicyUpdated', 'key:k2'], [3, 'PolicyDisabled', 'key:k3']]);
    expect(h[0].changes.name).toEqual({ from: null, to: 'spend cap' });
    expect(h[1].changes).toEqual({ run_budget: { from: 10, to: 20 } });
    expect(h[2]).toMatchObject({ at: T1, changes: { enabled: { from: true, to: false } } });
  });
});

describe('period budgets and rate-limit scopes', () => {
  const DAY = { scope: 'agent', period: 'day', max_usd: 200 } as const;
  const MONTH = { scope: 'organization', period: 'month', max_usd: 5000 } as const;
  it('a created policy keeps its period budgets and each rate limit\'s scope; a limit given without one counts per agent', () => {
    const body = CreatePolicySchema.parse({ name: 'fleet', period_budgets: [DAY, MONTH], rate_limits: { send_email: { max_calls: 100, window_seconds: 60 }, '*': { max_calls: 5, window_seconds: 1, scope: 'organization' } } });
    const p = current([stored(decideCreate(body, ID, meta), 1)]);
    expect(p.period_budgets).toEqual([DAY, MONTH]);
    expect(p.rate_limits).toEqual({ send_email: { max_calls: 100, window_seconds: 60, scope: 'agent' }, '*': { max_calls: 5, window_seconds: 1, scope: 'organization' } });
  });
  it('a patch replaces the period budgets whole and a scope change is a change of rate_limits', () => {
    const p = current([stored(decideCreate(CreatePolicySchema.parse({ name: 'fleet', period_budgets: [DAY], rate_limits: { a: { max_calls: 1, window_seconds: 2 } } }), ID, meta), 1)]);
    const [upd] = decideUpdate(p, UpdatePolicySchema.parse({ period_budgets: [MONTH], rate_limits: { a: { max_calls: 1, window_seconds: 2, scope: 'process' } } }), null, { ...meta, now: T1 });
    expect(upd.data).toEqual({
      id: ID,
      at: T1,
      changes: {
        rate_limits: { from: { a: { max_calls: 1, window_seconds: 2, scope: 'agent' } }, to: { a: { max_calls: 1, window_seconds: 2, scope: 'process' } } },
        period_budgets: { from: [DAY], to: [MONTH] },
      },
    });
    const events = [stored(decideCreate(CreatePolicySchema.parse({ name: 'fleet', period_budgets: [DAY], rate_limits: { a: { max_calls: 1, window_seconds: 2 } } }), ID, meta), 1), stored(upd, 2)];
    expect(current(events)).toMatchObject({ version: 2, period_budgets: [MONTH], rate_limits: { a: { scope: 'process' } } });
    expect(decideUpdate(current(events), UpdatePolicySchema.parse({ period_budgets: [] }), null, meta)[0].data).toMatchObject({ changes: { period_budgets: { from: [MONTH], to: [] } } });
  });
  it('events recorded before scopes and period budgets read with no period budgets and per-process rate limits, in the record and the history', () => {
    const legacyCreated = stored({ type: PolicyEvents.Created, data: { id: ID, at: T0, name: 'old', description: null, enabled: true, session_budget: null, run_budget: null, denied_actions: [], allowed_actions: null, approval_required_actions: [], rate_limits: { a: { max_calls: 3, window_seconds: 60 } }, agent_ids: [] } }, 1);
    const legacyUpdated = stored({ type: PolicyEvents.Updated, data: { id: ID, at: T1, changes: { rate_limits: { from: { a: { max_calls: 3, window_seconds: 60 } }, to: { a: { max_calls: 4, window_seconds: 60 }, b: { max_calls: 1, window_seconds: 1 } } } } } }, 2);
    expect(foldPolicy([legacyCreated], 1)).toMatchObject({ period_budgets: [], action_budget: null, rate_limits: { a: { max_calls: 3, window_seconds: 60, scope: 'process' } } });
    expect(current([legacyCreated, legacyUpdated]).rate_limits).toEqual({ a: { max_calls: 4, window_seconds: 60, scope: 'process' }, b: { max_calls: 1, window_seconds: 1, scope: 'process' } });
    const h = policyHistory([legacyCreated, legacyUpdated]);
    expect(h[0].changes.period_budgets).toEqual({ from: null, to: [] });
    expect(h[0].changes.rate_limits).toEqual({ from: null, to: { a: { max_calls: 3, window_seconds: 60, scope: 'process' } } });
    expect(h[1].changes).toEqual({ rate_limits: { from: { a: { max_calls: 3, window_seconds: 60, scope: 'process' } }, to: { a: { max_calls: 4, window_seconds: 60, scope: 'process' }, b: { max_calls: 1, window_seconds: 1, scope: 'process' } } } });
    // A patch that only names the scope the legacy limits already have changes nothing.
    expect(decideUpdate(current([legacyCreated]), UpdatePolicySchema.parse({ rate_limits: { a: { max_calls: 3, window_seconds: 60, scope: 'process' } } }), null, meta)).toEqual([]);
  });
});

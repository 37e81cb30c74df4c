/**
 * The rules beyond lists, budgets and rate limits, each on its own: the action budget, downgrades (cap, substitution,
 * `*`, several policies composed, the caller's arguments untouched), the PII guardrail (context payload, redaction,
 * categories), moderation (threshold, sub-categories), loop (threshold 3: the fourth identical call), idempotency
 * (TTL, caller key) and that all ten intervention types come out of real decisions. No I/O.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, GuardrailContextSchema, INTERVENTION_TYPES, PolicyDecisionSchema, type InterventionType } from '@agp/contracts';
import { argumentsHash, decide, enginePolicy, NO_KILL_SWITCHES, type DecisionContext, type EnginePolicy, type PolicyAction, type RecentCall } from '../src/index.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const ctx: DecisionContext = { now: NOW };
const act = (name: string, args: Record<string, unknown>, extra: Partial<PolicyAction> = {}): PolicyAction => ({ agent_id: 'a-1', action_name: name, arguments: args, ...extra });
const pol = (n: number, s: Partial<EnginePolicy>): EnginePolicy => enginePolicy(`p-${n}`, `2026-11-0${n}T00:00:00.000Z`, { name: `policy ${n}`, ...s });

describe('action budget', () => {
  it('stops an action whose estimated cost is above it; equal is allowed', () => {
    const p = [pol(1, { action_budget: 5 })];
    const over = decide(p, NO_KILL_SWITCHES, act('refund', {}, { estimated_cost_usd: 5.01 }), ctx);
    expect([over.decision, over.rule, over.intervention_type, over.outcome, over.cost_prevented_usd]).toEqual(['budget_exceeded', 'action_budget', 'budget_exceeded', 'blocked', 5.01]);
    expect(decide(p, NO_KILL_SWITCHES, act('refund', {}, { estimated_cost_usd: 5 }), ctx).decision).toBe('allow');
  });
});

describe('downgrades', () => {
  const rules: EnginePolicy['downgrades'] = [
    { action: 'refund_payment', argument: 'payment.amount', max: 100 },
    { action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } },
  ];

  it('caps a number at a dotted path and substitutes a value, leaving the caller’s arguments alone', () => {
    const args = { payment: { amount: 120, currency: 'EUR' }, model: 'gpt-4o', note: 'x' };
    const before = canonicalJson(args);
    const d = decide([pol(1, { downgrades: rules })], NO_KILL_SWITCHES, act('refund_payment', args), ctx);
    expect([d.decision, d.rule, d.intervention_type, d.outcome, d.cost_prevented_usd]).toEqual(['downgrade', 'downgrade', 'downgrade', 'modified', 0]);
    expect(d.modified_inputs).toEqual({ payment: { amount: 100, currency: 'EUR' }, model: 'gpt-4o-mini', note: 'x' });
    expect(canonicalJson(args)).toBe(before);
    expect(PolicyDecisionSchema.parse(d)).toBeTruthy();
  });

  it('leaves values within the cap, other actions, absent paths and unmapped values alone (allow)', () => {
    const p = [pol(1, { downgrades: rules })];
    expect(decide(p, NO_KILL_SWITCHES, act('refund_payment', { payment: { amount: 100 }, model: 'gpt-4o-mini' }), ctx).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('other', { payment: { amount: 500 } }), ctx).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('refund_payment', { payment: 'n/a' }), ctx).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('refund_payment', { model: 'claude' }), ctx).decision).toBe('allow');
  });

  it('rewrites a key spelled __proto__ as data, never the prototype', () => {
    const args = JSON.parse('{"__proto__": {"amount": 500}}') as Record<string, unknown>;
    const d = decide([pol(1, { downgrades: [{ action: '*', argument: '__proto__.amount', max: 10 }] })], NO_KILL_SWITCHES, act('x', args), ctx);
    expect(d.decision).toBe('downgrade');
    expect(Object.getPrototypeOf(d.modified_inputs)).toBe(Object.prototype);
    expect(JSON.stringify(d.modified_inputs)).toBe('{"__proto__":{"amount":10}}');
  });

  it('reaches into arrays by index', () => {
    const p = [pol(1, { downgrades: [{ action: '*', argument: 'items.1.qty', max: 3 }] })];
    expect(decide(p, NO_KILL_SWITCHES, act('order', { items: [{ qty: 9 }, { qty: 9 }] }), ctx).modified_inputs).toEqual({ items: [{ qty: 9 }, { qty: 3 }] });
  });

  it('composes every downgrading policy, oldest first, each rule on the result of the one before', () => {
    const p = [pol(2, { downgrades: [{ action: '*', argument: 'model', replace: { 'gpt-4o-mini': 'gpt-4.1-nano' } }] }), pol(1, { downgrades: [rules[1]] })];
    const d = decide(p, NO_KILL_SWITCHES, act('chat', { model: 'gpt-4o' }), ctx);
    expect(d.policy_id).toBe('p-1');
    expect(d.modified_inputs).toEqual({ model: 'gpt-4.1-nano' });
    // p-2's rule acts on p-1's change; it is not a triggered rule of its own (the caller's arguments did not meet it).
    expect(d.triggered.map((t) => t.policy_id)).toEqual(['p-1']);
  });

  it('gives way to a stopping rule of the same policy', () => {
    const d = decide([pol(1, { downgrades: rules, action_budget: 1 })], NO_KILL_SWITCHES, act('refund_payment', { payment: { amount: 120 } }, { estimated_cost_usd: 2 }), ctx);
    expect(d.decision).toBe('budget_exceeded');
    expect(d.modified_inputs).toBeNull();
  });
});

describe('PII guardrail', () => {
  const args = { to: 'jane.doe@example.com', messages: [{ content: 'hi' }, { content: 'x' }, { content: 'my card is 4111 1111 1111 1111' }] };

  it('blocks with the spec’s context payload (version 1, matches with masked text, categories, fields)', () => {
    const d = decide([pol(1, { guardrails: { pii: { mode: 'block' } } })], NO_KILL_SWITCHES, act('send', args), ctx);
    expect([d.decision, d.intervention_type, d.outcome, d.rule]).toEqual(['pii_blocked', 'pii_blocked', 'blocked', 'pii_guardrail']);
    const c = GuardrailContextSchema.parse(d.guardrail_context);
    expect(c).toEqual({
      guardrail_schema_version: 1,
      guardrail: 'pii',
      matches: [
        { category: 'email', field_path: 'to', matched_text: 'ja************om' },
        { category: 'payment_card', field_path: 'messages.2.content', matched_text: '************1111' },
      ],
      categories: ['email', 'payment_card'],
      fields: ['to', 'messages.2.content'],
    });
    expect(JSON.stringify(d)).not.toContain('4111 1111 1111 1111');
    expect(JSON.stringify(d)).not.toContain('jane.doe@example.com');
  });

  it('only its categories count', () => {
    expect(decide([pol(1, { guardrails: { pii: { mode: 'block', categories: ['iban'] } } })], NO_KILL_SWITCHES, act('send', args), ctx).decision).toBe('allow');
  });

  it('redact mode: the action runs with each match masked (modified_inputs), original arguments untouched', () => {
    const d = decide([pol(1, { guardrails: { pii: { mode: 'redact', categories: ['payment_card'] } } })], NO_KILL_SWITCHES, act('send', args), ctx);
    expect([d.decision, d.outcome]).toEqual(['downgrade', 'modified']);
    expect(d.modified_inputs).toEqual({ ...args, messages: [{ content: 'hi' }, { content: 'x' }, { content: 'my card is [REDACTED:payment_card]' }] });
    expect(args.messages[2].content).toBe('my card is 4111 1111 1111 1111');
  });

  it('warn mode: the action runs with a warning carrying the context', () => {
    const d = decide([pol(1, { guardrails: { pii: { mode: 'warn' } } })], NO_KILL_SWITCHES, act('send', args), ctx);
    expect([d.decision, d.intervention_type, d.outcome]).toEqual(['warn', 'warning', 'warned']);
    expect(d.guardrail_context?.guardrail).toBe('pii');
  });

  it('decides arguments nested 10,000 deep without throwing (PII, loop hash)', () => {
    let deep: unknown = 'jane.doe@example.com';
    for (let i = 0; i < 10_000; i++) deep = { k: [deep] };
    expect(decide([pol(1, { guardrails: { pii: { mode: 'block' } } })], NO_KILL_SWITCHES, act('send', { deep }), ctx).decision).toBe('pii_blocked');
    const d = decide([pol(1, { guardrails: { loop: { mode: 'block', threshold: 1, window_seconds: 60 } } })], NO_KILL_SWITCHES, act('send', { deep }), ctx);
    expect(d.decision).toBe('allow');
    expect(d.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('moderation guardrail', () => {
  const args = { body: 'something hostile' };
  const scores = (s: Record<string, number>) => ({ moderation_scores: [{ field_path: 'body', scores: s }] });

  it('blocks at or above the threshold, with the moderation context', () => {
    const p = [pol(1, { guardrails: { moderation: { mode: 'block', threshold: 0.8 } } })];
    const d = decide(p, NO_KILL_SWITCHES, act('post', args, scores({ harassment: 0.8, violence: 0.2 })), ctx);
    expect([d.decision, d.intervention_type, d.outcome]).toEqual(['content_blocked', 'content_blocked', 'blocked']);
    expect(GuardrailContextSchema.parse(d.guardrail_context)).toEqual({
      guardrail_schema_version: 1,
      guardrail: 'moderation',
      matches: [{ category: 'harassment', field_path: 'body', matched_text: 'so************le', score: 0.8 }],
      categories: ['harassment'],
      fields: ['body'],
    });
    expect(decide(p, NO_KILL_SWITCHES, act('post', args, scores({ harassment: 0.79 })), ctx).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('post', args), ctx).decision).toBe('allow');
  });

  it('a top-level category covers its sub-categories; unlisted categories are ignored', () => {
    const p = [pol(1, { guardrails: { moderation: { mode: 'block', threshold: 0.5, categories: ['hate'] } } })];
    expect(decide(p, NO_KILL_SWITCHES, act('post', args, scores({ 'hate/threatening': 0.9 })), ctx).decision).toBe('content_blocked');
    expect(decide(p, NO_KILL_SWITCHES, act('post', args, scores({ hateful: 0.9, violence: 0.99 })), ctx).decision).toBe('allow');
  });
});

describe('loop guardrail', () => {
  it('threshold 3: three identical calls run, the fourth is loop_detected (key order ignored, window bounded)', () => {
    const p = [pol(1, { guardrails: { loop: { mode: 'block', threshold: 3, window_seconds: 60 } } })];
    const calls: RecentCall[] = [];
    const decisions: string[] = [];
    for (let i = 0; i < 4; i++) {
      const args = i % 2 ? { b: 2, a: 1 } : { a: 1, b: 2 };
      const d = decide(p, NO_KILL_SWITCHES, act('search', args), { now: NOW + i, recent_calls: calls });
      decisions.push(d.decision);
      if (d.decision === 'allow') calls.push({ action_name: 'search', at: NOW + i, arguments_hash: d.arguments_hash! });
      if (i === 3) expect(GuardrailContextSchema.parse(d.guardrail_context)).toEqual({ guardrail_schema_version: 1, guardrail: 'loop', action_name: 'search', arguments_hash: argumentsHash({ a: 1, b: 2 }), repeat_count: 4, threshold: 3, window_seconds: 60 });
    }
    expect(decisions).toEqual(['allow', 'allow', 'allow', 'loop_detected']);
    // Other arguments, another action, or calls older than the window do not count.
    expect(decide(p, NO_KILL_SWITCHES, act('search', { a: 2 }), { now: NOW + 5, recent_calls: calls }).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('search', { a: 1, b: 2 }), { now: NOW + 61_000, recent_calls: calls }).decision).toBe('allow');
  });
});

describe('idempotency guardrail', () => {
  const p = [pol(1, { guardrails: { idempotency: { actions: ['send_email'], ttl_seconds: 3600 } } })];
  it('a repeated caller key within the TTL is replayed with the first call’s time and result reference', () => {
    const records = [{ action_name: 'send_email', idempotency_key: 'inv_1', at: NOW - 60_000, cached_result_ref: 'cache://r1' }];
    const d = decide(p, NO_KILL_SWITCHES, act('send_email', { to: 'x' }, { idempotency_key: 'inv_1', estimated_cost_usd: 0.5 }), { now: NOW, idempotency_records: records });
    expect([d.decision, d.intervention_type, d.outcome, d.cost_prevented_usd]).toEqual(['idempotent_replay', 'idempotent_replay', 'blocked', 0.5]);
    expect(GuardrailContextSchema.parse(d.guardrail_context)).toEqual({ guardrail_schema_version: 1, guardrail: 'idempotency', idempotency_key: 'inv_1', original_timestamp: '2026-11-22T11:59:00.000Z', cached_result_ref: 'cache://r1' });
    expect(decide(p, NO_KILL_SWITCHES, act('send_email', {}, { idempotency_key: 'inv_1' }), { now: NOW + 3_600_000, idempotency_records: records }).decision).toBe('allow');
    expect(decide(p, NO_KILL_SWITCHES, act('send_sms', {}, { idempotency_key: 'inv_1' }), { now: NOW, idempotency_records: [{ ...records[0], action_name: 'send_sms' }] }).decision).toBe('allow');
  });
  it('without a caller key the canonical arguments hash is the key', () => {
    const first = decide(p, NO_KILL_SWITCHES, act('send_email', { to: 'x', subject: 's' }), { now: NOW });
    expect(first.decision).toBe('allow');
    const records = [{ action_name: 'send_email', idempotency_key: first.arguments_hash!, at: NOW }];
    expect(decide(p, NO_KILL_SWITCHES, act('send_email', { subject: 's', to: 'x' }), { now: NOW + 1, idempotency_records: records }).decision).toBe('idempotent_replay');
  });
});

describe('every intervention type comes from a real decision', () => {
  it('all ten', () => {
    const seen = new Set<InterventionType | null>();
    const run = (p: Partial<EnginePolicy>, a: PolicyAction, c: DecisionContext = ctx) => seen.add(decide([pol(1, p)], NO_KILL_SWITCHES, a, c).intervention_type);
    run({ denied_actions: ['x'] }, act('x', {}));
    run({ approval_required_actions: ['x'] }, act('x', {}));
    run({ rate_limits: { x: { max_calls: 1, window_seconds: 60 } } }, act('x', {}), { now: NOW, recent_calls: [{ action_name: 'x', at: NOW }] });
    run({ action_budget: 1 }, act('x', {}, { estimated_cost_usd: 2 }));
    run({ guardrails: { pii: { mode: 'block' } } }, act('x', { a: '10.1.2.3' }));
    run({ guardrails: { moderation: { threshold: 0.5, mode: 'block' } } }, act('x', { a: 'b' }, { moderation_scores: [{ field_path: 'a', scores: { violence: 1 } }] }));
    run({ guardrails: { loop: { threshold: 1, window_seconds: 60, mode: 'block' } } }, act('x', {}), { now: NOW, recent_calls: [{ action_name: 'x', at: NOW, arguments_hash: argumentsHash({}) }] });
    run({ guardrails: { idempotency: { actions: ['x'], ttl_seconds: 60 } } }, act('x', {}, { idempotency_key: 'k' }), { now: NOW, idempotency_records: [{ action_name: 'x', idempotency_key: 'k', at: NOW }] });
    run({ downgrades: [{ action: 'x', argument: 'n', max: 1 }] }, act('x', { n: 2 }));
    run({ run_budget: 10 }, act('x', {}, { estimated_cost_usd: 9 }));
    expect([...seen].sort()).toEqual([...INTERVENTION_TYPES].sort());
  });
});

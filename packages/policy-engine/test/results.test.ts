/**
 * The PII guardrail on an action's result (`results`: block, redact, warn): what comes back for a result without
 * personal data, each mode, the most restrictive across policies, categories, other agents' and disabled policies,
 * and that the caller's result is never modified. No I/O.
 */
import { describe, expect, it } from 'vitest';
import { GuardrailContextSchema } from '@agp/contracts';
import { enginePolicy, PreparedPolicies, reviewResult, type EnginePolicy } from '../src/index.js';

const pol = (n: number, s: Partial<EnginePolicy>): EnginePolicy => enginePolicy(`p-${n}`, `2026-11-0${n}T00:00:00.000Z`, { name: `policy ${n}`, ...s });
const toolResult = (text: string) => ({ content: [{ type: 'text', text }], structuredContent: { owner: { email: 'ada@example.com' } } });

describe('reviewResult', () => {
  it('passes a result without personal data, and any result when no policy scans results', () => {
    const scanning = [pol(1, { guardrails: { pii: { mode: 'block', results: 'block' } } })];
    const clean = { content: [{ type: 'text', text: 'no one here' }] };
    expect(reviewResult(scanning, 'a-1', 'crm.lookup', clean)).toEqual({ outcome: 'pass', result: clean, policy_id: null, policy_name: null, reason: null, guardrail_context: null });
    const r = toolResult('mail ada@example.com');
    expect(reviewResult([pol(1, { guardrails: { pii: { mode: 'block' } } })], 'a-1', 'crm.lookup', r).outcome).toBe('pass');
    expect(reviewResult([pol(1, { enabled: false, guardrails: { pii: { mode: 'block', results: 'block' } } })], 'a-1', 'crm.lookup', r).outcome).toBe('pass');
    expect(reviewResult([pol(1, { agent_ids: ['a-2'], guardrails: { pii: { mode: 'block', results: 'block' } } })], 'a-1', 'crm.lookup', r).outcome).toBe('pass');
  });

  it('redact masks every match of the policy categories in a copy; the context names the fields, masked', () => {
    const r = toolResult('call +1 415 555 0100 or mail ada@example.com');
    const before = structuredClone(r);
    const v = reviewResult([pol(1, { guardrails: { pii: { mode: 'block', categories: ['email'], results: 'redact' } } })], 'a-1', 'crm.lookup', r);
    expect(v.outcome).toBe('redact');
    expect(v.result).toEqual({ content: [{ type: 'text', text: 'call +1 415 555 0100 or mail [REDACTED:email]' }], structuredContent: { owner: { email: '[REDACTED:email]' } } });
    expect(r).toEqual(before);
    expect(v.policy_id).toBe('p-1');
    expect(v.reason).toBe('crm.lookup result holds 2 personal-data matches (email) in content.0.text, structuredContent.owner.email; redacted by the PII guardrail of policy "policy 1"');
    expect(GuardrailContextSchema.parse(v.guardrail_context)).toMatchObject({ guardrail: 'pii', categories: ['email'], fields: ['content.0.text', 'structuredContent.owner.email'] });
    expect(JSON.stringify(v.guardrail_context)).not.toContain('ada@example.com');
  });

  it('across policies block wins over redact and warn; warn passes the result unchanged', () => {
    const r = toolResult('mail ada@example.com');
    const warn = pol(1, { guardrails: { pii: { mode: 'warn', results: 'warn' } } });
    const redact = pol(2, { guardrails: { pii: { mode: 'warn', results: 'redact' } } });
    const block = pol(3, { guardrails: { pii: { mode: 'warn', categories: ['email'], results: 'block' } } });
    const w = reviewResult([warn], 'a-1', 'x', r);
    expect([w.outcome, w.result]).toEqual(['warn', r]);
    expect(reviewResult([warn, redact], 'a-1', 'x', r).outcome).toBe('redact');
    const b = reviewResult(new PreparedPolicies([warn, redact, block]), 'a-1', 'x', r);
    expect([b.outcome, b.policy_name, b.result]).toEqual(['block', 'policy 3', r]);
    expect(b.reason).toMatch(/withheld by the PII guardrail of policy "policy 3"$/);
  });

  it('a policy whose categories found nothing does not act', () => {
    const r = toolResult('mail ada@example.com');
    expect(reviewResult([pol(1, { guardrails: { pii: { mode: 'block', categories: ['iban'], results: 'block' } } })], 'a-1', 'x', r).outcome).toBe('pass');
  });
});

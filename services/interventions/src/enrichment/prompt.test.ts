import { describe, expect, it } from 'vitest';
import type { InterventionRecord } from '@agp/contracts';
import { MAX_INPUTS_CHARS, PROMPT_VERSION, buildPrompt, promptFacts } from './prompt.js';

const record: InterventionRecord = {
  id: 'i-1',
  type: 'pii_blocked',
  outcome: 'blocked',
  action_name: 'send_email',
  description: 'outbound mail',
  agent_id: 'agent-a',
  run_id: 'run-1',
  policy_id: 'pol-9',
  policy_name: 'No PII out',
  risk_level: 'high',
  estimated_cost_usd: 1.5,
  actual_cost_usd: null,
  cost_prevented_usd: 1.5,
  blast_radius: 'one customer',
  reason: 'PII_DETECTED email',
  agent_intent: 'notify',
  original_inputs: { to: 'x@example.com' },
  modified_inputs: null,
  timestamp: '2026-01-01T00:00:00.000Z',
  organization_id: 'acme',
  created_at: '2026-01-01T00:00:00.000Z',
  context: { guardrail_schema_version: 1, guardrail: 'pii', matches: [{ category: 'email', field_path: 'body', matched_text: 'jo***om' }], categories: ['email'], fields: ['body'] },
  remediation_payload: { suggested_rewrite: 'redact' },
  purpose: 'production',
};

describe('buildPrompt', () => {
  it('has a version', () => {
    expect(PROMPT_VERSION).toMatch(/^enrich-v\d+$/);
  });

  it('asks for the four fields only, as JSON, with the five risk levels', () => {
    const [system] = buildPrompt(record);
    expect(system.role).toBe('system');
    for (const f of ['"reason"', '"agent_intent"', '"risk_level"', '"suggested_rewrite"']) expect(system.content).toContain(f);
    expect(system.content).toContain('"critical", "high", "medium", "low", "minimal"');
    expect(system.content).toMatch(/JSON object/);
  });

  it("holds the record's fields, its policy and its guardrail context", () => {
    const [, user] = buildPrompt(record);
    const facts = JSON.parse(user.content.slice(user.content.indexOf('{')));
    expect(facts).toMatchObject({
      type: 'pii_blocked',
      action_name: 'send_email',
      policy: { id: 'pol-9', name: 'No PII out' },
      reason: 'PII_DETECTED email',
      agent_intent: 'notify',
      risk_level: 'high',
      suggested_rewrite: 'redact',
      guardrail_context: { guardrail: 'pii', categories: ['email'] },
    });
  });

  it('is deterministic', () => {
    expect(buildPrompt(record)).toEqual(buildPrompt(structuredClone(record)));
  });

  it('cuts huge inputs to a bounded size', () => {
    const facts = promptFacts({ ...record, original_inputs: { blob: 'x'.repeat(50_000) } });
    expect(typeof facts.original_inputs).toBe('string');
    expect((facts.original_inputs as string).length).toBeLessThan(MAX_INPUTS_CHARS + 20);
  });

  it('gives no policy when the record has none', () => {
    expect(promptFacts({ ...record, policy_id: null, policy_name: null }).policy).toBeNull();
  });
});

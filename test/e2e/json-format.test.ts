import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentSchema, ApprovalRecordSchema, KillSwitchStateSchema, PolicySchema } from '@agp/contracts';
import { eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';

/**
 * Every route answers the same JSON: compact (no space after `:` or `,`), each record's fields in the order its
 * contract declares. Policies, agents, kill switches and approvals are stored as PostgreSQL `jsonb`, which sorts keys
 * and prints them spaced; their reads put them back (`orderKeys` in `@agp/contracts`). Format, not data: the embedded
 * platform is enough (distributed mode reads the same tables with the same queries).
 */
const uniq = () => Math.random().toString(36).slice(2, 10);
/** The declared field order of an object schema. */
const fieldsOf = (schema: { shape: Record<string, unknown> }) => Object.keys(schema.shape);
/** `keys` in the order the schema declares them (those it declares). */
const declared = (schema: { shape: Record<string, unknown> }, keys: string[]) => fieldsOf(schema).filter((k) => keys.includes(k));

describe('JSON format of the answers', () => {
  let p: BootedPlatform;
  const raw = async (path: string, init: RequestInit = {}) => {
    const r = await fetch(`${p.url}${path}`, { ...init, headers: { authorization: `Bearer ${init.method ? p.writeKey : p.readKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: r.status, text: await r.text() };
  };
  const compact = (text: string) => expect(text, text.slice(0, 200)).not.toMatch(/"(?:[^"\\]|\\.)*": |, "/);

  beforeAll(async () => {
    p = await bootEmbedded();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('policies, agents, kill switches and approvals: compact, in the declared field order, lists and single records alike', async () => {
    const agent = `fmt-agent-${uniq()}`;
    const created = await raw('/api/v1/policies', { method: 'POST', body: JSON.stringify({ name: `fmt-${uniq()}`, agent_ids: [agent], run_budget: 5, denied_actions: ['drop_table'] }) });
    expect(created.status, created.text).toBe(201);
    const policyId = JSON.parse(created.text).id as string;
    const ingest = await raw('/api/v1/ingest/', { method: 'POST', body: JSON.stringify({ batch: [{ id: `ev-${uniq()}`, type: 'agent.register', timestamp: new Date().toISOString(), body: { agent_id: agent, name: agent, description: 'formats', actions: [{ name: 'drop_table', description: 'Drop a table', risk_level: 'high' }] } }] }) });
    expect(ingest.status, ingest.text).toBe(207);
    const escalated = await raw('/api/v1/interventions', { method: 'POST', body: JSON.stringify({ type: 'approval_required', outcome: 'escalated', action_name: 'drop_table', agent_id: agent, estimated_cost_usd: 1.5, original_inputs: { table: 't' } }) });
    expect(escalated.status, escalated.text).toBe(201);
    const approvalId = `apr-${JSON.parse(escalated.text).id}`;
    await eventually(async () => (await raw(`/api/v1/agents/${agent}`)).status === 200 && (await raw(`/api/v1/approvals/${approvalId}`)).status === 200);

    const cases: Array<[string, { shape: Record<string, unknown> }, (body: any) => Record<string, unknown>]> = [
      ['/api/v1/policies?limit=5', PolicySchema, (b) => b.policies[0]],
      [`/api/v1/policies/${policyId}`, PolicySchema, (b) => b],
      ['/api/v1/agents?limit=5', AgentSchema, (b) => b.agents.find((a: any) => a.agent_id === agent)],
      [`/api/v1/agents/${agent}`, AgentSchema, (b) => b],
      [`/api/v1/approvals?agent_id=${agent}`, ApprovalRecordSchema, (b) => b.approvals[0]],
      [`/api/v1/approvals/${approvalId}`, ApprovalRecordSchema, (b) => b],
      ['/api/v1/kill-switches', KillSwitchStateSchema, (b) => b.organization],
    ];
    for (const [path, schema, pick] of cases) {
      const r = await raw(path);
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      compact(r.text);
      const record = pick(JSON.parse(r.text));
      expect(record, path).toBeDefined();
      const keys = Object.keys(record);
      expect(keys.filter((k) => fieldsOf(schema).includes(k)), path).toEqual(declared(schema, keys));
    }
    // The same as a route whose records were never jsonb: the interventions list.
    compact((await raw(`/api/v1/interventions?agent_id=${agent}`)).text);
  });
});

/**
 * Fixtures of the scenario generation tests (not used by the service): a support agent whose actions give every
 * template category material, and policies with every optional setting empty.
 */
import type { Agent, Policy, RegisteredAction } from '@agp/contracts';

/** A registered action with every optional field null. */
export const action = (name: string, over: Partial<RegisteredAction> = {}): RegisteredAction => ({ name, description: null, parameters: null, risk_level: null, typical_cost_usd: null, ...over });
/** A JSON Schema object of `properties`. */
export const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

/**
 * A support agent (`support-bot` of `acme`): a lookup, a refund that needs it and cites evidence, a deletion, a web
 * search, and a report whose description says to search first. `actions` replaces the five.
 */
export const supportAgent = (actions?: RegisteredAction[]): Agent => ({
  agent_id: 'support-bot',
  organization_id: 'acme',
  changed_by: null,
  changed_by_name: null,
  name: 'Support bot',
  description: null,
  framework: null,
  owner: null,
  metadata: {},
  registered_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  version: 1,
  kill_switch: { engaged: false, reason: null, changed_at: null, changed_by: null, actor_name: null },
  actions: actions ?? [
    action('lookup_order', { description: 'Look up an order by id', parameters: obj({ order_id: { type: 'string' } }, ['order_id']), risk_level: 'low', typical_cost_usd: 0.01 }),
    action('issue_refund', {
      description: 'Refund an order',
      parameters: obj({ order_id: { type: 'string' }, amount: { type: 'number', minimum: 1, maximum: 500 }, evidence_timestamp: { type: 'string', format: 'date-time' } }, ['order_id', 'amount']),
      risk_level: 'high',
      typical_cost_usd: 0.02,
    }),
    action('delete_customer', { parameters: obj({ customer_id: { type: 'string' } }), risk_level: 'critical', typical_cost_usd: 0.01 }),
    action('search_web', { parameters: obj({ query: { type: 'string', maxLength: 200 } }), risk_level: 'low', typical_cost_usd: 0.5 }),
    action('send_report', { description: 'Email the weekly report. Call search_web first.', parameters: obj({ to: { type: 'string', format: 'email' } }), typical_cost_usd: 0.05 }),
  ],
});

/** A policy with every optional setting empty. */
export const policy = (id: string, over: Partial<Policy> = {}): Policy => ({
  id,
  organization_id: 'acme',
  version: 1,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  name: `policy ${id}`,
  description: null,
  enabled: true,
  session_budget: null,
  run_budget: null,
  denied_actions: [],
  allowed_actions: null,
  approval_required_actions: [],
  rate_limits: {},
  agent_ids: [],
  action_budget: null,
  downgrades: [],
  guardrails: {},
  period_budgets: [],
  approvals_required: 1,
  separation_of_duties: false,
  auto_kill_switch: null,
  ...over,
});


/**
 * The policies the support agent example needs, each scoped to the example's agent only (`agent_ids: [agentId]`),
 * and `ensurePolicies`, which makes the platform hold them: created when missing (found by name), changed with a
 * PATCH when someone edited them, enabled again when disabled, left alone when they match. So the example can run
 * any number of times against the same platform without piling up policies.
 * Field shapes: docs/api.md and `POST /api/v1/policies` in the OpenAPI document.
 */

/** One policy as `POST /api/v1/policies` takes it. */
export type PolicySpec = { name: string } & Record<string, unknown>;

/** The example's four policies, named after the agent so they sort together in the console. */
export function supportPolicies(agentId: string): PolicySpec[] {
  const scope = { agent_ids: [agentId], enabled: true };
  return [
    {
      name: `${agentId}: what the agent may do`,
      description: 'Never delete customer data; closing an account needs a human; refunds are capped at 100 USD; no single action over 5 USD.',
      ...scope,
      denied_actions: ['delete_customer_data'], // → block (hard_block)
      approval_required_actions: ['close_account'], // → escalate (approval_required), waits for a human
      action_budget: 5, // USD: an action estimated above it → budget_exceeded
      downgrades: [{ action: 'issue_refund', argument: 'amount', max: 100 }], // → downgrade: runs with amount 100
    },
    {
      name: `${agentId}: payment data`,
      description: 'Card numbers, IBANs, social security numbers and secrets never leave the agent.',
      ...scope,
      guardrails: { pii: { mode: 'block', categories: ['payment_card', 'iban', 'us_ssn', 'secret'] } }, // → pii_blocked
    },
    {
      name: `${agentId}: contact details`,
      description: 'Phone numbers in what the agent writes are allowed, with a warning.',
      ...scope,
      guardrails: { pii: { mode: 'warn', categories: ['phone'] } }, // → warn (warning)
    },
    {
      name: `${agentId}: loops and duplicates`,
      description: 'The same call with the same arguments at most 3 times a minute; a confirmation email is sent once.',
      ...scope,
      guardrails: {
        loop: { mode: 'block', threshold: 3, window_seconds: 60 }, // the 4th identical call → loop_detected
        idempotency: { actions: ['send_email'], ttl_seconds: 3600 }, // a repeat → idempotent_replay (first result)
      },
    },
  ];
}

/** What `ensurePolicies` did with each policy. */
export interface EnsuredPolicy {
  id: string;
  name: string;
  action: 'created' | 'updated' | 'unchanged';
}

/** Canonical JSON (keys sorted) for comparing a field as sent with the field as stored. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x));

/**
 * Make the platform hold `specs`: for each, find the policy of that exact name (`GET /api/v1/policies?name=`), create
 * it when there is none (`POST`), else `PATCH` the fields that differ (JSON merge patch; nothing when none differs).
 * @param api `(method, path, body?) => parsed JSON body`, throwing on an error status.
 */
export async function ensurePolicies(api: (method: string, path: string, body?: unknown) => Promise<any>, specs: PolicySpec[]): Promise<EnsuredPolicy[]> {
  const out: EnsuredPolicy[] = [];
  for (const spec of specs) {
    const page = await api('GET', `/api/v1/policies?name=${encodeURIComponent(spec.name)}&limit=1`);
    const existing = page.policies[0];
    if (!existing) {
      const created = await api('POST', '/api/v1/policies', spec);
      out.push({ id: created.id, name: spec.name, action: 'created' });
      continue;
    }
    const patch = Object.fromEntries(Object.entries(spec).filter(([k, v]) => k !== 'name' && canonical(existing[k]) !== canonical(v)));
    if (Object.keys(patch).length > 0) await api('PATCH', `/api/v1/policies/${existing.id}`, patch);
    out.push({ id: existing.id, name: spec.name, action: Object.keys(patch).length > 0 ? 'updated' : 'unchanged' });
  }
  return out;
}

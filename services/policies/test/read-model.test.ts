import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePolicySchema, PolicyEvents, UpdatePolicySchema, type Policy } from '@agp/contracts';
import { createPgSql, createPgliteSql, type Sql, type StoredEvent } from '@agp/eventstore';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { decideCreate, decideUpdate } from '../src/policy/decide.js';
import { foldPolicy } from '../src/policy/policy.js';
import { applyPoliciesEvents } from '../src/projections/readModel.js';
import { migratePoliciesReadModel } from '../src/projections/schema.js';
import { agentGovernance, getPolicy, listPoliciesJson } from '../src/queries.js';

/**
 * Period budgets and rate-limit scopes in the policies read model, through the real projection, migration and queries,
 * on PGlite and (with DATABASE_URL) PostgreSQL: a policy created today answers its period budgets and scopes in the
 * record, the list and the governance snapshot; one created before them (its events lack both) answers no period
 * budgets and per-process limits; a database projected before them answers the same after the migration (which a
 * second start leaves alone), and so does a rebuild from the events.
 */
const ORG = 'acme';
const T0 = '2026-11-28T10:00:00.000Z';
const T1 = '2026-11-28T11:00:00.000Z';
const NEW_ID = '01900000-0000-7000-8000-0000000000a1';
const OLD_ID = '01900000-0000-7000-8000-0000000000a2';
const DAY = { scope: 'agent', period: 'day', max_usd: 200 } as const;
const MONTH = { scope: 'organization', period: 'month', max_usd: 5000 } as const;

let position = 0n;
/** A stored policy event as the subscription hands it to the projection. */
function stored(id: string, version: number, d: { type: string; data: object }): StoredEvent {
  position += 1n;
  return {
    event_id: `e${position}`,
    type: d.type,
    data: d.data as Record<string, unknown>,
    metadata: { organization_id: ORG, actor: 'key:k1', schema_version: 1 },
    stream_id: `policy-${id}`,
    stream_version: version,
    global_position: position,
    recorded_at: T0,
  };
}

/** Events of a policy created today: period budgets, a scope-less limit (agent) and an organisation one, then a patch. */
function newPolicyEvents(): StoredEvent[] {
  const meta = { now: T0, organization_id: ORG };
  const created = stored(NEW_ID, 1, decideCreate(CreatePolicySchema.parse({ name: 'fleet', period_budgets: [DAY], rate_limits: { send_email: { max_calls: 100, window_seconds: 60 }, '*': { max_calls: 500, window_seconds: 60, scope: 'organization' } } }), NEW_ID, meta));
  const [upd] = decideUpdate(foldPolicy([created]), UpdatePolicySchema.parse({ period_budgets: [DAY, MONTH] }), null, { ...meta, now: T1 });
  return [created, stored(NEW_ID, 2, upd)];
}

/** Events of a policy recorded before period budgets and scopes: PolicyCreated and a PolicyUpdated of its rate limits. */
const oldPolicyEvents = (): StoredEvent[] => [
  stored(OLD_ID, 1, {
    type: PolicyEvents.Created,
    data: { id: OLD_ID, at: T0, name: 'old', description: null, enabled: true, session_budget: null, run_budget: 10, denied_actions: [], allowed_actions: null, approval_required_actions: [], rate_limits: { search: { max_calls: 3, window_seconds: 60 } }, agent_ids: ['bot'] },
  }),
  stored(OLD_ID, 2, { type: PolicyEvents.Updated, data: { id: OLD_ID, at: T1, changes: { rate_limits: { from: { search: { max_calls: 3, window_seconds: 60 } }, to: { search: { max_calls: 5, window_seconds: 60 } } } } } }),
];

/** Every answer the read model gives about the two policies. */
async function answers(sql: Sql) {
  const list = JSON.parse((await listPoliciesJson(sql, ORG, { skip: 0, limit: 50 })).$json) as { policies: Policy[] };
  return { fresh: await getPolicy(sql, ORG, NEW_ID), old: await getPolicy(sql, ORG, OLD_ID), list: list.policies, governance: await agentGovernance(sql, ORG, 'bot') };
}

/** The stored policy rows, as text (key order as stored). */
const rows = async (sql: Sql) => (await sql.query<{ id: string; doc: string }>('SELECT id, doc::text AS doc FROM agp_policies ORDER BY id')).rows;

const backends: Array<{ name: string; skip: boolean; open: () => Promise<{ sql: Sql; drop: () => Promise<void> }> }> = [
  { name: 'PGlite', skip: false, open: async () => ({ sql: await createPgliteSql(), drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: skipIntegration('postgres'),
    open: async () => {
      const db = await createTestDatabase('agp_policy_fields');
      return { sql: createPgSql(db.url), drop: db.drop };
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`policies read model: period budgets and rate-limit scopes (${backend.name})`, () => {
    let sql: Sql;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ sql, drop } = await backend.open());
      await migratePoliciesReadModel(sql);
    });
    afterAll(async () => {
      await sql?.close();
      await drop?.();
    });

    it('answers period budgets and scopes in the record, the list and the governance snapshot; older policies read with none and per-process limits', async () => {
      await sql.transaction((tx) => applyPoliciesEvents([...newPolicyEvents(), ...oldPolicyEvents()], tx));
      const a = await answers(sql);
      expect(a.fresh).toMatchObject({ version: 2, period_budgets: [DAY, MONTH], rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'agent' }, '*': { max_calls: 500, window_seconds: 60, scope: 'organization' } } });
      expect(a.old).toMatchObject({ version: 2, period_budgets: [], rate_limits: { search: { max_calls: 5, window_seconds: 60, scope: 'process' } } });
      expect(a.list.map((p) => [p.id, p.period_budgets.length])).toEqual([[OLD_ID, 0], [NEW_ID, 2]]);
      expect(a.governance.policies.map((p) => [p.id, p.period_budgets, p.rate_limits])).toEqual([
        [NEW_ID, [DAY, MONTH], { send_email: { max_calls: 100, window_seconds: 60, scope: 'agent' }, '*': { max_calls: 500, window_seconds: 60, scope: 'organization' } }],
        [OLD_ID, [], { search: { max_calls: 5, window_seconds: 60, scope: 'process' } }],
      ]);
    });

    it('a database projected before period budgets and scopes answers the same after the migration, twice; a rebuild gives the same rows', async () => {
      const today = await answers(sql);
      const todayRows = await rows(sql);
      // The rows as the projection wrote them before: no period_budgets, rate limits without scopes.
      await sql.query(
        `UPDATE agp_policies SET doc = jsonb_set(doc - 'period_budgets', '{rate_limits}', (SELECT COALESCE(jsonb_object_agg(e.key, e.value - 'scope'), '{}'::jsonb) FROM jsonb_each(doc->'rate_limits') AS e)) WHERE id = $1`,
        [OLD_ID],
      );
      expect((await sql.query<{ doc: string }>('SELECT doc::text AS doc FROM agp_policies WHERE id = $1', [OLD_ID])).rows[0].doc).not.toContain('scope');
      await migratePoliciesReadModel(sql);
      expect(await answers(sql)).toEqual(today);
      expect(await rows(sql)).toEqual(todayRows);
      await migratePoliciesReadModel(sql);
      expect(await rows(sql)).toEqual(todayRows);

      await sql.query('DELETE FROM agp_policies');
      await sql.transaction((tx) => applyPoliciesEvents(newPolicyEvents().slice(0, 1), tx));
      await sql.transaction((tx) => applyPoliciesEvents([...newPolicyEvents().slice(1), ...oldPolicyEvents()], tx));
      expect(await answers(sql)).toEqual(today);
      expect(await rows(sql)).toEqual(todayRows);
    });
  });
}

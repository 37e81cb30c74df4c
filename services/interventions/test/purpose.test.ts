import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterventionEvents, ListInterventionsQuerySchema, PURPOSES, type InterventionRecordedData, type Purpose } from '@agp/contracts';
import { createEventStore, createPgSql, createPgliteSql, type Sql, type StoredEvent } from '@agp/eventstore';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { agentInterventionCounts } from '../src/agentCounts.js';
import { applyInterventionEvents } from '../src/projections/interventionReadModel.js';
import { migrateReadModels } from '../src/projections/schema.js';
import { interventionStats, listInterventionsPage } from '../src/queries.js';

/**
 * Interventions an eval produced, through the real projection and queries, on PGlite and (with DATABASE_URL)
 * PostgreSQL: the list, its total and the stats of the default purpose (production) leave them out, `eval` has only
 * them. A read model projected before interventions had a purpose answers the same after `migrateReadModels`, byte
 * for byte (each stored record gains `purpose` as its last field), and so does a rebuild from the events.
 */
const ORG = 'acme';
const NOW = new Date('2026-03-02T12:00:00.000Z');
const LEGACY_EVAL_RUN = 'eval-denied_actions.delete_records.direct-0123456789ab';

let position = 0n;
function recorded(id: string, over: Partial<InterventionRecordedData>): StoredEvent {
  position += 1n;
  const data: InterventionRecordedData = {
    id,
    type: 'hard_block',
    outcome: 'blocked',
    action_name: 'delete_records',
    agent_id: 'agent-a',
    timestamp: '2026-03-02T10:00:00.000Z',
    created_at: '2026-03-02T10:00:00.000Z',
    cost_prevented_usd: 5,
    risk_level: 'critical',
    policy_id: 'pol-1',
    policy_name: 'Guard',
    source: 'ingest',
    ...over,
  };
  return {
    event_id: `e${position}`,
    type: InterventionEvents.Recorded,
    data: data as unknown as Record<string, unknown>,
    metadata: { organization_id: ORG, actor: 'key:k1', schema_version: 1 },
    stream_id: `intervention-${id}`,
    stream_version: 1,
    global_position: position,
    recorded_at: NOW.toISOString(),
  };
}

/** Production records (one with a guardrail context, so `purpose` follows `context`) and one of the harness's run. */
const LEGACY = [
  recorded('i-prod-1', { run_id: 'run-1' }),
  recorded('i-prod-2', {
    type: 'pii_blocked',
    action_name: 'send_email',
    cost_prevented_usd: 1,
    context: { guardrail_schema_version: 1, guardrail: 'pii', matches: [{ category: 'email', field_path: 'to', matched_text: 'jo***om' }], categories: ['email'], fields: ['to'] },
  }),
  recorded('i-eval-legacy', { run_id: LEGACY_EVAL_RUN, cost_prevented_usd: 100 }),
];
const STATED = [recorded('i-eval-stated', { purpose: 'eval', run_id: 'scenario-run', action_name: 'refund_payment', cost_prevented_usd: 7 })];

async function answers(sql: Sql, purposes: Purpose[]) {
  const page = await listInterventionsPage(sql, ORG, ListInterventionsQuerySchema.parse({ purpose: purposes.join(',') }));
  const filtered = await listInterventionsPage(sql, ORG, ListInterventionsQuerySchema.parse({ purpose: purposes.join(','), agent_id: 'agent-a' }));
  return {
    page: page.value.$json,
    filtered: filtered.value.$json,
    stats: await interventionStats(sql, ORG, { purpose: purposes }, NOW),
    agent: await agentInterventionCounts(sql, ORG, 'agent-a', { purpose: purposes }),
  };
}
const all = (sql: Sql) => Promise.all([answers(sql, ['production']), answers(sql, ['eval']), answers(sql, [...PURPOSES])]);
const docs = async (sql: Sql) => (await sql.query<{ id: string; doc: string; purpose: string }>('SELECT id, doc::text AS doc, purpose FROM agp_interventions ORDER BY id')).rows;
const TABLES = ['agp_interventions', 'agp_intervention_stats_daily', 'agp_intervention_stats_actions', 'agp_intervention_stats_policies', 'agp_intervention_totals'];

/** The read model as the projection left it before interventions had a purpose. */
async function toSchemaWithoutPurpose(sql: Sql): Promise<void> {
  for (const r of await docs(sql)) {
    const { purpose: _p, ...rec } = JSON.parse(r.doc) as Record<string, unknown>;
    await sql.query('UPDATE agp_interventions SET doc = $2::json WHERE id = $1', [r.id, JSON.stringify(rec)]);
  }
  await sql.exec('ALTER TABLE agp_interventions DROP COLUMN purpose');
  const aggregates: Array<[string, string[], string[]]> = [
    ['agp_intervention_stats_daily', ['organization_id', 'day', 'type', 'outcome'], ['interventions', 'cost_prevented_usd', 'high_risk_blocks']],
    ['agp_intervention_stats_actions', ['organization_id', 'day', 'action_name'], ['blocked', 'cost_prevented_usd']],
    ['agp_intervention_stats_policies', ['organization_id', 'day', 'policy_id'], ['triggered']],
    ['agp_intervention_totals', ['organization_id'], ['total', 'enriched', 'failed']],
  ];
  for (const [table, key, values] of aggregates) {
    const extra = table === 'agp_intervention_stats_policies' ? ', max(policy_name) AS policy_name' : '';
    await sql.exec(
      `CREATE TEMP TABLE merged AS SELECT ${key.join(', ')}, ${values.map((v) => `sum(${v}) AS ${v}`).join(', ')}${extra} FROM ${table} GROUP BY ${key.join(', ')};
       DELETE FROM ${table};
       ALTER TABLE ${table} DROP COLUMN purpose;
       ALTER TABLE ${table} ADD PRIMARY KEY (${key.join(', ')});
       INSERT INTO ${table} (${key.join(', ')}, ${values.join(', ')}${extra ? ', policy_name' : ''}) SELECT * FROM merged;
       DROP TABLE merged`,
    );
  }
}

const backends: Array<{ name: string; skip: boolean; open: () => Promise<{ sql: Sql; drop: () => Promise<void> }> }> = [
  { name: 'PGlite', skip: false, open: async () => ({ sql: await createPgliteSql(), drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: skipIntegration('postgres'),
    open: async () => {
      const db = await createTestDatabase('agp_purpose');
      return { sql: createPgSql(db.url), drop: db.drop };
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`interventions read model: eval data kept apart (${backend.name})`, () => {
    let sql: Sql;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ sql, drop } = await backend.open());
      await createEventStore(sql).migrate(); // the checkpoints the list reads its position from
      await migrateReadModels(sql, createEventStore(sql));
    });
    afterAll(async () => {
      await sql?.close();
      await drop?.();
    });

    it('the list, its total, the stats and the agent counts of production leave eval interventions out; eval has only them', async () => {
      await sql.transaction((tx) => applyInterventionEvents([...LEGACY, ...STATED], tx));
      const [prod, evals, every] = await all(sql);
      const ids = (json: string) => (JSON.parse(json) as { interventions: Array<{ id: string; purpose: string }>; total: number }).interventions.map((i) => `${i.id}:${i.purpose}`).sort();
      expect(ids(prod.page)).toEqual(['i-prod-1:production', 'i-prod-2:production']);
      expect(JSON.parse(prod.page).total).toBe(2);
      expect(ids(evals.page)).toEqual(['i-eval-legacy:eval', 'i-eval-stated:eval']);
      expect(JSON.parse(evals.filtered).total).toBe(2);
      expect(JSON.parse(every.page).total).toBe(4);
      expect(prod.stats).toMatchObject({ total_interventions: 2, cost_prevented_usd: 6, high_risk_blocks: 2 });
      expect(prod.stats.top_blocked_actions.map((a) => a.action_name).sort()).toEqual(['delete_records', 'send_email']);
      expect(evals.stats).toMatchObject({ total_interventions: 2, cost_prevented_usd: 107 });
      expect(every.stats.total_interventions).toBe(4);
      expect(prod.agent).toMatchObject({ total: 2, cost_prevented_usd: 6 });
      expect(evals.agent).toMatchObject({ total: 2, cost_prevented_usd: 107 });
    });

    it('a read model from before interventions had a purpose answers the same after the migration, byte for byte; so does a rebuild', async () => {
      for (const t of TABLES) await sql.query(`DELETE FROM ${t}`);
      await sql.transaction((tx) => applyInterventionEvents(LEGACY, tx));
      const fresh = await all(sql);
      const freshDocs = await docs(sql);
      expect(JSON.parse(freshDocs.find((d) => d.id === 'i-prod-2')!.doc)).toMatchObject({ context: { guardrail: 'pii' }, purpose: 'production' });

      await toSchemaWithoutPurpose(sql);
      await migrateReadModels(sql, createEventStore(sql));
      expect(await docs(sql)).toEqual(freshDocs);
      expect(await all(sql)).toEqual(fresh);
      await migrateReadModels(sql, createEventStore(sql));
      expect(await all(sql)).toEqual(fresh);

      for (const t of TABLES) await sql.query(`DELETE FROM ${t}`);
      await sql.transaction((tx) => applyInterventionEvents(LEGACY, tx));
      expect(await docs(sql)).toEqual(freshDocs);
      expect(await all(sql)).toEqual(fresh);
    });
  });
}

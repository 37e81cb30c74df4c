import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestEnvelope, InterventionRecord } from '@agp/contracts';
import { SqlIngestLog, type IngestDelivery } from '@agp/bus';
import { checkpointPosition, type EventStore, type Sql } from '@agp/eventstore';
import { createLogger, type RequestContext } from '@agp/runtime';
import type { InterventionsSettings } from '../src/env.js';
import type { FakeLlm } from '../../../test/support/fake-llm.js';
import { eventually } from '../../../test/support/http.js';
import { closeServiceParts, openServiceParts, testBackends, type ServiceParts } from './support.js';
import { InterventionsService } from '../src/index.js';
import { READ_MODEL_PROJECTION } from '../src/projections/interventionReadModel.js';
import { APPROVALS_PROJECTION } from '../src/approvals/readModel.js';

/**
 * The inline projections (list/stats and approvals applied in the append's transaction) give exactly the rows a
 * rebuild of the same projections from the log gives: on PGlite and on PostgreSQL, a mix of ingested records and
 * approval requests, synchronous creates, deletes, approval decisions and enrichments is written, the read-model
 * tables are snapshotted, emptied, their checkpoints reset to 0, and the catch-up subscriptions rebuild them.
 */

const logger = createLogger('inline-rebuild-test', 'silent');
const ctx = (org = 'acme'): RequestContext => ({ organization_id: org, scope: 'write', key_id: 'k1', correlation_id: 'c1' });
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/**
 * Every read-model table of the two projections, each read in a stable order with its documents as jsonb (the inline
 * path writes nested client objects in the client's key order, a rebuild in jsonb's: the same JSON). Stats rows whose
 * counters are all 0 count nothing and are left out: small transactions leave them where a large batch nets the
 * +1 and -1 of a record changed within it before writing.
 */
const SNAPSHOT: Record<string, string> = {
  agp_interventions: 'SELECT id, organization_id, type, outcome, action_name, agent_id, run_id, policy_id, risk_level, ts, doc::jsonb AS doc, enrichment, purpose FROM agp_interventions ORDER BY id',
  agp_intervention_stats_daily: 'SELECT * FROM agp_intervention_stats_daily WHERE interventions <> 0 OR cost_prevented_usd <> 0 OR high_risk_blocks <> 0 ORDER BY 1, 2, 3, 4, 5',
  agp_intervention_stats_actions: 'SELECT * FROM agp_intervention_stats_actions WHERE blocked <> 0 OR cost_prevented_usd <> 0 ORDER BY 1, 2, 3, 4',
  agp_intervention_stats_policies: 'SELECT * FROM agp_intervention_stats_policies WHERE triggered <> 0 ORDER BY 1, 2, 3, 4',
  agp_intervention_totals: 'SELECT * FROM agp_intervention_totals WHERE total <> 0 OR enriched <> 0 OR failed <> 0 ORDER BY 1, 2',
  agp_approvals: 'SELECT id, intervention_id, organization_id, status, agent_id, run_id, requested_at, expires_at, doc FROM agp_approvals ORDER BY id',
};

async function snapshot(sql: Sql): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, q] of Object.entries(SNAPSHOT)) out[table] = JSON.parse(JSON.stringify((await sql.query(q)).rows));
  return out;
}

/** One ingest delivery of `events` for `org`, as the ingest consumer hands it over (acked by the service). */
function delivery(org: string, events: IngestEnvelope['events']): IngestDelivery<IngestEnvelope> {
  const payload: IngestEnvelope = { organization_id: org, actor: 'key:k1', correlation_id: uniq(), received_at: new Date().toISOString(), events };
  return { subject: `test.ingest.${org}.intervention`, msg_id: uniq(), payload, attempt: 1, ack: async () => {}, nak: async () => {} };
}

const ingested = (i: number, type: 'intervention.create' | 'approval.request' = 'intervention.create'): IngestEnvelope['events'][number] => {
  const base = {
    action_name: `act_${i % 3}`,
    agent_id: `agent-${i % 2}`,
    ...(i % 2 ? { run_id: `run-${i % 4}` } : {}),
    ...(i % 3 === 0 ? { policy_id: `pol-${i % 2}`, policy_name: `Policy ${i % 2}` } : {}),
    estimated_cost_usd: i + 0.5,
    original_inputs: { zeta: i, alpha: { b: 1, a: [i, 'x'] } },
  };
  const body = type === 'approval.request' ? { ...base, reason: `needs review ${i}` } : { ...base, type: 'hard_block', outcome: i % 2 ? 'blocked' : 'warned', reason: `R${i}`, cost_prevented_usd: i % 2 ? i : 0, risk_level: i % 4 === 1 ? 'high' : 'low' };
  return { id: `ev-${uniq()}`, type, timestamp: new Date(Date.UTC(2026, 10, 1 + (i % 5), 12)).toISOString(), body, assigned_id: `int-${uniq()}` };
};

const backends = testBackends('agp_inline');

for (const backend of backends) {
  describe.skipIf(backend.skip)(`inline projections equal a rebuild from the log (${backend.name})`, () => {
    let sql: Sql;
    let parts: ServiceParts | undefined;
    let store: EventStore;
    let log: SqlIngestLog;
    let fake: FakeLlm;
    const services: InterventionsService[] = [];
    const service = async (env: Partial<InterventionsSettings>, start: boolean) => {
      const svc = new InterventionsService({ store, db: sql, ingestLog: log, subjectPrefix: 'test', logger, env, readYourWritesMs: 5000 });
      services.push(svc);
      if (start) await svc.start();
      return svc;
    };

    beforeAll(async () => {
      parts = await openServiceParts(backend);
      ({ sql, store, log, fake } = parts);
    }, 60_000);
    afterAll(async () => {
      for (const s of services) await s.stop().catch(() => {});
      await closeServiceParts(parts);
    });

    it('applies every write inline, and a rebuild through catch-up gives the same rows', async () => {
      expect(store.canInline).toBe(true);
      // Create the tables, then write through a service whose catch-up subscriptions do not run: only the inline path
      // can make the writes queryable.
      await (await service({}, true)).stop();
      const writer = await service({}, false);
      const batch1 = Array.from({ length: 12 }, (_, i) => ingested(i, i % 4 === 3 ? 'approval.request' : 'intervention.create'));
      const batch2 = Array.from({ length: 6 }, (_, i) => ingested(i + 12));
      await writer.recordIngested([delivery('acme', batch1), delivery('globex', batch2)]);
      const created: InterventionRecord[] = [];
      for (let i = 0; i < 3; i++) created.push(await writer.create(ctx(), { type: 'approval_required', outcome: 'escalated', action_name: `refund_${i}`, agent_id: 'agent-1', reason: 'over limit', estimated_cost_usd: 10 + i }));
      await writer.delete(ctx(), batch1[0].assigned_id);
      await writer.delete(ctx(), created[2].id);
      const approvalIds = batch1.filter((e) => e.type === 'approval.request').map((e) => `apr-${e.assigned_id}`);
      await writer.approvals.decide(ctx(), approvalIds[0], { approver_email: 'ann@example.com' }, 'approve');
      await writer.approvals.decide(ctx(), `apr-${created[0].id}`, { approver_email: 'bob@example.com', notes: 'no' }, 'reject');

      const head = await store.headPosition();
      expect(await checkpointPosition(sql, READ_MODEL_PROJECTION)).toBe(head);
      expect(await checkpointPosition(sql, APPROVALS_PROJECTION)).toBe(head);
      const { rows: live } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM agp_interventions');
      expect(live[0].n).toBe(12 + 6 + 3 - 2);
      const { rows: decided } = await sql.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM agp_approvals GROUP BY status ORDER BY status');
      expect(decided).toEqual([
        { status: 'approved', n: 1 },
        { status: 'pending', n: 3 },
        { status: 'rejected', n: 1 },
      ]);

      // Enrichments, appended by the worker of a running service (its catch-up subscriptions run too).
      const enriching = await service({ AGP_LLM_API_KEY: 'test-key', AGP_LLM_BASE_URL: fake.url, AGP_LLM_MODEL: 'fake-model-1' }, true);
      for (const c of created.slice(0, 2)) await enriching.enrichment.enrich(ctx(), c.id);
      await eventually(async () => (await Promise.all(created.slice(0, 2).map((c) => enriching.get(ctx(), c.id)))).every((d) => d.enrichment_status === 'enriched'), 20_000);
      await enriching.stop();
      const finalHead = await store.headPosition();
      expect(finalHead).toBeGreaterThan(head);
      expect(await checkpointPosition(sql, READ_MODEL_PROJECTION)).toBe(finalHead);
      const inline = await snapshot(sql);
      expect(inline.agp_interventions.filter((r) => (r as { enrichment: string | null }).enrichment === 'enriched')).toHaveLength(2);

      // Rebuild: empty tables, checkpoints at 0, the catch-up subscriptions replay the whole log.
      for (const table of Object.keys(SNAPSHOT)) await sql.query(`DELETE FROM ${table}`);
      await store.resetCheckpoint(READ_MODEL_PROJECTION, 0n);
      await store.resetCheckpoint(APPROVALS_PROJECTION, 0n);
      const rebuilder = await service({}, true);
      await eventually(async () => (await checkpointPosition(sql, READ_MODEL_PROJECTION)) === finalHead && (await checkpointPosition(sql, APPROVALS_PROJECTION)) === finalHead, 20_000);
      await rebuilder.stop();
      expect(await snapshot(sql)).toEqual(inline);
    }, 90_000);
  });
}

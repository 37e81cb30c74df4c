import 'reflect-metadata';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateIntervention, EnrichmentCoverage } from '@agp/contracts';
import { InProcessBroker, InProcessClient, InProcessServer, SqlIngestLog, call } from '@agp/bus';
import type { EventStore, Sql } from '@agp/eventstore';
import { createLogger, type RequestContext } from '@agp/runtime';
import type { InterventionsSettings } from '../src/env.js';
import { reply, type FakeLlm } from '../../../test/support/fake-llm.js';
import { eventually } from '../../../test/support/http.js';
import { closeServiceParts, openServiceParts, testBackends, type ServiceParts } from './support.js';
import { InterventionsModule, InterventionsService } from '../src/index.js';
import { migrateReadModels } from '../src/projections/schema.js';
import { ENRICHMENT_SUBSCRIPTION } from '../src/enrichment/worker.js';

/**
 * `interventions.enrichment-coverage`, asked over the in-process bus of an interventions service on a real
 * database (PGlite, and PostgreSQL when DATABASE_URL is set), with enrichment off and on (a loopback fake provider).
 * Every answer is checked twice: against the expected figures, and against the `enrichment_status` that
 * GET /api/v1/interventions/{id} (the service's `get`) reports for each live record.
 */

const logger = createLogger('coverage-test', 'silent');
const ctx = (org = 'acme'): RequestContext => ({ organization_id: org, scope: 'write', key_id: 'k1', correlation_id: 'c1' });
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const MODEL = 'fake-model-1';

/** An intervention whose agent and action name carry `marker` (so the fake provider can be scripted per record). */
const body = (marker: string): CreateIntervention => ({ type: 'hard_block', outcome: 'blocked', action_name: `act_${marker}`, agent_id: marker, reason: 'DENY: rule R17' });

/** One interventions service, started or not, served on its own in-process bus. */
interface Running {
  svc: InterventionsService;
  coverage(org?: string): Promise<EnrichmentCoverage>;
  /** The detail's `enrichment_status` of each id, counted like the coverage. */
  tally(ids: string[], org?: string): Promise<EnrichmentCoverage>;
  stop(): Promise<void>;
}

async function serve(store: EventStore, db: Sql, ingestLog: SqlIngestLog, env: Partial<InterventionsSettings>, start: boolean): Promise<Running> {
  const svc = new InterventionsService({ store, db, ingestLog, subjectPrefix: 'test', logger, env, readYourWritesMs: 5000 });
  if (start) await svc.start();
  const broker = new InProcessBroker();
  const app: INestMicroservice = await NestFactory.createMicroservice(InterventionsModule.register(svc, logger), { strategy: new InProcessServer({ broker, queue: 'interventions' }), logger: false });
  await app.listen();
  const client = new InProcessClient({ broker });
  return {
    svc,
    coverage: (org = 'acme') => call(client, 'interventions.enrichment-coverage', ctx(org), {}),
    async tally(ids, org = 'acme') {
      const t: EnrichmentCoverage = { total: 0, enriched: 0, pending: 0, failed: 0, skipped: 0 };
      for (const id of ids) {
        const d = await svc.get(ctx(org), id).catch(() => null);
        if (!d) continue; // deleted
        t.total += 1;
        t[d.enrichment_status] += 1;
      }
      return t;
    },
    async stop() {
      await app.close();
      await svc.stop();
    },
  };
}

const backends = testBackends('agp_coverage');

for (const backend of backends) {
  describe.skipIf(backend.skip)(`interventions.enrichment-coverage (${backend.name})`, () => {
    let sql: Sql;
    let parts: ServiceParts | undefined;
    let store: EventStore;
    let log: SqlIngestLog;
    let fake: FakeLlm;
    const running: Running[] = [];
    const llm = (): Partial<InterventionsSettings> => ({ AGP_LLM_API_KEY: 'test-key', AGP_LLM_BASE_URL: fake.url, AGP_LLM_MODEL: MODEL, AGP_ENRICHMENT_MAX_ATTEMPTS: 2 });
    const open = async (env: Partial<InterventionsSettings>, start = true) => {
      const r = await serve(store, sql, log, env, start);
      running.push(r);
      return r;
    };
    /** Every live id of acme created below, in creation order (deleted ones are skipped by `tally`). */
    const ids: string[] = [];
    /** What the coverage must be at the end of each step, carried into the next. */
    let off: EnrichmentCoverage;

    beforeAll(async () => {
      parts = await openServiceParts(backend);
      ({ sql, store, log, fake } = parts);
    }, 60_000);
    afterAll(async () => {
      for (const r of running) await r.stop().catch(() => {});
      await closeServiceParts(parts);
    });

    it('counts every live record skipped with enrichment off, per organisation, leaving deleted ones out', async () => {
      const a = await open({});
      for (let i = 0; i < 3; i++) ids.push((await a.svc.create(ctx(), body(uniq()))).id);
      await a.svc.create(ctx('globex'), body(uniq()));
      await a.svc.delete(ctx(), ids[2]);
      off = { total: 2, enriched: 0, pending: 0, failed: 0, skipped: 2 };
      expect(await a.coverage()).toEqual(off);
      expect(await a.tally(ids)).toEqual(off);
      expect(await a.coverage('globex')).toEqual({ total: 1, enriched: 0, pending: 0, failed: 0, skipped: 1 });
      expect(await a.coverage('nobody')).toEqual({ total: 0, enriched: 0, pending: 0, failed: 0, skipped: 0 });
      await a.stop();
    });

    it('counts enriched, failed (latest outcome wins) and pending (queued, in flight, re-run) records as the detail reports them', async () => {
      const b = await open(llm());
      const [ok, bad, slow, gone, rerun, retried] = Array.from({ length: 6 }, uniq);
      fake.script(bad, reply.status(400));
      fake.script(slow, reply.stall(60_000));
      fake.script(rerun, reply.ok({ reason: 'First answer.', agent_intent: 'x', risk_level: 'high', suggested_rewrite: 'y' }), reply.stall(60_000));
      fake.script(retried, reply.status(400));
      const id: Record<string, string> = {};
      for (const m of [ok, bad, slow, gone, rerun, retried]) ids.push((id[m] = (await b.svc.create(ctx(), body(m))).id));
      const settled = (m: string, status: string) => eventually(async () => (await b.svc.get(ctx(), id[m])).enrichment_status === status, 15_000);
      await Promise.all([settled(ok, 'enriched'), settled(bad, 'failed'), settled(gone, 'enriched'), settled(rerun, 'enriched'), settled(retried, 'failed')]);
      await b.svc.delete(ctx(), id[gone]);
      // A second run: failed then enriched counts as enriched; an enriched record re-run (stalled) is pending again.
      await b.svc.enrichment.enrich(ctx(), id[retried]);
      await settled(retried, 'enriched');
      await b.svc.enrichment.enrich(ctx(), id[rerun]);
      await eventually(async () => fake.inFlight(slow) === 1 && fake.inFlight(rerun) === 1, 15_000);

      // Every step above waited for the read model (get, delete) or wrote the queue itself (enrich): exact at once.
      // The records of the first step were recorded while enrichment was off: still skipped.
      const expected = { total: 7, enriched: 2, pending: 2, failed: 1, skipped: 2 };
      expect(await b.coverage()).toEqual(expected);
      expect(await b.tally(ids)).toEqual(expected);
      await b.stop();
    });

    it('counts a record the enrichment subscription has not reached as pending with enrichment on, skipped with it off', async () => {
      // Put the subscription's checkpoint between the two live records of the first step (as if it lagged behind).
      const recorded = (await store.readStream(`intervention-${ids[0]}`)).find((e) => e.type === 'InterventionRecorded')!;
      await store.resetCheckpoint(ENRICHMENT_SUBSCRIPTION, recorded.global_position);
      // Not started: nothing moves the checkpoint or the queue (the two stalled runs were handed back, still queued).
      const on = await open(llm(), false);
      const expectedOn = { total: 7, enriched: 2, pending: 3, failed: 1, skipped: 1 };
      expect(await on.coverage()).toEqual(expectedOn);
      expect(await on.tally(ids)).toEqual(expectedOn);
      const offNow = await open({}, false);
      const expectedOff = { total: 7, enriched: 2, pending: 2, failed: 1, skipped: 2 };
      expect(await offNow.coverage()).toEqual(expectedOff);
      expect(await offNow.tally(ids)).toEqual(expectedOff);
    });

    it('migrates a read model from before the enrichment columns, filling them from the event store', async () => {
      const before = await running.at(-1)!.coverage();
      await sql.query('ALTER TABLE agp_interventions DROP COLUMN enrichment');
      await sql.query('ALTER TABLE agp_intervention_totals DROP COLUMN enriched, DROP COLUMN failed');
      await migrateReadModels(sql, store);
      expect(await running.at(-1)!.coverage()).toEqual(before);
      const { rows } = await sql.query<{ enrichment: string | null; n: string }>(
        "SELECT enrichment, count(*)::text AS n FROM agp_interventions WHERE organization_id = 'acme' GROUP BY enrichment ORDER BY enrichment",
      );
      expect(rows.map((r) => [r.enrichment, Number(r.n)])).toEqual([
        ['enriched', 3],
        ['failed', 1],
        [null, 3],
      ]);
      // A second start is a no-op.
      await migrateReadModels(sql, store);
      expect(await running.at(-1)!.coverage()).toEqual(before);
    });
  });
}

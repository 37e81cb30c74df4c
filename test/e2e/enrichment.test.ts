import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedPlatform } from '@agp/embedded';
import { DEFAULT_ANSWER, reply, startFakeLlm, type FakeLlm } from '../support/fake-llm.js';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * LLM enrichment (spec §Intervention record, Enrichment), end to end: interventions go in through the real HTTP API, a real loopback
 * HTTP server speaking the chat-completions protocol plays the provider (AGP_LLM_BASE_URL), and the
 * tests read the enriched record, its audit trail and the provider's request log.
 */

const MODEL = 'fake-model-1';
const ACTOR = `enrichment:${MODEL}`;
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

/** Settings of a platform with enrichment on, pointed at the fake (retries kept short: 3 attempts). */
const llmEnv = () => ({ AGP_LLM_API_KEY: 'test-key', AGP_LLM_BASE_URL: fake.url, AGP_LLM_MODEL: MODEL, AGP_ENRICHMENT_MAX_ATTEMPTS: '3' });

/** An intervention whose agent and action name are `marker` (so the fake can be scripted per record). */
const body = (marker: string, over: Record<string, unknown> = {}) => ({
  type: 'hard_block',
  outcome: 'blocked',
  action_name: `act_${marker}`,
  agent_id: marker,
  policy_id: 'pol-enrich',
  policy_name: 'No destructive SQL',
  risk_level: 'critical',
  reason: 'DENY: sql.drop matched rule R17',
  agent_intent: 'db_cleanup_v2',
  remediation_payload: { suggested_rewrite: 'use TRUNCATE w/ backup' },
  ...over,
});

/**
 * POST one intervention through `POST /api/v1/ingest/` and expect it answered `created` (201), or `duplicate` (200)
 * for an id already stored (docs/ingest.md, Ingest answers); returns how long it took (ms).
 */
async function ingest(p: { url: string; writeKey: string }, marker: string, over: Record<string, unknown> = {}, eventId = `ev-${marker}`, expected: 'created' | 'duplicate' = 'created') {
  const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: [{ id: eventId, type: 'intervention.create', timestamp: new Date().toISOString(), body: body(marker, over) }] } });
  expect(r.status).toBe(207);
  expect(r.body.successes).toEqual([expected === 'created' ? { id: eventId, status: 201, result: 'created' } : { id: eventId, status: 200, result: 'duplicate' }]);
}

/** The id of the one intervention of agent `marker`, once the read model has it. */
async function idOf(p: BootedPlatform, marker: string): Promise<string> {
  const page = await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${marker}`, { key: p.readKey });
    return r.body.total === 1 ? r.body : null;
  });
  return page.interventions[0].id;
}

const detail = async (p: BootedPlatform, id: string) => (await call(p, 'GET', `/api/v1/interventions/${id}`, { key: p.readKey })).body;

/** The detail once enrichment has ended (`enriched` or `failed`). */
const settled = (p: BootedPlatform, id: string, timeoutMs = 15_000) =>
  eventually(async () => {
    const d = await detail(p, id);
    return d.enrichment_status === 'enriched' || d.enrichment_status === 'failed' ? d : null;
  }, timeoutMs);

const count = (types: string[], type: string) => types.filter((t) => t === type).length;

describeModes(
  'LLM enrichment',
  (platform, mode) => {
    it('enriches an ingested intervention within seconds and keeps the originals on the audit trail', async () => {
      const p = platform();
      const m = uniq();
      const answer = { reason: 'The agent tried to delete a database table, which this policy forbids.', agent_intent: 'Tidy up old data in the database.', risk_level: 'high', suggested_rewrite: 'Archive the old rows instead.' };
      fake.script(m, reply.ok(answer));
      await ingest(p, m, { type: 'pii_blocked', context: { guardrail_schema_version: 1, guardrail: 'pii', matches: [{ category: 'email', field_path: 'args.to', matched_text: 'jo****om' }], categories: ['email'], fields: ['args.to'] } });
      const id = await idOf(p, m);
      const d = await settled(p, id, 10_000);

      expect(d).toMatchObject({ enrichment_status: 'enriched', reason: answer.reason, agent_intent: answer.agent_intent, risk_level: 'high', remediation_payload: { suggested_rewrite: answer.suggested_rewrite } });
      const entry = d.audit_trail.at(-1);
      expect(entry).toMatchObject({
        event: 'InterventionEnriched',
        actor: ACTOR,
        at: expect.stringMatching(/Z$/),
        changes: {
          reason: { from: 'DENY: sql.drop matched rule R17', to: answer.reason },
          agent_intent: { from: 'db_cleanup_v2', to: answer.agent_intent },
          risk_level: { from: 'critical', to: 'high' },
          suggested_rewrite: { from: 'use TRUNCATE w/ backup', to: answer.suggested_rewrite },
        },
        details: { model: MODEL, prompt_version: 'enrich-v1' },
      });
      expect(d.audit_trail[0]).toMatchObject({ event: 'InterventionRecorded', changes: expect.objectContaining({ reason: { from: null, to: 'DENY: sql.drop matched rule R17' } }) });

      // One request, as the chat-completions protocol has it, holding the record, its policy and guardrail context.
      const calls = fake.callsFor(m);
      expect(calls).toHaveLength(1);
      expect(calls[0].authorization).toBe('Bearer test-key');
      expect(calls[0].body).toMatchObject({ model: MODEL, response_format: { type: 'json_object' } });
      expect(calls[0].text).toContain('DENY: sql.drop matched rule R17');
      expect(calls[0].text).toContain('No destructive SQL');
      expect(calls[0].text).toContain('"guardrail": "pii"');

      // The list read model and the risk filter see the enriched risk level.
      const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${m}&risk_level=high`, { key: p.readKey });
      expect(list.body.total).toBe(1);
      expect(await p.streamEventTypes(`intervention-${id}`)).toEqual(['InterventionRecorded', 'InterventionEnriched']);

      if (mode === 'embedded') {
        const metrics = (await call(p, 'GET', '/metrics', { key: p.adminKey })).body as string;
        expect(metrics).toMatch(/^agp_enrichment_enriched_total [1-9]/m);
        expect(metrics).toMatch(/^agp_enrichment_provider_latency_seconds_count\{status="200"\} [1-9]/m);
        expect(metrics).toMatch(/^agp_enrichment_queue_pending \d/m);
        expect(metrics).toMatch(/^agp_enrichment_queue_oldest_seconds \d/m);
      }
    });

    it('enriches a record created with POST /api/v1/interventions too', async () => {
      const p = platform();
      const m = uniq();
      const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: body(m) });
      expect(r.status).toBe(201);
      const d = await settled(p, r.body.id);
      expect(d).toMatchObject({ enrichment_status: 'enriched', reason: DEFAULT_ANSWER.reason });
      expect(fake.callsFor(m)).toHaveLength(1);
    });

    it('asks again after an answer that is not JSON, counting it as an attempt', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.invalidJson(), reply.ok(DEFAULT_ANSWER));
      await ingest(p, m);
      const d = await settled(p, await idOf(p, m));
      expect(d).toMatchObject({ enrichment_status: 'enriched', reason: DEFAULT_ANSWER.reason });
      expect(fake.callsFor(m)).toHaveLength(2);
      expect(count(d.audit_trail.map((e: { event: string }) => e.event), 'InterventionEnriched')).toBe(1);
    });

    it('marks enrichment failed when every answer is invalid, keeping the original values', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.invalidJson(), reply.ok({ reason: '' }), reply.ok('[1, 2, 3]'));
      await ingest(p, m);
      const id = await idOf(p, m);
      const d = await settled(p, id);
      expect(d).toMatchObject({ enrichment_status: 'failed', reason: 'DENY: sql.drop matched rule R17', risk_level: 'critical', agent_intent: 'db_cleanup_v2' });
      expect(d.audit_trail.at(-1)).toMatchObject({ event: 'InterventionEnrichmentFailed', actor: ACTOR, changes: {}, details: { attempts: 3, prompt_version: 'enrich-v1', error: expect.stringMatching(/schema|JSON/) } });
      expect(fake.callsFor(m)).toHaveLength(3);
    });

    it('keeps the original risk level when the model answers one outside the five values, applying the other fields', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.ok({ ...DEFAULT_ANSWER, risk_level: 'catastrophic' }));
      await ingest(p, m);
      const d = await settled(p, await idOf(p, m));
      expect(d).toMatchObject({ enrichment_status: 'enriched', risk_level: 'critical', reason: DEFAULT_ANSWER.reason, agent_intent: DEFAULT_ANSWER.agent_intent });
      const entry = d.audit_trail.at(-1);
      expect(entry.changes.risk_level).toBeUndefined();
      expect(entry.details.rejected).toEqual([{ field: 'risk_level', value: 'catastrophic', reason: expect.stringMatching(/critical, high, medium, low, minimal/) }]);
      expect(fake.callsFor(m)).toHaveLength(1);
    });

    it('waits as Retry-After says after a 429, then enriches', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.status(429, 1), reply.ok(DEFAULT_ANSWER));
      await ingest(p, m);
      const d = await settled(p, await idOf(p, m));
      expect(d.enrichment_status).toBe('enriched');
      const calls = fake.callsFor(m);
      expect(calls).toHaveLength(2);
      expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(950);
    });

    it('retries a 5xx and enriches when the provider recovers', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.status(503), reply.ok(DEFAULT_ANSWER));
      await ingest(p, m);
      const d = await settled(p, await idOf(p, m));
      expect(d).toMatchObject({ enrichment_status: 'enriched', reason: DEFAULT_ANSWER.reason });
      expect(fake.callsFor(m)).toHaveLength(2);
    });

    it('gives up after the maximum attempts on a permanent failure, appends InterventionEnrichmentFailed and moves on', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.status(500), reply.status(500), reply.status(500), reply.status(500));
      await ingest(p, m);
      const id = await idOf(p, m);
      const d = await settled(p, id);
      expect(d).toMatchObject({ enrichment_status: 'failed', reason: 'DENY: sql.drop matched rule R17', risk_level: 'critical' });
      expect(d.audit_trail.at(-1)).toMatchObject({ event: 'InterventionEnrichmentFailed', actor: ACTOR, details: { attempts: 3, error: expect.stringMatching(/500/) } });
      expect(fake.callsFor(m)).toHaveLength(3);
      expect(await p.streamEventTypes(`intervention-${id}`)).toEqual(['InterventionRecorded', 'InterventionEnrichmentFailed']);
      // The worker moved on: the next record is enriched.
      const next = uniq();
      await ingest(p, next);
      expect((await settled(p, await idOf(p, next))).enrichment_status).toBe('enriched');
    });

    it('does not retry a 400 from the provider', async () => {
      const p = platform();
      const m = uniq();
      fake.script(m, reply.status(400));
      await ingest(p, m);
      const d = await settled(p, await idOf(p, m));
      expect(d.enrichment_status).toBe('failed');
      expect(d.audit_trail.at(-1).details).toMatchObject({ attempts: 1, error: expect.stringMatching(/400/) });
      expect(fake.callsFor(m)).toHaveLength(1);
    });

    it('enriches a redelivered ingest event once', async () => {
      const p = platform();
      const m = uniq();
      await ingest(p, m, {}, `ev-${m}`);
      const id = await idOf(p, m);
      await settled(p, id);
      // Stored already: answered duplicate (docs/ingest.md, Ingest answers), and never enriched again.
      await ingest(p, m, {}, `ev-${m}`, 'duplicate');
      await ingest(p, m, {}, `ev-${m}`, 'duplicate');
      // Give the platform time to (wrongly) act on the repeats: the next record enriched proves the pipeline moved past them.
      const after = uniq();
      await ingest(p, after);
      await settled(p, await idOf(p, after));
      expect(await p.streamEventTypes(`intervention-${id}`)).toEqual(['InterventionRecorded', 'InterventionEnriched']);
      expect(fake.callsFor(m)).toHaveLength(1);
    });

    it('re-runs enrichment on demand with POST /api/v1/interventions/{id}/enrich', async () => {
      const p = platform();
      const m = uniq();
      const second = { ...DEFAULT_ANSWER, reason: 'Second opinion: deleting tables is forbidden.' };
      fake.script(m, reply.ok(DEFAULT_ANSWER), reply.ok(second));
      await ingest(p, m);
      const id = await idOf(p, m);
      await settled(p, id);
      const r = await call(p, 'POST', `/api/v1/interventions/${id}/enrich`, { key: p.writeKey });
      expect(r.status).toBe(202);
      expect(r.body).toEqual({ id, enrichment_status: 'pending' });
      const d = await eventually(async () => {
        const x = await detail(p, id);
        return x.reason === second.reason && x.enrichment_status === 'enriched' ? x : null;
      });
      expect(d.audit_trail.at(-1)).toMatchObject({ event: 'InterventionEnriched', actor: ACTOR, changes: { reason: { from: DEFAULT_ANSWER.reason, to: second.reason } } });
      expect(fake.callsFor(m)).toHaveLength(2);
      // The re-run prompts with the values as recorded, not the earlier rewrite.
      expect(fake.callsFor(m)[1].text).toContain('DENY: sql.drop matched rule R17');
    });

    it('answers 404 to POST .../enrich for an unknown id', async () => {
      const p = platform();
      const r = await call(p, 'POST', '/api/v1/interventions/0190aaaa-0000-7000-8000-000000000000/enrich', { key: p.writeKey });
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it("answers 404 to POST .../enrich for another organisation's record", async () => {
      const p = platform();
      const m = uniq();
      await ingest(p, m);
      const id = await idOf(p, m);
      const r = await call(p, 'POST', `/api/v1/interventions/${id}/enrich`, { key: p.otherOrgWriteKey });
      expect(r.status).toBe(404);
    });

    it('refuses POST .../enrich with a read key (403)', async () => {
      const p = platform();
      const m = uniq();
      await ingest(p, m);
      const id = await idOf(p, m);
      const r = await call(p, 'POST', `/api/v1/interventions/${id}/enrich`, { key: p.readKey });
      expect(r.status).toBe(403);
    });

    it('keeps at most AGP_ENRICHMENT_CONCURRENCY (default 4) provider calls in flight during a burst', async () => {
      const p = platform();
      const burst = uniq();
      const markers = Array.from({ length: 7 }, (_, i) => `${burst}x${i}`);
      for (const m of markers) fake.script(m, reply.stall(1200, reply.ok(DEFAULT_ANSWER)));
      const r = await call(p, 'POST', '/api/v1/ingest/', {
        key: p.writeKey,
        body: { batch: markers.map((m) => ({ id: `ev-${m}`, type: 'intervention.create', timestamp: new Date().toISOString(), body: body(m) })) },
      });
      expect(r.status).toBe(207);
      let most = 0;
      while (fake.callsFor(burst).length < markers.length || fake.inFlight(burst) > 0) {
        most = Math.max(most, fake.inFlight(burst));
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(most).toBe(4);
      for (const m of markers) expect((await settled(p, await idOf(p, m))).enrichment_status).toBe('enriched');
    });

    it('answers ingest while the provider stalls for 5 s, without waiting for it', async () => {
      const p = platform();
      const slow = uniq();
      fake.script(slow, reply.stall(5000, reply.ok(DEFAULT_ANSWER)));
      await ingest(p, slow);
      await eventually(async () => fake.inFlight(slow) === 1);
      // Five more requests, each answered 207 while the stalled call is still in flight: ingest does not wait for
      // the provider (speed itself is the benchmarks' business, not a test's).
      for (let i = 0; i < 5; i++) {
        await ingest(p, uniq()); // asserts the 207 and `created`
        expect(fake.inFlight(slow)).toBe(1);
      }
      const d = await settled(p, await idOf(p, slow), 15_000);
      expect(d.enrichment_status).toBe('enriched');
    });
  },
  () => ({ env: llmEnv() }),
);

describeModes(
  'LLM enrichment without a key',
  (platform) => {
    it('calls nothing, appends nothing and reports enrichment_status skipped', async () => {
      const p = platform();
      const m = uniq();
      await ingest(p, m);
      const created = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: body(`${m}-api`) });
      expect(created.status).toBe(201);
      const id = await idOf(p, m);
      // Long enough for a worker (were one running) to have called the provider.
      await new Promise((r) => setTimeout(r, 1500));
      for (const rid of [id, created.body.id]) {
        const d = await detail(p, rid);
        expect(d).toMatchObject({ enrichment_status: 'skipped', reason: 'DENY: sql.drop matched rule R17', risk_level: 'critical' });
        expect(d.audit_trail).toHaveLength(1);
        expect(await p.streamEventTypes(`intervention-${rid}`)).toEqual(['InterventionRecorded']);
      }
      expect(fake.callsFor(m)).toHaveLength(0);
    });

    it('answers 409 to POST .../enrich, saying enrichment is off', async () => {
      const p = platform();
      const m = uniq();
      await ingest(p, m);
      const id = await idOf(p, m);
      const r = await call(p, 'POST', `/api/v1/interventions/${id}/enrich`, { key: p.writeKey });
      expect(r.status).toBe(409);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body.detail).toMatch(/AGP_LLM_API_KEY/);
      expect(await p.streamEventTypes(`intervention-${id}`)).toEqual(['InterventionRecorded']);
      expect(fake.callsFor(m)).toHaveLength(0);
    });
  },
  // The base URL is set (so a stray call would reach the fake and be counted); only the key is missing.
  () => ({ env: { AGP_LLM_BASE_URL: fake.url, AGP_LLM_MODEL: MODEL } }),
);

describe('LLM enrichment on its own embedded platform (replay, timeouts)', () => {
  let p: EmbeddedPlatform;
  const keys = { writeKey: 'agp_test_write_key_0001', readKey: 'agp_test_read_key_0001', adminKey: 'agp_test_admin_key_001' };
  beforeAll(async () => {
    p = await startEmbedded({ port: 0, host: '127.0.0.1', dataDir: 'memory', initOrg: 'acme', initWriteKey: keys.writeKey, initReadKey: keys.readKey, initAdminKey: keys.adminKey, env: { ...llmEnv(), AGP_LLM_TIMEOUT_MS: '1500' } });
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('never enriches twice when the enrichment subscription replays InterventionRecorded from the start', async () => {
    const bp = { url: p.url, ...keys } as BootedPlatform;
    const m = uniq();
    await ingest(bp, m);
    const id = await idOf(bp, m);
    await settled(bp, id);
    const skippedBefore = skippedTotal(await call(bp, 'GET', '/metrics', { key: keys.adminKey }));

    // Replay: reset the checkpoint, then move the log so the subscription notices and reads from 0 again.
    await p.sql.query(`UPDATE agp_checkpoints SET position = 0 WHERE name = 'interventions-enrichment'`);
    const next = uniq();
    await ingest(bp, next);
    await settled(bp, await idOf(bp, next));
    // The replayed job was queued and finished without a provider call (the stream already had InterventionEnriched).
    await eventually(async () => skippedTotal(await call(bp, 'GET', '/metrics', { key: keys.adminKey })) > skippedBefore);
    await eventually(async () => (await p.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM agp_enrichment_jobs')).rows[0].n === 0);

    const { rows } = await p.sql.query<{ event_type: string }>('SELECT event_type FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [`intervention-${id}`]);
    expect(rows.map((r) => r.event_type)).toEqual(['InterventionRecorded', 'InterventionEnriched']);
    expect(fake.callsFor(m)).toHaveLength(1);
  });
  it('retries a provider call that times out (AGP_LLM_TIMEOUT_MS) and enriches with the next answer', async () => {
    const bp = { url: p.url, ...keys } as BootedPlatform;
    const m = uniq();
    fake.script(m, reply.stall(3000, reply.ok({ ...DEFAULT_ANSWER, reason: 'too late' })), reply.ok(DEFAULT_ANSWER));
    await ingest(bp, m);
    const d = await settled(bp, await idOf(bp, m));
    expect(d).toMatchObject({ enrichment_status: 'enriched', reason: DEFAULT_ANSWER.reason });
    const calls = fake.callsFor(m);
    expect(calls).toHaveLength(2);
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(1500);
  });
});

function skippedTotal(r: { body: unknown }): number {
  const match = /^agp_enrichment_skipped_total (\d+)/m.exec(String(r.body));
  return match ? Number(match[1]) : 0;
}

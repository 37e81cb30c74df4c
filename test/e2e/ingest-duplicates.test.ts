import { expect, it } from 'vitest';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * docs/ingest.md (Ingest answers): the 207 answer of `POST /api/v1/ingest/` tells a stored event from a duplicate. Each success is
 * `{id, status: 201, result: "created"}` the first time and `{id, status: 200, result: "duplicate"}` once the id is
 * stored (or the id came earlier in the batch). Driven over
 * the real HTTP API in both run modes.
 */
describeModes('ingest: created and duplicate answers', (platform) => {
  const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const at = new Date().toISOString();
  const intervention = (id: string, run: string, over: Record<string, unknown> = {}) => ({
    id,
    type: 'intervention.create',
    timestamp: at,
    body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: 'dup-agent', run_id: run, ...over },
  });
  const ingest = async (batch: unknown[]) => {
    const r = await call(platform(), 'POST', '/api/v1/ingest/', { key: platform().writeKey, body: { batch } });
    expect(r.status).toBe(207);
    return r.body as { successes: Array<{ id: string; status: number; result: string }>; errors: unknown[] };
  };
  const get = (path: string) => call(platform(), 'GET', path, { key: platform().readKey });
  const interventionsOf = async (run: string) => (await get(`/api/v1/interventions?run_id=${run}&limit=1`)).body.total as number;
  const created = (id: string) => ({ id, status: 201, result: 'created' });
  const duplicate = (id: string) => ({ id, status: 200, result: 'duplicate' });

  it('answers a batch created, and the same batch re-sent after it is stored duplicate, event by event', async () => {
    const u = uniq();
    const [run, ledgerRun, agent] = [`run-${u}`, `run-l-${u}`, `agent-${u}`];
    const batch = [
      intervention(`${u}-1`, run),
      { id: `${u}-2`, type: 'agent.register', timestamp: at, body: { agent_id: agent, name: 'dup test', actions: [{ name: 'search', risk_level: 'low' }] } },
      { id: `${u}-3`, type: 'run.start', timestamp: at, body: { run_id: ledgerRun, agent_id: agent, started_at: at } },
      { id: `${u}-4`, type: 'action.record', timestamp: at, body: { run_id: ledgerRun, agent_id: agent, action_name: 'search', status: 'success', cost_usd: 0.01, timestamp: at } },
      intervention(`${u}-5`, run, { type: 'warning', outcome: 'warned' }),
    ];
    const first = await ingest(batch);
    expect(first).toEqual({ successes: batch.map((e) => created(e.id)), errors: [] });

    // Poll until every consumer has stored its events.
    await eventually(async () => (await interventionsOf(run)) === 2, 20_000);
    await eventually(async () => (await get(`/api/v1/agents/${agent}`)).status === 200, 20_000);
    await eventually(async () => (await get(`/api/v1/runs/${ledgerRun}`)).body?.actions?.length === 1, 20_000);

    const again = await ingest(batch);
    expect(again).toEqual({ successes: batch.map((e) => duplicate(e.id)), errors: [] });
    await new Promise((r) => setTimeout(r, 300));
    expect(await interventionsOf(run)).toBe(2);
    expect((await get(`/api/v1/runs/${ledgerRun}`)).body.actions).toHaveLength(1);
  });

  it('answers a mixed batch per event: the stored ids duplicate, the new ones created, in batch order', async () => {
    const u = uniq();
    const run = `run-${u}`;
    const old = [intervention(`${u}-a`, run), intervention(`${u}-b`, run)];
    expect((await ingest(old)).successes).toEqual(old.map((e) => created(e.id)));
    await eventually(async () => (await interventionsOf(run)) === 2, 20_000);

    const mixed = [old[0], intervention(`${u}-c`, run), { id: `${u}-bad`, type: 'intervention.create', timestamp: 'nope', body: {} }, old[1], intervention(`${u}-d`, run)];
    const r = await ingest(mixed);
    expect(r.successes).toEqual([duplicate(`${u}-a`), created(`${u}-c`), duplicate(`${u}-b`), created(`${u}-d`)]);
    expect(r.errors).toEqual([{ id: `${u}-bad`, status: 422, message: expect.stringContaining('timestamp') }]);
    await eventually(async () => (await interventionsOf(run)) === 4, 20_000);
  });

  it('answers the second occurrence of an id in one batch duplicate, also across the chunks of a large batch, and stores it once', async () => {
    const u = uniq();
    const run = `run-${u}`;
    const r = await ingest([intervention(`${u}-x`, run), intervention(`${u}-y`, run), intervention(`${u}-x`, run, { type: 'warning', outcome: 'warned' })]);
    expect(r.successes).toEqual([created(`${u}-x`), created(`${u}-y`), duplicate(`${u}-x`)]);

    // Two events of 300 KB do not fit one 512 KiB chunk: the gateway sends them to the ingest service apart.
    const bigRun = `run-big-${u}`;
    const pad = { pad: 'x'.repeat(300_000) };
    const big = await ingest([intervention(`${u}-big`, bigRun, { original_inputs: pad }), intervention(`${u}-big`, bigRun, { original_inputs: pad })]);
    expect(big.successes).toEqual([created(`${u}-big`), duplicate(`${u}-big`)]);

    await eventually(async () => (await interventionsOf(run)) === 2 && (await interventionsOf(bigRun)) === 1, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await interventionsOf(run)).toBe(2);
    expect(await interventionsOf(bigRun)).toBe(1);
    expect((await get(`/api/v1/interventions?run_id=${run}&type=warning`)).body.total).toBe(0);
  });

  it('never answers an event re-sent at once anything but created or duplicate, and stores it once', async () => {
    const u = uniq();
    const run = `run-${u}`;
    const batch = Array.from({ length: 20 }, (_, i) => intervention(`${u}-${i}`, run));
    const [a, b] = await Promise.all([ingest(batch), ingest(batch)]);
    for (const answer of [a, b]) {
      expect(answer.errors).toEqual([]);
      expect(answer.successes.map((s) => s.id)).toEqual(batch.map((e) => e.id));
      for (const s of answer.successes) expect([created(s.id), duplicate(s.id)]).toContainEqual(s);
    }
    await eventually(async () => (await interventionsOf(run)) === 20, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await interventionsOf(run)).toBe(20);
  });
});

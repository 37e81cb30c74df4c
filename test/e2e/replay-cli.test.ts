import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT, buildCliAndBootEmbedded, runCli as agp } from '../support/cli.js';
import { call, eventually, type BootedPlatform } from '../support/http.js';

/**
 * `agp replay` as a user runs it: the built CLI (`node packages/cli/dist/cli.js replay …`) as a child process with
 * the example handler module (examples/replay-handlers.mjs) against the embedded platform. One matching action, one
 * differing, one non-deterministic → exit 1 and a `partial` submission with 1 divergence in the run's history; a
 * tampered bundle (served by a local proxy that alters one output) → exit 3, "bundle hash mismatch", nothing submitted.
 * Source: docs/replay.md (`agp replay`).
 */
const HANDLERS = join(ROOT, 'examples/replay-handlers.mjs');
const uniq = () => Math.random().toString(36).slice(2, 10);

/** A proxy to `target` that alters the first action's outputs in bundles (keeping sha256 and ETag) and counts POSTs. */
async function tamperingProxy(target: string): Promise<{ url: string; posts: number; close: () => Promise<void> }> {
  const state = { posts: 0 };
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'POST') state.posts++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    const upstream = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let text = await upstream.text();
    if (req.url?.endsWith('/bundle') && upstream.ok) {
      const doc = JSON.parse(text);
      doc.actions[0].outputs = { sum: 4 };
      text = JSON.stringify(doc);
    }
    const out: Record<string, string> = { 'content-type': upstream.headers.get('content-type') ?? 'application/json' };
    const etag = upstream.headers.get('etag');
    if (etag) out.etag = etag;
    res.writeHead(upstream.status, out).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get posts() {
      return state.posts;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Ingest a run with three actions: add (matches the example handler), uppercase (differs), current_time (non-deterministic). */
async function recordRun(p: BootedPlatform): Promise<string> {
  const run = `run-${uniq()}`;
  const agent = `agent-${uniq()}`;
  const t0 = Date.now() - 60_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const ev = (type: string, body: Record<string, unknown>) => ({ id: `ev-${uniq()}`, type, timestamp: at(0), body });
  const act = (s: number, name: string, inputs: unknown, outputs: unknown, cost: Record<string, number>) => ev('action.record', { run_id: run, agent_id: agent, action_name: name, status: 'success', timestamp: at(s), duration_ms: 5, inputs, outputs, ...cost });
  const batch = [
    ev('run.start', { run_id: run, agent_id: agent, name: 'replay-cli', started_at: at(0) }),
    act(1, 'add', { a: 1, b: 2 }, { sum: 3 }, { cost_usd: 0.25, actual_cost_usd: 0.3 }),
    act(2, 'uppercase', { text: 'hi' }, { text: 'HI!' }, { cost_usd: 0.2 }),
    act(3, 'current_time', {}, { now: '2026-01-01T00:00:00.000Z' }, { cost_usd: 5 }),
    ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: at(4) }),
  ];
  const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch } });
  expect(r.status).toBe(207);
  expect(r.body.errors).toEqual([]);
  await eventually(async () => {
    const g = await call(p, 'GET', `/api/v1/runs/${run}`, { key: p.readKey });
    return g.status === 200 && g.body.status === 'completed' && g.body.action_count === 3;
  });
  return run;
}

describe('agp replay: the built CLI against the embedded platform', () => {
  let p: BootedPlatform;
  const history = (run: string) => call(p, 'GET', `/api/v1/replay/history/${run}`, { key: p.readKey });

  beforeAll(async () => {
    p = await buildCliAndBootEmbedded();
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('replays with the example handlers: 1 match, 1 divergence, 1 non-deterministic skipped → exit 1, submitted (partial, 1 divergence)', async () => {
    const run = await recordRun(p);
    const r = await agp(['replay', run, '--url', p.url, '--key', p.writeKey, '--handlers', HANDLERS, '--submission-id', `sub-${run}`]);
    expect(r.code, r.err + r.out).toBe(1);
    expect(r.err).toContain('verified');
    // Steps are numbered from 0 in the progress and in the summary alike.
    expect(r.err).toContain('3 actions: steps 0–2');
    expect(r.err).toMatch(/step 0 add: match/);
    expect(r.err).toMatch(/step 1 uppercase: DIVERGED/);
    expect(r.err).toMatch(/step 2 current_time: skipped \(non-deterministic\)/);
    expect(r.out).toMatch(/step 1 uppercase: expected/);
    expect(r.out).toContain(`replay of run ${run}: partial`);
    expect(r.out).toContain(`submitted: sub-${run}`);
    const h = await eventually(async () => {
      const x = await history(run);
      return x.status === 200 && x.body.total === 1 ? x : null;
    });
    expect(h.body.submissions[0]).toMatchObject({ id: `sub-${run}`, run_id: run, actions_replayed: 2, divergences: 1, status: 'partial', divergence_details_count: 1 });
    expect(h.body.submissions[0].cost_savings).toBeCloseTo(0.5, 9);
    expect(h.body.submissions[0].client_version).toMatch(/^agp-cli\//);

    // --dry-run replays but submits nothing; --json prints the result with the detail.
    const dry = await agp(['replay', run, '--url', p.url, '--key', p.readKey, '--handlers', HANDLERS, '--dry-run', '--json']);
    expect(dry.code, dry.err).toBe(1);
    const json = JSON.parse(dry.out);
    expect(json).toMatchObject({ run_id: run, actions_replayed: 2, divergences: 1, status: 'partial', submission: null });
    expect(json.divergence_details).toEqual([{ step: 1, action_name: 'uppercase', expected: { text: 'HI!' }, actual: { text: 'HI' } }]);
    expect((await history(run)).body.total).toBe(1);
  }, 60_000);

  it('refuses a tampered bundle: exit 3, "bundle hash mismatch", nothing submitted', async () => {
    const run = await recordRun(p);
    const proxy = await tamperingProxy(p.url);
    try {
      const r = await agp(['replay', run, '--url', proxy.url, '--key', p.writeKey, '--handlers', HANDLERS]);
      expect(r.code, r.err + r.out).toBe(3);
      expect(r.err).toContain('bundle hash mismatch');
      expect(proxy.posts).toBe(0);
    } finally {
      await proxy.close();
    }
    const h = await history(run);
    expect(h.status).toBe(200);
    expect(h.body.total).toBe(0);
  }, 60_000);

  it('usage errors exit 3: unknown run (404), unloadable handler module, missing key', async () => {
    const missing = await agp(['replay', `never-${uniq()}`, '--url', p.url, '--key', p.readKey, '--handlers', HANDLERS]);
    expect(missing.code, missing.err).toBe(3);
    const badModule = await agp(['replay', 'x', '--url', p.url, '--key', p.readKey, '--handlers', join(ROOT, 'no-such-handlers.mjs')]);
    expect(badModule.code).toBe(3);
    expect(badModule.err).toContain('cannot load --handlers');
    const noKey = await agp(['replay', 'x', '--url', p.url, '--handlers', HANDLERS]);
    expect(noKey.code).toBe(3);
    expect(noKey.err).toContain('missing API key');
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERVENTION_OUTCOMES, INTERVENTION_TYPES } from '@agp/contracts';
import { call, eventually, type BootedPlatform } from '../support/http.js';

const uniq = () => Math.random().toString(36).slice(2, 10);

const base = (over: Record<string, unknown> = {}) => ({
  type: 'hard_block',
  outcome: 'blocked',
  action_name: 'delete_records',
  agent_id: 'agent-a',
  ...over,
});

/**
 * The user-facing behaviour of the interventions and ingest APIs, driven over real HTTP. Runs against
 * every run mode (embedded; distributed processes on real NATS and PostgreSQL).
 */
export function platformScenarios(mode: string, boot: () => Promise<BootedPlatform>) {
  describe(`platform over HTTP (${mode})`, () => {
    let p: BootedPlatform;
    beforeAll(async () => {
      p = await boot();
    }, 120_000);
    afterAll(async () => {
      await p?.stop();
    });

    const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
      expect(r.status).toBe(status);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
    };

    describe('POST /api/v1/interventions', () => {
      it('creates a record, answers 201 with it, and GET returns it with its audit trail', async () => {
        const agent = `agent-${uniq()}`;
        const r = await call(p, 'POST', '/api/v1/interventions', {
          key: p.writeKey,
          body: base({ agent_id: agent, estimated_cost_usd: 42.5, risk_level: 'critical', reason: 'denied action', run_id: 'run-1', policy_id: 'pol-1', original_inputs: { table: 'users' } }),
        });
        expect(r.status).toBe(201);
        expect(r.body).toMatchObject({ type: 'hard_block', outcome: 'blocked', agent_id: agent, cost_prevented_usd: 42.5, organization_id: expect.any(String), modified_inputs: null, remediation_payload: { suggested_rewrite: null } });
        expect(r.headers.get('location')).toBe(`/api/v1/interventions/${r.body.id}`);
        const got = await call(p, 'GET', `/api/v1/interventions/${r.body.id}`, { key: p.readKey });
        expect(got.status).toBe(200);
        expect(got.body).toMatchObject({ id: r.body.id, reason: 'denied action', original_inputs: { table: 'users' } });
        expect(got.body.audit_trail).toEqual([
          expect.objectContaining({ event: 'InterventionRecorded', actor: expect.stringMatching(/^key:/), changes: expect.objectContaining({ outcome: { from: null, to: 'blocked' } }) }),
        ]);
        const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey });
        expect(list.body).toMatchObject({ total: 1, skip: 0, limit: 50 });
        expect(list.body.interventions[0].id).toBe(r.body.id);
      });

      it('accepts all ten types, with a guardrail context whose matched text is masked', async () => {
        const agent = `agent-${uniq()}`;
        for (const type of INTERVENTION_TYPES) {
          const r = await call(p, 'POST', '/api/v1/interventions/', { key: p.writeKey, body: base({ type, agent_id: agent }) });
          expect(r.status, type).toBe(201);
        }
        const pii = await call(p, 'POST', '/api/v1/interventions', {
          key: p.writeKey,
          body: base({
            type: 'pii_blocked',
            agent_id: agent,
            context: { guardrail_schema_version: 1, guardrail: 'pii', matches: [{ category: 'email', field_path: 'args.to', matched_text: 'jane@example.com' }], categories: ['email'], fields: ['args.to'] },
          }),
        });
        expect(pii.status).toBe(201);
        expect(pii.body.context.matches[0].matched_text).toBe('ja************om');
        const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}&limit=1000`, { key: p.readKey });
        expect(list.body.total).toBe(11);
      });

      it('rejects an invalid body with 422 naming every bad field and writes nothing', async () => {
        const agent = `agent-${uniq()}`;
        const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'nuke', outcome: 'blocked', agent_id: agent, colour: 'red' } });
        expectProblem(r, 422);
        const paths = r.body.errors.map((e: any) => e.path);
        expect(paths).toEqual(expect.arrayContaining(['body.type', 'body.action_name', 'body.colour']));
        expect(r.body.errors.find((e: any) => e.path === 'body.type').allowed).toEqual([...INTERVENTION_TYPES]);
        const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey });
        expect(list.body.total).toBe(0);
      });

      it('rejects a context on a non-guardrail type and a mismatched discriminator', async () => {
        const ctx = { guardrail_schema_version: 1, guardrail: 'loop', action_name: 'x', arguments_hash: 'h', repeat_count: 5, threshold: 3, window_seconds: 60 };
        expectProblem(await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ context: ctx }) }), 422);
        expectProblem(await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ type: 'pii_blocked', context: ctx }) }), 422);
      });
    });

    describe('GET /api/v1/interventions filters', () => {
      const agent = `agent-${uniq()}`;
      const ids: string[] = [];
      beforeAll(async () => {
        const rows = [
          { type: 'hard_block', outcome: 'blocked', action_name: 'transfer_funds', risk_level: 'critical', run_id: 'r1', policy_id: 'p1', timestamp: '2026-01-01T10:00:00Z' },
          { type: 'warning', outcome: 'warned', action_name: 'send_email', risk_level: 'low', run_id: 'r1', policy_id: 'p2', timestamp: '2026-01-02T10:00:00Z' },
          { type: 'rate_limited', outcome: 'blocked', action_name: 'send_email', risk_level: 'medium', run_id: 'r2', policy_id: 'p2', timestamp: '2026-01-03T10:00:00Z' },
          { type: 'downgrade', outcome: 'modified', action_name: 'deploy', risk_level: 'high', run_id: 'r2', policy_id: 'p1', timestamp: '2026-01-04T10:00:00Z', modified_inputs: { replicas: 1 } },
          { type: 'approval_required', outcome: 'escalated', action_name: 'deploy', risk_level: 'high', run_id: 'r3', policy_id: 'p3', timestamp: '2026-01-05T10:00:00Z' },
        ];
        for (const row of rows) {
          const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { ...row, agent_id: agent } });
          expect(r.status).toBe(201);
          ids.push(r.body.id);
        }
      });
      const q = async (query: string) => {
        const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}&${query}`, { key: p.readKey });
        expect(r.status, query).toBe(200);
        return r.body as { interventions: Array<{ id: string; timestamp: string }>; total: number; skip: number; limit: number };
      };
      it('orders newest first and filters by each field', async () => {
        const all = await q('');
        expect(all.interventions.map((i) => i.id)).toEqual([...ids].reverse());
        expect((await q('type=warning')).total).toBe(1);
        expect((await q('outcome=blocked')).total).toBe(2);
        expect((await q('action_name=send_email')).total).toBe(2);
        expect((await q('run_id=r2')).total).toBe(2);
        expect((await q('policy_id=p1')).total).toBe(2);
        expect((await q('risk_level=high')).total).toBe(2);
      });
      it('composes filters with AND and comma lists with OR', async () => {
        expect((await q('outcome=blocked&action_name=send_email')).total).toBe(1);
        expect((await q('type=warning,downgrade')).total).toBe(2);
        expect((await q('risk_level=high,critical&policy_id=p1')).total).toBe(2);
      });
      it('filters by date range, end date inclusive of its day', async () => {
        expect((await q('start_date=2026-01-02&end_date=2026-01-04')).total).toBe(3);
        expect((await q('start_date=2026-01-04T00:00:00Z')).total).toBe(2);
        expect((await q('end_date=2026-01-01')).total).toBe(1);
      });
      it('paginates with skip and limit and reports the total', async () => {
        const page = await q('skip=1&limit=2');
        expect(page).toMatchObject({ total: 5, skip: 1, limit: 2 });
        expect(page.interventions.map((i) => i.id)).toEqual([ids[3], ids[2]]);
      });
      it.each([
        ['type=explode', 'query.type'],
        ['outcome=maybe', 'query.outcome'],
        ['risk_level=extreme', 'query.risk_level'],
        ['limit=1001', 'query.limit'],
        ['limit=0', 'query.limit'],
        ['skip=-1', 'query.skip'],
        ['limit=ten', 'query.limit'],
        ['start_date=yesterday', 'query.start_date'],
        ['end_date=2026-13-45', 'query.end_date'],
        ['colour=red', 'query.colour'],
      ])('rejects %s with 422 naming %s', async (query, path) => {
        const r = await call(p, 'GET', `/api/v1/interventions?${query}`, { key: p.readKey });
        expectProblem(r, 422);
        expect(r.body.errors.map((e: any) => e.path)).toContain(path);
      });
      it('lists the allowed values for a bad enum', async () => {
        const r = await call(p, 'GET', '/api/v1/interventions?outcome=maybe', { key: p.readKey });
        expect(r.body.errors[0].allowed).toEqual([...INTERVENTION_OUTCOMES]);
      });
    });

    describe('GET /api/v1/interventions by cursor', () => {
      const agent = `agent-${uniq()}`;
      const blocks: string[] = [];
      beforeAll(async () => {
        // 11 hard blocks (five share one timestamp: the id breaks the tie) among warnings the filter leaves out.
        for (let i = 0; i < 14; i++) {
          const type = i % 4 === 3 ? 'warning' : 'hard_block';
          const timestamp = `2026-02-0${1 + Math.min(i, 8)}T10:00:00.123456Z`;
          const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ agent_id: agent, type, outcome: type === 'warning' ? 'warned' : 'blocked', timestamp }) });
          expect(r.status).toBe(201);
          if (type === 'hard_block') blocks.push(r.body.id);
        }
      });
      const page = async (query: string) => {
        const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}&type=hard_block&${query}`, { key: p.readKey });
        expect(r.status, query).toBe(200);
        return r.body as { interventions: Array<{ id: string; timestamp: string; type: string }>; total: number; skip: number; limit: number; next_cursor: string | null };
      };
      it('walks a filtered list by next_cursor: every record exactly once, newest first, even while records arrive', async () => {
        const whole = await page('limit=1000');
        expect(whole.next_cursor).toBeNull();
        expect(new Set(whole.interventions.map((i) => i.id))).toEqual(new Set(blocks));
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let n = 0; n < 10; n++) {
          const pg = await page(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
          expect(pg).toMatchObject({ total: blocks.length + (n > 0 ? 1 : 0), skip: 0, limit: 3 });
          expect(pg.interventions.every((i) => i.type === 'hard_block')).toBe(true);
          seen.push(...pg.interventions.map((i) => i.id));
          // A newer record arriving mid-walk shifts every offset by one; the cursor's next page is unmoved by it.
          if (n === 0) expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ agent_id: agent, timestamp: '2026-03-01T00:00:00Z' }) })).status).toBe(201);
          cursor = pg.next_cursor;
          if (!cursor) break;
          expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        }
        expect(seen).toEqual(whole.interventions.map((i) => i.id));
      });
      it('answers next_cursor on a page asked by skip too, and null on the last page', async () => {
        const first = await page('skip=0&limit=2');
        expect(first.next_cursor).toEqual(expect.any(String));
        const next = await page(`limit=2&cursor=${first.next_cursor}`);
        expect(next.interventions.map((i) => i.id)).toEqual((await page('skip=2&limit=2')).interventions.map((i) => i.id));
        const last = await page(`skip=${blocks.length - 1}&limit=5`);
        expect(last.next_cursor).toBeNull();
      });
      it.each([
        ['a cursor with skip', async () => `cursor=${(await page('limit=1')).next_cursor}&skip=0`],
        ['a cursor that is not base64url', async () => 'cursor=not*a*cursor'],
        ['a cursor that is not ours', async () => `cursor=${Buffer.from('{"after":1}').toString('base64url')}`],
        ['a cursor naming no real instant', async () => `cursor=${Buffer.from('["2026-02-31T00:00:00.000000Z","x"]').toString('base64url')}`],
        ['an empty cursor', async () => 'cursor='],
      ])('refuses %s with 400', async (_what, query) => {
        const r = await call(p, 'GET', `/api/v1/interventions?${await query()}`, { key: p.readKey });
        expectProblem(r, 400);
        expect(r.body.detail).toMatch(/query\.cursor/);
      });
    });

    describe('GET /api/v1/interventions/stats', () => {
      it('aggregates by type, outcome, cost, high-risk blocks, day, action and policy', async () => {
        const before = (await call(p, 'GET', '/api/v1/interventions/stats?start_date=2025-03-01&end_date=2025-03-31', { key: p.readKey })).body;
        expect(before.total_interventions).toBe(0);
        const rows = [
          { type: 'hard_block', outcome: 'blocked', action_name: 'wire', risk_level: 'critical', estimated_cost_usd: 100, policy_id: 'pol-x', policy_name: 'X', timestamp: '2025-03-10T01:00:00Z' },
          { type: 'hard_block', outcome: 'blocked', action_name: 'wire', risk_level: 'low', estimated_cost_usd: 10, policy_id: 'pol-x', policy_name: 'X', timestamp: '2025-03-10T02:00:00Z' },
          { type: 'warning', outcome: 'warned', action_name: 'mail', risk_level: 'high', estimated_cost_usd: 5, policy_id: 'pol-y', policy_name: 'Y', timestamp: '2025-03-12T02:00:00Z' },
        ];
        for (const row of rows) expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { ...row, agent_id: 'stats-agent' } })).status).toBe(201);
        const s = (await call(p, 'GET', '/api/v1/interventions/stats?start_date=2025-03-01&end_date=2025-03-31', { key: p.readKey })).body;
        expect(s.total_interventions).toBe(3);
        expect(s.by_type).toMatchObject({ hard_block: 2, warning: 1, pii_blocked: 0 });
        expect(Object.keys(s.by_type)).toHaveLength(10);
        expect(s.by_outcome).toMatchObject({ blocked: 2, warned: 1, escalated: 0 });
        expect(s.cost_prevented_usd).toBe(110);
        expect(s.high_risk_blocks).toBe(1);
        expect(s.time_series).toHaveLength(31);
        expect(s.time_series.find((d: any) => d.date === '2025-03-10')).toEqual({ date: '2025-03-10', interventions: 2, cost_prevented_usd: 110, by_type: { hard_block: 2 } });
        expect(s.time_series.find((d: any) => d.date === '2025-03-11')).toEqual({ date: '2025-03-11', interventions: 0, cost_prevented_usd: 0, by_type: {} });
        expect(s.top_blocked_actions).toEqual([{ action_name: 'wire', count: 2, cost_prevented_usd: 110 }]);
        expect(s.top_triggering_policies).toEqual([
          { policy_id: 'pol-x', policy_name: 'X', count: 2 },
          { policy_id: 'pol-y', policy_name: 'Y', count: 1 },
        ]);
        const later = (await call(p, 'GET', '/api/v1/interventions/stats?start_date=2025-03-11&end_date=2025-03-31', { key: p.readKey })).body;
        expect(later.total_interventions).toBe(1);
      });
      it('defaults to all-time totals and a 30-day series', async () => {
        const s = await call(p, 'GET', '/api/v1/interventions/stats', { key: p.readKey });
        expect(s.status).toBe(200);
        expect(s.body.time_series).toHaveLength(30);
        expect(s.body.total_interventions).toBeGreaterThan(0);
      });
      it('rejects an unparseable start_date with 422', async () => {
        expectProblem(await call(p, 'GET', '/api/v1/interventions/stats?start_date=soon', { key: p.readKey }), 422);
      });
    });

    describe('DELETE /api/v1/interventions/{id}', () => {
      it('removes the record from the list, get and stats; its stream keeps the history', async () => {
        const created = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ agent_id: 'del-agent', timestamp: '2024-06-01T00:00:00Z', estimated_cost_usd: 7 }) });
        const statsQ = '/api/v1/interventions/stats?start_date=2024-06-01&end_date=2024-06-01';
        expect((await call(p, 'GET', statsQ, { key: p.readKey })).body.total_interventions).toBe(1);
        const d = await call(p, 'DELETE', `/api/v1/interventions/${created.body.id}`, { key: p.writeKey });
        expect(d.status).toBe(204);
        expectProblem(await call(p, 'GET', `/api/v1/interventions/${created.body.id}`, { key: p.readKey }), 404);
        expect((await call(p, 'GET', '/api/v1/interventions?agent_id=del-agent', { key: p.readKey })).body.total).toBe(0);
        const s = (await call(p, 'GET', statsQ, { key: p.readKey })).body;
        expect(s.total_interventions).toBe(0);
        expect(s.cost_prevented_usd).toBe(0);
        expect(await p.streamEventTypes(`intervention-${created.body.id}`)).toEqual(['InterventionRecorded', 'InterventionDeleted']);
        expectProblem(await call(p, 'DELETE', `/api/v1/interventions/${created.body.id}`, { key: p.writeKey }), 404);
      });
      it('answers 404 for an unknown id', async () => {
        expectProblem(await call(p, 'DELETE', '/api/v1/interventions/does-not-exist', { key: p.writeKey }), 404);
        expectProblem(await call(p, 'GET', '/api/v1/interventions/does-not-exist', { key: p.readKey }), 404);
      });
    });

    describe('POST /api/v1/ingest/', () => {
      const ev = (id: string, over: Record<string, unknown> = {}) => ({ id, type: 'intervention.create', timestamp: '2026-11-20T12:00:00Z', body: base({ agent_id: 'ingest-agent', ...over }) });
      it('answers 207, stores the valid events and reports each invalid one', async () => {
        const run = `run-${uniq()}`;
        const r = await call(p, 'POST', '/api/v1/ingest/', {
          key: p.writeKey,
          body: { batch: [ev(`${run}-1`, { run_id: run }), { id: `${run}-2`, type: 'intervention.create', timestamp: 'nope', body: {} }, ev(`${run}-3`, { run_id: run, outcome: 'sideways' }), ev(`${run}-4`, { run_id: run, type: 'loop_detected' })] },
        });
        expect(r.status).toBe(207);
        expect(r.body.successes).toEqual([{ id: `${run}-1`, status: 201, result: 'created' }, { id: `${run}-4`, status: 201, result: 'created' }]);
        expect(r.body.errors.map((e: any) => [e.id, e.status])).toEqual([[`${run}-2`, 422], [`${run}-3`, 422]]);
        expect(r.body.errors[1].message).toMatch(/outcome/);
        const page = await eventually(async () => {
          const l = await call(p, 'GET', `/api/v1/interventions?run_id=${run}`, { key: p.readKey });
          return l.body.total === 2 ? l.body : null;
        });
        expect(page.interventions.map((i: any) => i.type).sort()).toEqual(['hard_block', 'loop_detected']);
        expect(page.interventions[0].timestamp).toBe('2026-11-20T12:00:00.000Z');
      });
      it('stores an event id sent twice only once', async () => {
        const run = `run-${uniq()}`;
        const batch = { batch: [ev(`${run}-dup`, { run_id: run })] };
        expect((await call(p, 'POST', '/api/v1/ingest', { key: p.writeKey, body: batch })).status).toBe(207);
        expect((await call(p, 'POST', '/api/v1/ingest', { key: p.writeKey, body: { batch: [ev(`${run}-dup`, { run_id: run }), ev(`${run}-other`, { run_id: run })] } })).status).toBe(207);
        await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?run_id=${run}`, { key: p.readKey })).body.total === 2);
        await new Promise((r) => setTimeout(r, 300));
        expect((await call(p, 'GET', `/api/v1/interventions?run_id=${run}`, { key: p.readKey })).body.total).toBe(2);
      });
      it('rejects more than 1000 events and a missing batch with 422', async () => {
        const big = { batch: Array.from({ length: 1001 }, (_, i) => ev(`big-${i}`)) };
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: big }), 422);
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { events: [] } }), 422);
      });
      it('accepts a full batch of 1000 events', async () => {
        const run = `run-${uniq()}`;
        const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: Array.from({ length: 1000 }, (_, i) => ev(`${run}-${i}`, { run_id: run, original_inputs: { n: i, pad: 'x'.repeat(500) } })) } });
        expect(r.status).toBe(207);
        expect(r.body.successes).toHaveLength(1000);
        await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?run_id=${run}&limit=1`, { key: p.readKey })).body.total === 1000, 20_000);
      });
    });

    describe('malformed requests', () => {
      it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 over 5 MiB', async () => {
        expectProblem(await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, rawBody: '{"type": ' }), 400);
        expectProblem(await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, rawBody: 'type=hard_block', contentType: 'text/plain' }), 415);
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, rawBody: JSON.stringify({ batch: [{ pad: 'x'.repeat(5 * 1024 * 1024) }] }) }), 413);
      });
      it('ingest, whose body the gateway forwards unparsed: 400 malformed JSON, 422 envelope, 415 not JSON or not UTF-8, from the ingest service or the edge', async () => {
        const malformed = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, rawBody: '{"batch": [' });
        expectProblem(malformed, 400);
        expect(malformed.body.detail).toMatch(/^malformed JSON: /);
        const envelope = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { events: [] } });
        expectProblem(envelope, 422);
        expect(envelope.body.detail).toMatch(/body\.batch/);
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, rawBody: '{"batch": []}', contentType: 'text/plain' }), 415);
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, rawBody: '{"batch": []}', contentType: 'application/json; charset=latin1' }), 415);
        const fine = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, rawBody: '{"batch": []}', contentType: 'application/json; charset=utf-8' });
        expect(fine.status).toBe(207);
        expect(fine.body).toEqual({ successes: [], errors: [] });
      });
    });

    describe('authentication and organisations', () => {
      it('answers 401 without a key or with an unknown one, 403 for a read key on writes', async () => {
        expectProblem(await call(p, 'GET', '/api/v1/interventions'), 401);
        expectProblem(await call(p, 'GET', '/api/v1/interventions', { key: 'agp_unknown' }), 401);
        expectProblem(await call(p, 'POST', '/api/v1/interventions', { key: p.readKey, body: base() }), 403);
        expectProblem(await call(p, 'POST', '/api/v1/ingest/', { key: p.readKey, body: { batch: [] } }), 403);
        expectProblem(await call(p, 'DELETE', '/api/v1/interventions/x', { key: p.readKey }), 403);
      });
      it("hides another organisation's records (404 on get and delete, absent from lists)", async () => {
        const mine = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: base({ agent_id: 'iso-agent' }) });
        expectProblem(await call(p, 'GET', `/api/v1/interventions/${mine.body.id}`, { key: p.otherOrgWriteKey }), 404);
        expectProblem(await call(p, 'DELETE', `/api/v1/interventions/${mine.body.id}`, { key: p.otherOrgWriteKey }), 404);
        expect((await call(p, 'GET', '/api/v1/interventions?agent_id=iso-agent', { key: p.otherOrgWriteKey })).body.total).toBe(0);
        expect((await call(p, 'GET', `/api/v1/interventions/${mine.body.id}`, { key: p.readKey })).status).toBe(200);
      });
    });

    describe('documentation and operations', () => {
      it('serves the OpenAPI document, the docs page, health, readiness and metrics', async () => {
        const doc = await call(p, 'GET', '/api/v1/openapi.json');
        expect(doc.body.openapi).toBe('3.1.0');
        expect(Object.keys(doc.body.paths)).toEqual(
          expect.arrayContaining([
            '/api/v1/interventions', '/api/v1/interventions/{id}/enrich', '/api/v1/ingest', '/api/v1/approvals', '/api/v1/approvals/{id}/approve',
            '/api/v1/policies', '/api/v1/policies/{id}/history', '/api/v1/agents', '/api/v1/kill-switches', '/api/v1/runs', '/api/v1/runs/{id}',
            '/api/v1/stats/daily', '/api/v1/stats/estimation-accuracy', '/api/v1/ledger/export', '/api/v1/agents/{id}/stats',
          ]),
        );
        expect((await call(p, 'GET', '/docs')).status).toBe(200);
        expect((await call(p, 'GET', '/healthz')).status).toBe(200);
        expect((await call(p, 'GET', '/readyz')).status).toBe(200);
        const metrics = await call(p, 'GET', '/metrics', { key: p.adminKey });
        expect(String(metrics.body)).toContain('agp_http_requests_total');
      });
    });
  });
}

import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '@agp/auth';
import { InProcessBroker, InProcessClient } from '@agp/bus';
import { createEventStore, createPgliteSql, type Sql } from '@agp/eventstore';
import { createLogger } from '@agp/runtime';
import { migrateReadModels } from '../../interventions/src/projections/schema.js';
import { createGateway, type Gateway } from '../src/gateway.js';

/**
 * The gateway's in-process read of the interventions list (docs/decisions.md, The read path): no interventions service runs here, only the
 * gateway over a database, so every answer below comes from the gateway's own reader.
 */
describe('GET /api/v1/interventions read in the gateway (PGlite, no interventions service)', () => {
  let sql: Sql;
  let gateway: Gateway;
  let url: string;
  const readKey = 'agp_list_read_key_000000001';
  beforeAll(async () => {
    sql = await createPgliteSql();
    const keys = new KeyStore(sql);
    await keys.migrate();
    await keys.ensureInit({ org: 'acme', writeKey: 'agp_list_write_key_00000001', readKey });
    gateway = await createGateway({ bus: new InProcessClient({ broker: new InProcessBroker() }), keys, sql, store: createEventStore(sql), logger: createLogger('gateway', 'silent') });
    url = `http://127.0.0.1:${await gateway.listen(0, '127.0.0.1')}`;
  });
  afterAll(async () => {
    await gateway?.close();
    await sql?.close();
  });
  const get = async (path: string) => {
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${readKey}` } });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
  };

  it('answers 503 problem details while the read model does not exist yet (the owning service has not migrated)', async () => {
    const r = await get('/api/v1/interventions');
    expect(r.status).toBe(503);
    expect(r.type).toMatch(/^application\/problem\+json/);
    expect(r.body.detail).toMatch(/read model cannot be read now/);
  });

  it('answers 422 naming the bad query field, as the interventions.list wire row does', async () => {
    const r = await get('/api/v1/interventions?limit=0&outcome=exploded');
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['query.limit', 'query.outcome']);
  });

  it('reads pages from the database once the read model exists, scoped to the key\'s organisation', async () => {
    await createEventStore(sql).migrate(); // the checkpoints: pages are cached against the projection's checkpoint
    await migrateReadModels(sql, createEventStore(sql));
    expect((await get('/api/v1/interventions')).body).toEqual({ interventions: [], total: 0, skip: 0, limit: 50, next_cursor: null });
    const doc = (id: string, org: string, ts: string) => ({ id, organization_id: org, type: 'hard_block', outcome: 'blocked', action_name: 'a', agent_id: 'g', timestamp: ts });
    for (const [id, org, ts] of [['i1', 'acme', '2026-01-01T00:00:00Z'], ['i2', 'acme', '2026-01-02T00:00:00Z'], ['o1', 'other', '2026-01-03T00:00:00Z']]) {
      await sql.query(`INSERT INTO agp_interventions (id, organization_id, type, outcome, action_name, agent_id, ts, doc) VALUES ($1, $2, 'hard_block', 'blocked', 'a', 'g', $3, $4::json)`, [id, org, ts, JSON.stringify(doc(id, org, ts))]);
    }
    await sql.query(`INSERT INTO agp_intervention_totals (organization_id, total) VALUES ('acme', 2), ('other', 1)`);
    const page = (await get('/api/v1/interventions?limit=1&skip=1')).body;
    expect(page).toMatchObject({ total: 2, skip: 1, limit: 1 });
    expect(page.interventions.map((r: { id: string }) => r.id)).toEqual(['i1']);
    expect((await get('/api/v1/interventions')).body.interventions.map((r: { id: string }) => r.id)).toEqual(['i2', 'i1']);
  });

  it('serves a cached page only while the checkpoint has not moved', async () => {
    await createEventStore(sql).resetCheckpoint('interventions-read-model', 7n);
    expect((await get('/api/v1/interventions?limit=5')).body.total).toBe(2); // read and kept at position 7
    // A write that bypasses the projection (the checkpoint stays): the kept page is still served ...
    await sql.query(`UPDATE agp_intervention_totals SET total = 3 WHERE organization_id = 'acme'`);
    expect((await get('/api/v1/interventions?limit=5')).body.total).toBe(2);
    // ... until the checkpoint moves, as it does in the transaction of every projected write.
    await createEventStore(sql).resetCheckpoint('interventions-read-model', 8n);
    expect((await get('/api/v1/interventions?limit=5')).body.total).toBe(3);
  });

  it('sends a page as UTF-8 JSON, the same bytes read and cached (text outside ASCII included)', async () => {
    const text = 'café ✓ 😀';
    const d = { id: 'i3', organization_id: 'acme', type: 'hard_block', outcome: 'blocked', action_name: text, agent_id: 'g', timestamp: '2026-01-04T00:00:00Z' };
    await sql.query(`INSERT INTO agp_interventions (id, organization_id, type, outcome, action_name, agent_id, ts, doc) VALUES ('i3', 'acme', 'hard_block', 'blocked', $1, 'g', '2026-01-04T00:00:00Z', $2::json)`, [text, JSON.stringify(d)]);
    await createEventStore(sql).resetCheckpoint('interventions-read-model', 9n);
    const answers = [];
    for (let i = 0; i < 2; i++) {
      // the first read from the database, the second the kept page (the checkpoint has not moved)
      const res = await fetch(`${url}/api/v1/interventions?limit=1`, { headers: { authorization: `Bearer ${readKey}` } });
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
      answers.push(bytes);
    }
    expect(answers[1].equals(answers[0])).toBe(true);
    expect(JSON.parse(answers[0].toString('utf8')).interventions).toEqual([d]);
  });
});

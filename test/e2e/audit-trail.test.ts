import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { leafHash, openCheckpoint, verifyConsistency, verifyInclusion } from '@agp/tlog';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * The verifiable audit trail in both run modes, over the real HTTP API, checked with @agp/tlog as an auditor would:
 * governance records made through the API (a policy and its new version, a kill switch, an agent registration, an
 * intervention, its approval and its deletion) become leaves in stored order; a checkpoint verifies against the key
 * served at /.well-known/agp-audit-keys; each record's inclusion proof leads to a checkpoint's root; two checkpoints
 * are consistent; another organisation's record is a 404; bad parameters are 422 naming each.
 * Source: docs/audit.md.
 */
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

interface Checkpoint {
  origin: string;
  tree_size: number;
  root_hash: string;
  at: string;
  key_id: string;
  key_name: string;
  note: string;
}

describeModes(
  'Verifiable audit trail',
  (platform) => {
    const get = (path: string, key = platform().readKey) => call(platform(), 'GET', path, { key });
    const made: { first?: Checkpoint; second?: Checkpoint; records?: string[]; vkeys?: string[] } = {};

    /** The event ids of a stream, in order (the leaves' record ids). */
    const eventIds = async (stream: string) => (await platform().queryRows('SELECT event_id FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [stream])).map((r) => String(r.event_id));

    /** Sign a checkpoint once the log holds at least `size` leaves. */
    const checkpointAtLeast = (size: number) =>
      eventually(async () => {
        const r = await call(platform(), 'POST', '/api/v1/audit/checkpoints', { key: platform().writeKey });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return (r.body as Checkpoint).tree_size >= size ? (r.body as Checkpoint) : null;
      }, 30_000, 200);

    it('records made through the API become leaves; a checkpoint verifies with the served key', async () => {
      const p = platform();
      const policy = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `trail-${randomBytes(3).toString('hex')}` } });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      expect((await call(p, 'PATCH', `/api/v1/policies/${policy.body.id}`, { key: p.writeKey, body: { name: 'trail v2' } })).status).toBe(200);
      expect((await call(p, 'PUT', '/api/v1/kill-switches/agents/trail-agent', { key: p.writeKey, body: { engaged: true, reason: 'trail drill' } })).status).toBe(200);
      const switchEvents = await p.queryRows("SELECT event_id FROM agp_events WHERE event_type = 'KillSwitchEngaged' AND data->>'agent_id' = 'trail-agent' AND metadata->>'organization_id' = 'acme'");
      const records = [...(await eventIds(`policy-${policy.body.id}`)), ...switchEvents.map((r) => String(r.event_id))];
      // Every record is a leaf before the checkpoint (the log may hold other records of the organisation too).
      await eventually(async () => ((await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_leaves WHERE record_id = ANY($1::text[])', [records]))[0].n === records.length ? true : null), 30_000, 200);
      const first = await checkpointAtLeast(3);
      // The keys document needs no credentials and holds the key that signed.
      const keys = await call(p, 'GET', '/.well-known/agp-audit-keys');
      expect(keys.status).toBe(200);
      expect(keys.body.keys[0]).toMatchObject({ key_id: first.key_id, name: first.key_name, algorithm: 'ed25519', retired_at: null });
      expect(JSON.stringify(keys.body)).not.toMatch(/private|sealed/);
      made.vkeys = keys.body.keys.map((k: { verifier_key: string }) => k.verifier_key);
      const opened = openCheckpoint(first.note, made.vkeys!);
      expect(opened).toMatchObject({ origin: 'agp-audit/acme', size: first.tree_size, verifiedBy: [first.key_name] });
      expect(Buffer.from(opened.root).toString('base64')).toBe(first.root_hash);
      expect(opened.extensions).toEqual([`time ${first.at.replace(/\.\d{3}Z$/, 'Z')}`]);
      // A note altered by one byte does not verify.
      expect(() => openCheckpoint(first.note.replace(`\n${first.tree_size}\n`, `\n${first.tree_size + 1}\n`), made.vkeys!)).toThrow(/does not verify/);
      made.first = first;
      made.records = records;
      expect(records.length).toBeGreaterThanOrEqual(3);
    });

    it('an inclusion proof of each record verifies against the checkpoint’s root; the leaf is the canonical record', async () => {
      const cp = made.first!;
      const seen = new Set<number>();
      for (const record of made.records!) {
        const r = await get(`/api/v1/audit/proofs/inclusion?record=${record}&tree_size=${cp.tree_size}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const leaf = JSON.parse(r.body.leaf);
        // Version 1, or 2 for a record with personal data (the kill switch's reason, as a salted commitment).
        expect(leaf).toMatchObject({ v: leaf.type === 'KillSwitchEngaged' ? 2 : 1, id: record, organization_id: 'acme' });
        if (leaf.type === 'KillSwitchEngaged') expect(leaf.data.reason).toEqual({ $commitment: expect.any(String) });
        const hash = leafHash(new TextEncoder().encode(r.body.leaf));
        expect(Buffer.from(hash).toString('base64')).toBe(r.body.leaf_hash);
        expect(verifyInclusion(hash, r.body.leaf_index, cp.tree_size, r.body.proof.map(unb64), unb64(cp.root_hash))).toBe(true);
        // Any other index does not verify.
        expect(verifyInclusion(hash, r.body.leaf_index + 1, cp.tree_size, r.body.proof.map(unb64), unb64(cp.root_hash))).toBe(false);
        seen.add(r.body.leaf_index);
      }
      // In stored order: the policy's versions before the kill switch.
      const indices = [];
      for (const record of made.records!) indices.push((await get(`/api/v1/audit/proofs/inclusion?record=${record}`)).body.leaf_index);
      expect(indices).toEqual([...indices].sort((a, b) => a - b));
      expect(seen.size).toBe(made.records!.length);
      const policyLeaf = JSON.parse((await get(`/api/v1/audit/proofs/inclusion?record=${made.records![1]}`)).body.leaf);
      expect(policyLeaf).toMatchObject({ type: 'PolicyUpdated', stream_version: 2, data: { changes: { name: { to: 'trail v2' } } } });
    });

    it('interventions, their approval and their deletion become leaves; two checkpoints are consistent', async () => {
      const p = platform();
      const created = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_funds', agent_id: 'trail-agent' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id;
      await eventually(async () => (await get(`/api/v1/approvals/apr-${id}`)).status === 200, 30_000);
      const decided = await call(p, 'POST', `/api/v1/approvals/apr-${id}/approve`, { key: p.writeKey, body: { approver_email: 'auditor@acme.test' } });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      expect((await call(p, 'DELETE', `/api/v1/interventions/${id}`, { key: p.writeKey })).status).toBe(204);
      const types = await p.streamEventTypes(`intervention-${id}`);
      expect(types).toEqual(expect.arrayContaining(['InterventionRecorded', 'InterventionOutcomeChanged', 'InterventionDeleted']));
      const ids = await eventIds(`intervention-${id}`);
      const second = await checkpointAtLeast(made.first!.tree_size + 3);
      openCheckpoint(second.note, made.vkeys!);
      const governance = await p.queryRows("SELECT event_id, event_type FROM agp_events WHERE stream_id = $1 AND event_type <> 'InterventionEnriched' AND event_type <> 'InterventionEnrichmentFailed'", [`intervention-${id}`]);
      for (const g of governance) {
        const r = await get(`/api/v1/audit/proofs/inclusion?record=${g.event_id}&tree_size=${second.tree_size}`);
        expect(r.status, `${g.event_type}: ${JSON.stringify(r.body)}`).toBe(200);
        expect(verifyInclusion(unb64(r.body.leaf_hash), r.body.leaf_index, second.tree_size, r.body.proof.map(unb64), unb64(second.root_hash))).toBe(true);
      }
      const outcome = governance.find((g) => g.event_type === 'InterventionOutcomeChanged')!;
      expect(JSON.parse((await get(`/api/v1/audit/proofs/inclusion?record=${outcome.event_id}`)).body.leaf)).toMatchObject({ data: { to: 'approved_after_review', approver_email: 'auditor@acme.test' } });
      expect(ids.length).toBeGreaterThanOrEqual(3);

      const c = await get(`/api/v1/audit/proofs/consistency?from=${made.first!.tree_size}&to=${second.tree_size}`);
      expect(c.status, JSON.stringify(c.body)).toBe(200);
      expect(c.body).toMatchObject({ from: made.first!.tree_size, to: second.tree_size, from_root: made.first!.root_hash, to_root: second.root_hash });
      expect(verifyConsistency(made.first!.tree_size, second.tree_size, c.body.proof.map(unb64), unb64(made.first!.root_hash), unb64(second.root_hash))).toBe(true);
      // A rewritten old root is caught.
      expect(verifyConsistency(made.first!.tree_size, second.tree_size, c.body.proof.map(unb64), unb64(second.root_hash), unb64(second.root_hash))).toBe(false);
      made.second = second;

      const list = await get('/api/v1/audit/checkpoints?limit=1');
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ latest: { tree_size: second.tree_size }, limit: 1, skip: 0 });
      expect(list.body.checkpoints).toHaveLength(1);
      expect(list.body.total).toBeGreaterThanOrEqual(2);
      expect(list.body.tree_size).toBeGreaterThanOrEqual(second.tree_size);
      const older = await get('/api/v1/audit/checkpoints?skip=1&limit=200');
      expect(older.body.checkpoints.map((x: Checkpoint) => x.tree_size)).toContain(made.first!.tree_size);
      expect(older.body.latest.tree_size).toBe(second.tree_size);
    });

    it('another organisation’s record is a 404 and its log is its own; bad parameters are 422 naming each; a read key cannot sign', async () => {
      const p = platform();
      const record = made.records![0];
      expectProblem(await get(`/api/v1/audit/proofs/inclusion?record=${record}`, p.otherOrgReadKey), 404);
      expectProblem(await get('/api/v1/audit/proofs/inclusion?record=no-such-record'), 404);
      const other = await get('/api/v1/audit/checkpoints', p.otherOrgReadKey);
      expect(other.status).toBe(200);
      expect(other.body.checkpoints.every((x: Checkpoint) => x.origin === 'agp-audit/globex')).toBe(true);
      expectProblem(await get('/api/v1/audit/proofs/inclusion'), 422, ['query.record']);
      expectProblem(await get(`/api/v1/audit/proofs/inclusion?record=${record}&tree_size=abc`), 422, ['query.tree_size']);
      const index = (await get(`/api/v1/audit/proofs/inclusion?record=${made.records!.at(-1)}`)).body.leaf_index;
      expectProblem(await get(`/api/v1/audit/proofs/inclusion?record=${made.records!.at(-1)}&tree_size=${index}`), 422, ['query.tree_size']);
      expectProblem(await get(`/api/v1/audit/proofs/inclusion?record=${record}&tree_size=99999999`), 422, ['query.tree_size']);
      expectProblem(await get('/api/v1/audit/proofs/consistency?from=5&to=2'), 422, ['query.to']);
      expectProblem(await get('/api/v1/audit/proofs/consistency?from=-1&to=x'), 422, ['query.from', 'query.to']);
      expectProblem(await get('/api/v1/audit/proofs/consistency?from=1&to=99999999'), 422, ['query.to']);
      expectProblem(await get('/api/v1/audit/checkpoints?limit=0'), 422, ['query.limit']);
      expectProblem(await call(p, 'POST', '/api/v1/audit/checkpoints', { key: p.readKey }), 403);
      expectProblem(await get('/api/v1/audit/checkpoints', ''), 401);
    });
  },
  { env: { AGP_AUDIT_CHECKPOINT_INTERVAL_MS: '0', AGP_SECRETS_KEY: randomBytes(32).toString('base64') } },
);

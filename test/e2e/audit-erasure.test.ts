import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { canonicalJson } from '@agp/contracts';
import { leafHash, openCheckpoint, verifyInclusion } from '@agp/tlog';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * Salted commitments, erasure and retention of the audit trail in both run modes, over the real HTTP API: a record
 * with personal data is a version 2 leaf whose commitment the stored salt and value recompute; erasing an agent's
 * records removes the values from the stored events, the read models and the API answers and deletes the salts, while
 * the erased record's inclusion proof still verifies against a checkpoint signed before the erasure; deleting an
 * intervention erases its records the same way (queued with its deletion's leaf); another agent's
 * and another organisation's records keep theirs; the retention erases records older than it; bad input is a 422
 * naming each field with nothing written. The CLI (`agp audit erase`, `agp audit retention`), run as users run it,
 * does the same against the started platform, its refusals one line per problem and field, no stack trace.
 * Source: docs/audit.md (Salted commitments, Retention, Erasure).
 */
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const tag = () => randomBytes(4).toString('hex');

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: REPO_ROOT });
});

describeModes(
  'Audit trail erasure and retention',
  (platform) => {
    const state: { agent?: string; secret?: string; otherSecret?: string; globexSecret?: string; recorded?: string; interventionId?: string; vkeys?: string[] } = {};

    const checkpoint = (size: number) =>
      eventually(async () => {
        const r = await call(platform(), 'POST', '/api/v1/audit/checkpoints', { key: platform().writeKey });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body.tree_size >= size ? (r.body as { tree_size: number; note: string; root_hash: string }) : null;
      }, 30_000, 200);
    /** The event ids of a stream (the leaves' record ids), in order. */
    const eventIds = async (stream: string) => (await platform().queryRows('SELECT event_id FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [stream])).map((r) => String(r.event_id));
    const leafOf = async (record: string) => (await platform().queryRows('SELECT leaf FROM agp_tlog_leaves WHERE record_id = $1', [record]))[0]?.leaf as string | undefined;
    const intervention = async (key: string, agent: string, secret: string, extra: Record<string, unknown> = {}) => {
      const r = await call(platform(), 'POST', '/api/v1/interventions', {
        key,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'refund', agent_id: agent, run_id: `run-${agent}`, reason: `reason ${secret}`, description: `desc ${secret}`, original_inputs: { note: secret }, ...extra },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    };
    /** A new intervention of a new agent, its personal data holding `secret`, once its record is a leaf. */
    const logged = async (secret: string) => {
      const id = await intervention(platform().writeKey, `agent-${tag()}`, secret);
      const [recorded] = await eventIds(`intervention-${id}`);
      await eventually(() => leafOf(recorded), 30_000, 200);
      return { id, recorded };
    };
    /** The record's leaf is `leaf` still, and its inclusion proof verifies against checkpoint `cp` (signed by one of `state.vkeys`). */
    const provenAgainst = async (record: string, leaf: string | undefined, cp: { tree_size: number; note: string }) => {
      const proof = await call(platform(), 'GET', `/api/v1/audit/proofs/inclusion?record=${record}&tree_size=${cp.tree_size}`, { key: platform().readKey });
      expect(proof.status, JSON.stringify(proof.body)).toBe(200);
      expect(proof.body.leaf).toBe(leaf);
      const opened = openCheckpoint(cp.note, state.vkeys!);
      expect(verifyInclusion(leafHash(new TextEncoder().encode(proof.body.leaf)), proof.body.leaf_index, cp.tree_size, proof.body.proof.map(unb64), opened.root)).toBe(true);
    };

    it('logs a record with personal data as a version 2 leaf: the stored salt and the value recompute its commitment', async () => {
      const p = platform();
      state.agent = `erase-${tag()}`;
      state.secret = `SECRET${tag()}`;
      state.otherSecret = `KEEP${tag()}`;
      state.globexSecret = `GLOBEX${tag()}`;
      state.interventionId = await intervention(p.writeKey, state.agent, state.secret);
      await intervention(p.writeKey, `${state.agent}-other`, state.otherSecret);
      await intervention(p.otherOrgWriteKey, state.agent, state.globexSecret);
      expect((await call(p, 'PUT', `/api/v1/kill-switches/agents/${state.agent}`, { key: p.writeKey, body: { engaged: true, reason: `looping ${state.secret}` } })).status).toBe(200);
      const approvals = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/approvals?agent_id=${state.agent}`, { key: p.readKey });
        return r.body.approvals?.length ? r.body.approvals : null;
      });
      const approved = await call(p, 'POST', `/api/v1/approvals/${approvals[0].id}/approve`, { key: p.writeKey, body: { approver_email: 'jane@acme.test', notes: `notes ${state.secret}` } });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);

      [state.recorded] = await eventIds(`intervention-${state.interventionId}`);
      const leaf = await eventually(() => leafOf(state.recorded!), 30_000, 200);
      const record = JSON.parse(leaf);
      expect(record.v).toBe(2);
      expect(leaf).not.toContain(state.secret);
      expect(record.data).toMatchObject({ agent_id: state.agent, reason: { $commitment: expect.any(String) }, original_inputs: { $commitment: expect.any(String) } });
      const salts = await p.queryRows('SELECT s.key AS pointer, s.value AS salt FROM agp_tlog_record_salts, jsonb_each_text(salts) AS s WHERE record_id = $1 ORDER BY s.key', [state.recorded]);
      expect(salts.map((s) => s.pointer)).toEqual(['/data/description', '/data/original_inputs', '/data/reason']);
      const salt = Buffer.from(String(salts.find((s) => s.pointer === '/data/reason')!.salt), 'base64');
      expect(salt).toHaveLength(32);
      expect(createHash('sha256').update(salt).update(canonicalJson(`reason ${state.secret}`)).digest('base64')).toBe(record.data.reason.$commitment);
    });

    it('erasing an agent removes the values and salts; the inclusion proof of an erased record still verifies against a checkpoint signed before', async () => {
      const p = platform();
      const ids = await eventIds(`intervention-${state.interventionId}`);
      // Every record of the intervention's stream (recorded, approved) is logged before the checkpoint.
      await eventually(async () => ((await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_leaves WHERE record_id = ANY($1::text[])', [ids]))[0].n as number) >= 2 || null, 30_000, 200);
      const size = Number((await p.queryRows(`SELECT size FROM agp_tlog_trees WHERE organization_id = 'acme'`))[0].size);
      const before = await checkpoint(size);
      const keys = await call(p, 'GET', '/.well-known/agp-audit-keys');
      state.vkeys = keys.body.keys.map((k: { verifier_key: string }) => k.verifier_key);
      const leafBefore = await leafOf(state.recorded!);

      const erased = await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { agent_id: state.agent, reason: 'data subject request 7' } });
      expect(erased.status, JSON.stringify(erased.body)).toBe(201);
      expect(erased.body).toMatchObject({ scope: 'agent', agent_id: state.agent, run_id: null, before: null, records: expect.any(Number), fields: expect.any(Number) });
      // The recorded intervention (3 fields), its approval's outcome change (notes), the kill switch (reason).
      expect(erased.body.records).toBeGreaterThanOrEqual(3);
      expect(erased.body.fields).toBeGreaterThanOrEqual(5);
      expect(erased.body.events_changed).toBeGreaterThanOrEqual(3);

      // The proof: the leaf is unchanged and leads to the root of the checkpoint signed before the erasure.
      await provenAgainst(state.recorded!, leafBefore, before);

      // Gone from the stored events, the salts and the policies service's tables; kept for the other agent and organisation.
      const inTable = async (sql: string) => Number((await p.queryRows(sql, [`%${state.secret}%`]))[0].n);
      expect(await inTable(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`)).toBe(0);
      expect(await inTable(`SELECT count(*) AS n FROM agp_audit_log WHERE entry::text LIKE $1`)).toBe(0);
      expect(await inTable(`SELECT count(*) AS n FROM agp_kill_switches WHERE doc::text LIKE $1`)).toBe(0);
      expect(await inTable(`SELECT count(*) AS n FROM agp_audit_objects WHERE doc::text LIKE $1`)).toBe(0);
      expect((await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_record_salts WHERE record_id = ANY($1::text[])', [ids]))[0].n).toBe(0);
      expect(Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${state.otherSecret}%`]))[0].n)).toBeGreaterThan(0);
      expect(Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${state.globexSecret}%`]))[0].n)).toBeGreaterThan(0);
      // The read models and every API answer, once the interventions service applied the erasure.
      await eventually(async () => (Number((await p.queryRows(`SELECT count(*) AS n FROM agp_interventions WHERE doc::text LIKE $1`, [`%${state.secret}%`]))[0].n) === 0 ? true : null), 30_000, 200);
      await eventually(async () => (Number((await p.queryRows(`SELECT count(*) AS n FROM agp_approvals WHERE doc::text LIKE $1`, [`%${state.secret}%`]))[0].n) === 0 ? true : null), 30_000, 200);
      for (const path of [`/api/v1/interventions/${state.interventionId}`, `/api/v1/interventions?agent_id=${state.agent}`, `/api/v1/approvals?agent_id=${state.agent}`, '/api/v1/kill-switches']) {
        const r = await call(p, 'GET', path, { key: p.adminKey });
        expect(JSON.stringify(r.body), path).not.toContain(state.secret);
      }
      const one = await call(p, 'GET', `/api/v1/interventions/${state.interventionId}`, { key: p.readKey });
      expect(one.body).toMatchObject({ id: state.interventionId, agent_id: state.agent, reason: null, description: null, original_inputs: {} });
      expect(JSON.stringify((await call(p, 'GET', '/api/v1/audit-log', { key: p.adminKey })).body)).not.toContain(state.secret);
      expect(JSON.stringify((await call(p, 'GET', `/api/v1/interventions?agent_id=${state.agent}`, { key: p.otherOrgWriteKey })).body)).toContain(state.globexSecret);

      // The erasure is itself a record of the log, its reason committed; the log still only appended.
      const [erasureEvent] = await eventIds(`audit-erasure-${erased.body.id}`);
      const erasureLeaf = JSON.parse(await eventually(() => leafOf(erasureEvent), 30_000, 200));
      expect(erasureLeaf).toMatchObject({ type: 'AuditRecordsErased', v: 2, data: { agent_id: state.agent, reason: { $commitment: expect.any(String) } } });
      const after = await checkpoint(before.tree_size + 1);
      const consistency = await call(p, 'GET', `/api/v1/audit/proofs/consistency?from=${before.tree_size}&to=${after.tree_size}`, { key: p.readKey });
      expect(consistency.body).toMatchObject({ from_root: before.root_hash, to_root: after.root_hash });
    });

    it('deleting an intervention erases its records (queued with its leaf); POST with intervention_id erases another; the proof still verifies', async () => {
      const p = platform();
      const secret = `DEL${tag()}`;
      const { id, recorded } = await logged(secret);
      const size = Number((await p.queryRows(`SELECT size FROM agp_tlog_trees WHERE organization_id = 'acme'`))[0].size);
      const before = await checkpoint(size);
      const leafBefore = await leafOf(recorded);
      const holding = async (s: string) => Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${s}%`]))[0].n);
      expect(await holding(secret)).toBeGreaterThan(0);

      expect((await call(p, 'DELETE', `/api/v1/interventions/${id}`, { key: p.writeKey })).status).toBe(204);
      const erasure = await eventually(async () => {
        const rows = await p.queryRows(`SELECT data, metadata FROM agp_events WHERE event_type = 'AuditRecordsErased' AND data::jsonb->'intervention_ids' ? $1`, [id]);
        return rows[0] as { data: Record<string, unknown>; metadata: Record<string, unknown> } | undefined;
      }, 30_000, 200);
      expect(erasure.data).toMatchObject({ scope: 'intervention', agent_id: null, run_id: null, intervention_ids: [id], records: 1, fields: 3 });
      expect(erasure.metadata.actor).toMatch(/^key:/);
      const ids = await eventIds(`intervention-${id}`);
      expect(await holding(secret)).toBe(0);
      expect((await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_record_salts WHERE record_id = ANY($1::text[])', [ids]))[0].n).toBe(0);
      await eventually(async () => ((await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_pending_erasures WHERE intervention_id = $1', [id]))[0].n === 0 ? true : null), 30_000, 200);
      const erasureLeaf = JSON.parse(await eventually(() => leafOf(String((erasure.data as { id: string }).id)), 30_000, 200));
      expect(erasureLeaf).toMatchObject({ type: 'AuditRecordsErased', data: { scope: 'intervention', intervention_ids: [id] } });
      expectProblem(await call(p, 'GET', `/api/v1/interventions/${id}`, { key: p.readKey }), 404);
      expect(JSON.stringify((await call(p, 'GET', '/api/v1/audit-log', { key: p.adminKey })).body)).not.toContain(secret);
      // The deleted record's leaf is unchanged and still proves against the checkpoint signed before.
      await provenAgainst(recorded, leafBefore, before);

      // An erasure request by intervention id: only that intervention's records.
      const kept = `KEPT${tag()}`;
      const { id: target } = await logged(`T${secret}`);
      await logged(kept);
      const r = await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { intervention_id: target, reason: 'data subject request 8' } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ scope: 'intervention', intervention_id: target, agent_id: null, run_id: null, records: 1, fields: 3 });
      expect(await holding(`T${secret}`)).toBe(0);
      expect(await holding(kept)).toBeGreaterThan(0);
      await eventually(async () => (JSON.stringify((await call(p, 'GET', `/api/v1/interventions/${target}`, { key: p.readKey })).body).includes(secret) ? null : true), 30_000, 200);
    });

    it('retention erases the records older than it; bad input is a 422 naming each field, nothing written', async () => {
      const p = platform();
      const secret = `OLD${tag()}`;
      const { recorded } = await logged(secret);
      expect((await call(p, 'GET', '/api/v1/audit/retention', { key: p.adminKey })).body).toEqual({ audit_retention_days: null });

      // Bad input: nothing written.
      const erasureStreams = async () => Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE stream_id LIKE 'audit-erasure-%'`))[0].n);
      const streamsBefore = await erasureStreams();
      expectProblem(await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { reason: 'x' } }), 422, ['body.agent_id', 'body.run_id', 'body.intervention_id']);
      expectProblem(await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { agent_id: 'a', intervention_id: 'i', reason: 'x' } }), 422, ['body.agent_id', 'body.run_id', 'body.intervention_id']);
      expectProblem(await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { agent_id: 'a', run_id: 'r', reason: '' } }), 422, ['body.reason', 'body.agent_id', 'body.run_id', 'body.intervention_id']);
      expectProblem(await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { agent_id: 'a', reason: 'x', extra: 1 } }), 422);
      expectProblem(await call(p, 'POST', '/api/v1/audit/erasures', { key: p.writeKey, body: { agent_id: 'a', reason: 'x' } }), 403);
      for (const bad of [0, 1.5, 'x', 36_501]) expectProblem(await call(p, 'PUT', '/api/v1/audit/retention', { key: p.adminKey, body: { audit_retention_days: bad } }), 422, ['body.audit_retention_days']);
      expectProblem(await call(p, 'PUT', '/api/v1/audit/retention', { key: p.adminKey, body: {} }), 422, ['body.audit_retention_days']);
      expectProblem(await call(p, 'PUT', '/api/v1/audit/retention', { key: p.writeKey, body: { audit_retention_days: 1 } }), 403);
      expect(await erasureStreams()).toBe(streamsBefore);
      expect((await call(p, 'GET', '/api/v1/audit/retention', { key: p.adminKey })).body).toEqual({ audit_retention_days: null });
      expect(Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${secret}%`]))[0].n)).toBeGreaterThan(0);

      // The record was logged two days ago (its salts' time moved back), the retention is one day: it is erased.
      await p.queryRows(`UPDATE agp_tlog_record_salts SET at = now() - interval '2 days' WHERE record_id = $1`, [recorded]);
      const leafBefore = await leafOf(recorded);
      const put = await call(p, 'PUT', '/api/v1/audit/retention', { key: p.adminKey, body: { audit_retention_days: 1 } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect(put.body).toEqual({ audit_retention_days: 1 });
      await eventually(async () => (Number((await p.queryRows('SELECT count(*) AS n FROM agp_tlog_record_salts WHERE record_id = $1', [recorded]))[0].n) === 0 ? true : null), 30_000, 200);
      expect(Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${secret}%`]))[0].n)).toBe(0);
      expect(await leafOf(recorded)).toBe(leafBefore);
      // Newer records keep theirs; the retention run is a record of the log.
      expect(Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${state.otherSecret}%`]))[0].n)).toBeGreaterThan(0);
      await eventually(async () => (Number((await p.queryRows(`SELECT count(*) AS n FROM agp_interventions WHERE doc::text LIKE $1`, [`%${secret}%`]))[0].n) === 0 ? true : null), 30_000, 200);
      expect((await p.queryRows(`SELECT data FROM agp_events WHERE event_type = 'AuditRecordsErased' AND data::text LIKE '%"retention"%'`)).length).toBeGreaterThan(0);
      expect((await call(p, 'PUT', '/api/v1/audit/retention', { key: p.adminKey, body: { audit_retention_days: null } })).body).toEqual({ audit_retention_days: null });
    });

    it('agp audit erase and agp audit retention: what the API erased and set, printed; refusals are one line per problem and field, nothing written', async () => {
      const p = platform();
      const cli = (args: string[], key = p.adminKey) => runCli([...args, '--url', p.url], { AGP_KEY: key });
      const holding = async (s: string) => Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE data::text LIKE $1`, [`%${s}%`]))[0].n);
      const erasureStreams = async () => Number((await p.queryRows(`SELECT count(*) AS n FROM agp_events WHERE stream_id LIKE 'audit-erasure-%'`))[0].n);
      const noTrace = (r: { err: string }) => expect(r.err).not.toMatch(/\n\s+at /);

      // An intervention's records: the line says what was erased; the values are gone from the store.
      const secret = `CLI${tag()}`;
      const { id } = await logged(secret);
      const erased = await cli(['audit', 'erase', '--intervention', id, '--reason', 'a data subject asked (cli)']);
      expect(erased.code, erased.err).toBe(0);
      expect(erased.out).toMatch(new RegExp(`^erased 3 fields of 1 record of intervention ${id} \\(\\d+ stored events? changed\\); the erasure is record \\S+ of the log; every proof still verifies\n$`));
      expect(await holding(secret)).toBe(0);

      // A run's records, as JSON: the API's answer.
      const runSecret = `RUN${tag()}`;
      const agent = `cli-${tag()}`;
      const [runRecord] = await eventIds(`intervention-${await intervention(p.writeKey, agent, runSecret)}`);
      await eventually(() => leafOf(runRecord), 30_000, 200);
      const json = await cli(['audit', 'erase', '--run', `run-${agent}`, '--reason', 'retention request', '--json']);
      expect(json.code, json.err).toBe(0);
      expect(JSON.parse(json.out)).toMatchObject({ scope: 'run', run_id: `run-${agent}`, agent_id: null, records: 1, fields: 3 });
      expect(await holding(runSecret)).toBe(0);

      // Refusals: usage errors before any request; the API's 422 and 403 as one line per problem and field.
      const before = await erasureStreams();
      const both = await cli(['audit', 'erase', '--agent', 'a', '--run', 'r', '--reason', 'x']);
      expect([both.code, both.err]).toEqual([1, 'error: give exactly one of --agent, --run or --intervention (got --agent, --run)\n']);
      const noReason = await cli(['audit', 'erase', '--agent', 'a']);
      expect(noReason.code).toBe(1);
      expect(noReason.err).toMatch(/^error: missing --reason/);
      const empty = await cli(['audit', 'erase', '--agent', 'a', '--reason', '']);
      expect(empty.code).toBe(1);
      expect(empty.err).toMatch(/^error: 422 .*\n  body\.reason: must not be empty\n$/);
      const writer = await cli(['audit', 'erase', '--agent', 'a', '--reason', 'x'], p.writeKey);
      expect(writer.code).toBe(1);
      expect(writer.err).toMatch(/^error: 403 [^\n]*\n$/);
      for (const r of [both, noReason, empty, writer]) noTrace(r);
      expect(await erasureStreams()).toBe(before);

      // The retention: read, set (as JSON), kept-all again; bad days refused, nothing changed.
      const read = await cli(['audit', 'retention']);
      expect([read.code, read.out]).toEqual([0, 'retention: keep everything (no record loses its committed fields by age)\n']);
      const set = await cli(['audit', 'retention', '--set', '400', '--json']);
      expect(set.code, set.err).toBe(0);
      expect(JSON.parse(set.out)).toEqual({ audit_retention_days: 400 });
      expect((await call(p, 'GET', '/api/v1/audit/retention', { key: p.adminKey })).body).toEqual({ audit_retention_days: 400 });
      expect((await cli(['audit', 'retention'])).out).toBe('retention: 400 days (older records lose their committed fields)\n');
      const tooMany = await cli(['audit', 'retention', '--set', '36501']);
      expect(tooMany.code).toBe(1);
      expect(tooMany.err).toMatch(/^error: 422 .*\n  body\.audit_retention_days: at most 36500 days\n$/);
      const zero = await cli(['audit', 'retention', '--set', '0']);
      expect(zero.code).toBe(1);
      expect(zero.err).toMatch(/argument '0' is invalid\. expected an integer of 1 or more/);
      const conflict = await cli(['audit', 'retention', '--set', '5', '--keep-all']);
      expect([conflict.code, conflict.err]).toEqual([1, 'error: give --set DAYS or --keep-all, not both\n']);
      const notAdmin = await cli(['audit', 'retention', '--keep-all'], p.writeKey);
      expect(notAdmin.code).toBe(1);
      expect(notAdmin.err).toMatch(/^error: 403 /);
      for (const r of [tooMany, zero, conflict, notAdmin]) noTrace(r);
      expect((await call(p, 'GET', '/api/v1/audit/retention', { key: p.adminKey })).body).toEqual({ audit_retention_days: 400 });
      const keepAll = await cli(['audit', 'retention', '--keep-all']);
      expect([keepAll.code, keepAll.out]).toEqual([0, 'retention set: keep everything (no record loses its committed fields by age)\n']);
      expect((await call(p, 'GET', '/api/v1/audit/retention', { key: p.adminKey })).body).toEqual({ audit_retention_days: null });
      // The platform unreachable: exit 2, one line.
      const down = await runCli(['audit', 'retention', '--url', 'http://127.0.0.1:9'], { AGP_KEY: p.adminKey });
      expect(down.code).toBe(2);
      expect(down.err).toMatch(/^error: gateway unreachable: [^\n]*\n$/);
    }, 180_000);
  },
  { env: { AGP_AUDIT_CHECKPOINT_INTERVAL_MS: '0', AGP_SECRETS_KEY: randomBytes(32).toString('base64') } },
);

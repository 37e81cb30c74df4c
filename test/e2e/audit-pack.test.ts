import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { AUDIT_LEAF_EVENT_TYPES } from '@agp/contracts';
import type { StoredEvent } from '@agp/eventstore';
import { PackWriter, verifierKey } from '@agp/tlog';
import { applyAuditTrailEvents } from '../../services/policies/src/tlog/leaves.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * The evidence pack end to end, in both run modes, with the CLI run as users run it: records made through the API (an
 * intervention, a policy and its second version, a kill switch) are exported (`agp audit export`) and the pack
 * verifies offline (`agp audit verify`) and live (`--live`). Then the platform's store is tampered with in SQL, each
 * tamper followed by a new export and verify that fails naming the record, then undone: a field of an intervention
 * changed; an event deleted; two events' positions swapped; a policy's newest version overwritten with an older one.
 * The log rebuilt from a changed store (tables truncated, the leaf builder run again, a new checkpoint signed) fails
 * live verification of the pack exported before, naming the record. A malformed or cut pack, a key that did not sign,
 * and a range proof of another tree size fail with one line; bad queries are 422 naming each field.
 * Source: docs/audit.md (Evidence packs).
 */
const dir = mkdtempSync(join(tmpdir(), 'agp-pack-'));

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: REPO_ROOT });
});

interface EventRow {
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  event_type: string;
  data: string;
  metadata: string;
  organization_id: string;
  recorded_at: string;
}

describeModes(
  'Evidence pack',
  (platform, mode) => {
    const made: { intervention?: string; policyV1?: string; policyV2?: string; killSwitch?: string; pack?: string } = {};
    const file = (name: string) => join(dir, `${mode}-${name}`);
    const cli = (args: string[]) => runCli([...args, '--url', platform().url], { AGP_KEY: platform().writeKey });
    const exportPack = async (name: string) => {
      const r = await cli(['audit', 'export', '--out', file(name), '--quiet']);
      expect(r.code, r.err).toBe(0);
      return file(name);
    };
    const verify = (pack: string, ...more: string[]) => runCli(['audit', 'verify', pack, ...more]);
    const row = async (id: string) => (await platform().queryRows(`SELECT global_position::text AS global_position, event_id, stream_id, stream_version, event_type, data::text AS data, metadata::text AS metadata, organization_id, recorded_at FROM agp_events WHERE event_id = $1`, [id]))[0] as unknown as EventRow;
    const setData = (id: string, data: string) => platform().queryRows('UPDATE agp_events SET data = $2 WHERE event_id = $1', [id, data]);
    /** One leaf per record: the leaf index of an event id. */
    const leafIndex = async (id: string) => Number((await platform().queryRows('SELECT leaf_index::text AS i FROM agp_tlog_leaves WHERE record_id = $1', [id]))[0].i);
    /** Fail unless a fresh export fails verification with `message`. */
    const exportFails = async (name: string, message: RegExp) => {
      const r = await verify(await exportPack(name));
      expect(r.code, r.out).toBe(1);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/\n\s+at /);
    };

    it('records made through the API export to a pack that verifies offline and live', async () => {
      const p = platform();
      const created = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'hard_block', outcome: 'blocked', action_name: 'wire_funds', agent_id: 'pack-agent' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const policy = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `pack-${randomBytes(3).toString('hex')}`, run_budget: 5 } });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      expect((await call(p, 'PATCH', `/api/v1/policies/${policy.body.id}`, { key: p.writeKey, body: { run_budget: 9 } })).status).toBe(200);
      expect((await call(p, 'PUT', '/api/v1/kill-switches/agents/pack-agent', { key: p.writeKey, body: { engaged: true, reason: 'pack drill' } })).status).toBe(200);
      const ids = async (sql: string, params: unknown[]) => (await p.queryRows(sql, params)).map((r) => String(r.event_id));
      made.intervention = (await ids(`SELECT event_id FROM agp_events WHERE stream_id = $1 AND event_type = 'InterventionRecorded'`, [`intervention-${created.body.id}`]))[0];
      [made.policyV1, made.policyV2] = await ids('SELECT event_id FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [`policy-${policy.body.id}`]);
      made.killSwitch = (await ids(`SELECT event_id FROM agp_events WHERE event_type = 'KillSwitchEngaged' AND data->>'agent_id' = 'pack-agent'`, []))[0];
      // Every record is a leaf before the export.
      await eventually(async () => (await p.queryRows('SELECT count(*)::int AS n FROM agp_tlog_leaves WHERE record_id = ANY($1::text[])', [[made.intervention, made.policyV1, made.policyV2, made.killSwitch]]))[0].n === 4, 30_000);

      made.pack = await exportPack('good.jsonl');
      const lines = readFileSync(made.pack, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines[0]).toMatchObject({ kind: 'agp-audit-pack', version: 1, origin: 'agp-audit/acme', organization_id: 'acme', start: 0 });
      expect(lines.at(-1)).toMatchObject({ kind: 'end', records: lines[0].end - lines[0].start });
      const ids4 = lines.filter((l) => l.kind === 'record').map((l) => l.record_id);
      expect(ids4).toEqual(expect.arrayContaining([made.intervention, made.policyV1, made.policyV2, made.killSwitch]));
      const ok = await verify(made.pack);
      expect(ok.code, ok.err).toBe(0);
      expect(ok.out).toMatch(/verified/);
      expect(ok.out).toMatch(new RegExp(`records\\s+${ids4.length} `));
      const live = await runCli(['audit', 'verify', '--live', made.pack, '--save', file('kept.note'), '--url', p.url], { AGP_KEY: p.readKey });
      expect(live.code, live.err).toBe(0);
      expect(live.out).toMatch(/live: the platform's checkpoint \d+ is consistent with the pack's/);
      const kept = await runCli(['audit', 'verify', '--live', '--checkpoint', file('kept.note'), '--url', p.url], { AGP_KEY: p.readKey });
      expect(kept.code, kept.err).toBe(0);

      // A period: only the records stored from the kill switch on.
      const at = new Date((await p.queryRows('SELECT recorded_at FROM agp_events WHERE event_id = $1', [made.killSwitch]))[0].recorded_at as string).toISOString();
      const period = await cli(['audit', 'export', '--from', at, '--to', '2999-01-01', '--out', file('period.jsonl')]);
      expect(period.code, period.err).toBe(0);
      const header = JSON.parse(readFileSync(file('period.jsonl'), 'utf8').split('\n')[0]);
      expect(header.start).toBe(await leafIndex(made.killSwitch!));
      expect((await verify(file('period.jsonl'))).code).toBe(0);
    }, 120_000);

    it('a field of an intervention changed in the store: the record is named as changed', async () => {
      const original = await row(made.intervention!);
      await setData(made.intervention!, JSON.stringify({ ...JSON.parse(original.data), action_name: 'read_balance' }));
      try {
        await exportFails('changed.jsonl', new RegExp(`record ${made.intervention} \\(leaf ${await leafIndex(made.intervention!)}\\): changed since it was logged`));
      } finally {
        await setData(made.intervention!, original.data);
      }
      expect((await verify(await exportPack('undone1.jsonl'))).code).toBe(0);
    }, 120_000);

    it('an event deleted from the store: the record is named as no longer there', async () => {
      const r = await row(made.killSwitch!);
      await platform().queryRows('DELETE FROM agp_events WHERE event_id = $1', [made.killSwitch]);
      try {
        await exportFails('deleted.jsonl', new RegExp(`record ${made.killSwitch} \\(leaf ${await leafIndex(made.killSwitch!)}\\): no longer in the platform’s store`));
      } finally {
        await platform().queryRows(
          'INSERT INTO agp_events (global_position, event_id, stream_id, stream_version, event_type, data, metadata, organization_id, recorded_at) VALUES ($1::bigint, $2, $3, $4, $5, $6, $7, $8, $9)',
          [r.global_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.data, r.metadata, r.organization_id, r.recorded_at],
        );
      }
      expect((await verify(await exportPack('undone2.jsonl'))).code).toBe(0);
    }, 120_000);

    it('two events swapped in the store’s order: the later record is named', async () => {
      const [a, b] = [await row(made.policyV1!), await row(made.policyV2!)];
      /** Move `x` to position `px` and `y` to `py` (through -1, the positions being unique). */
      const place = async (x: EventRow, px: string, y: EventRow, py: string) => {
        await platform().queryRows('UPDATE agp_events SET global_position = -1 WHERE event_id = $1', [x.event_id]);
        await platform().queryRows('UPDATE agp_events SET global_position = $2::bigint WHERE event_id = $1', [y.event_id, py]);
        await platform().queryRows('UPDATE agp_events SET global_position = $2::bigint WHERE event_id = $1', [x.event_id, px]);
      };
      await place(a, b.global_position, b, a.global_position);
      try {
        await exportFails('reordered.jsonl', new RegExp(`record ${made.policyV2} \\(leaf ${await leafIndex(made.policyV2!)}\\): the store’s order differs from the log’s`));
      } finally {
        await place(a, a.global_position, b, b.global_position);
      }
      expect((await verify(await exportPack('undone3.jsonl'))).code).toBe(0);
    }, 120_000);

    it('a policy’s newest version overwritten with an older one: the newest is named', async () => {
      const [v1, v2] = [await row(made.policyV1!), await row(made.policyV2!)];
      await setData(made.policyV2!, v1.data);
      try {
        await exportFails('replayed.jsonl', new RegExp(`record ${made.policyV2} \\(leaf ${await leafIndex(made.policyV2!)}\\): changed since it was logged`));
      } finally {
        await setData(made.policyV2!, v2.data);
      }
    }, 120_000);

    it('bad packs and keys fail with one line; a range proof of another tree size fails; bad queries are 422', async () => {
      const text = readFileSync(made.pack!, 'utf8');
      writeFileSync(file('cut.jsonl'), text.slice(0, Math.floor(text.length * 0.6)));
      const cut = await verify(file('cut.jsonl'));
      expect(cut.code).toBe(1);
      expect(cut.err).toMatch(/^error: line \d+: (not a JSON object: the pack is truncated or malformed|truncated: the pack has no end line)\n$/);
      writeFileSync(file('garbage.jsonl'), 'not json\n');
      expect((await verify(file('garbage.jsonl'))).err).toBe('error: line 1: not a JSON object: the pack is truncated or malformed\n');
      writeFileSync(file('other.keys'), `${verifierKey('agp-audit', generateKeyPairSync('ed25519').privateKey)}\n`);
      const unknown = await verify(made.pack!, '--keys', file('other.keys'));
      expect(unknown.code).toBe(1);
      expect(unknown.err).toMatch(/^error: checkpoint \d+: signed by no known key \(signed by: agp-audit\)\n$/);
      // A range proof answered for another tree size, put in a pack whose lines are otherwise right.
      const lines = text.trim().split('\n').map((l) => JSON.parse(l));
      const header = lines[0];
      expect(header.tree_size).toBeGreaterThan(1);
      const other = await call(platform(), 'GET', `/api/v1/audit/proofs/range?start=0&end=${header.tree_size - 1}&tree_size=${header.tree_size - 1}`, { key: platform().readKey });
      expect(other.status, JSON.stringify(other.body)).toBe(200);
      const w = new PackWriter();
      const body = lines.slice(0, -1).map((l) => w.line(l.kind === 'range_proof' ? { ...l, tree_size: other.body.tree_size, end: other.body.end, proof: other.body.proof } : l)).join('');
      writeFileSync(file('other-size.jsonl'), body + w.end());
      const r = await verify(file('other-size.jsonl'));
      expect(r.code).toBe(1);
      expect(r.err).toBe(`error: checkpoint ${header.tree_size}: the range proof is for leaves [0, ${header.tree_size - 1}) of a tree of ${header.tree_size - 1}, not the pack’s [0, ${header.end}) of ${header.tree_size}\n`);
      const missing = await verify(file('no-such.jsonl'));
      expect(missing.code).toBe(1);
      expect(missing.err).toMatch(/^error: .*no-such\.jsonl: ENOENT/);
      const get = (path: string, key = platform().readKey) => call(platform(), 'GET', path, { key });
      expectProblem(await get('/api/v1/audit/records?from=yesterday&start=-1'), 422, ['query.from', 'query.start']);
      expectProblem(await get('/api/v1/audit/records?start=5&end=2'), 422, ['query.end']);
      expectProblem(await get('/api/v1/audit/records?start=99999999'), 422, ['query.start']);
      expectProblem(await get('/api/v1/audit/records?cursor=abc'), 422, ['query.cursor']);
      expectProblem(await get('/api/v1/audit/proofs/range?start=2&end=1'), 422, ['query.end']);
      expectProblem(await get('/api/v1/audit/proofs/range?start=0&end=99999999'), 422, ['query.end']);
      expectProblem(await get('/api/v1/audit/proofs/range?start=0&end=1&tree_size=99999999'), 422, ['query.tree_size']);
      // Another organisation's record is not found; its records are its own.
      expectProblem(await get(`/api/v1/audit/proofs/inclusion?record=${made.intervention}`, platform().otherOrgReadKey), 404);
      const theirs = await get('/api/v1/audit/records', platform().otherOrgReadKey);
      expect(theirs.status).toBe(200);
      expect(theirs.body.records.map((r: { record_id: string }) => r.record_id)).not.toContain(made.intervention);
    }, 120_000);

    it('the log rebuilt from a changed store: live verification of the earlier pack names the record', async () => {
      const p = platform();
      const original = await row(made.intervention!);
      const index = await leafIndex(made.intervention!);
      const tables = ['agp_tlog_leaves', 'agp_tlog_nodes', 'agp_tlog_trees', 'agp_tlog_checkpoints', 'agp_tlog_record_salts'];
      const saved = Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await p.queryRows(`SELECT * FROM ${t}`)] as const)));
      await setData(made.intervention!, JSON.stringify({ ...JSON.parse(original.data), action_name: 'read_balance' }));
      try {
        for (const t of tables) await p.queryRows(`DELETE FROM ${t}`);
        const rows = (await p.queryRows(
          `SELECT global_position::text AS global_position, event_id, stream_id, stream_version, event_type, data::text AS data, metadata::text AS metadata, recorded_at FROM agp_events WHERE event_type = ANY($1::text[]) ORDER BY global_position`,
          [AUDIT_LEAF_EVENT_TYPES],
        )) as unknown as EventRow[];
        const events: StoredEvent[] = rows.map((r) => ({ event_id: r.event_id, type: r.event_type, stream_id: r.stream_id, stream_version: r.stream_version, global_position: BigInt(r.global_position), recorded_at: r.recorded_at, data: JSON.parse(r.data), metadata: JSON.parse(r.metadata) }));
        await applyAuditTrailEvents(events, { query: async (text: string, params?: unknown[]) => ({ rows: await p.queryRows(text, params) }) } as never);
        expect((await call(p, 'POST', '/api/v1/audit/checkpoints', { key: p.writeKey })).status).toBe(200);
        // The rebuilt log is self-consistent: a fresh pack verifies offline.
        expect((await verify(await exportPack('rebuilt.jsonl'))).code).toBe(0);
        const live = await runCli(['audit', 'verify', '--live', made.pack!, '--url', p.url], { AGP_KEY: p.readKey });
        expect(live.code, live.out).toBe(1);
        expect(live.err).toMatch(new RegExp(`^error: record ${made.intervention} \\(leaf ${index}\\) differs from the one in your pack \\(the platform's checkpoint \\d+ is not consistent with your checkpoint \\d+: the log was rewritten\\)\\n$`));
        const kept = await runCli(['audit', 'verify', '--live', '--checkpoint', file('kept.note'), '--url', p.url], { AGP_KEY: p.readKey });
        expect(kept.code).toBe(1);
        expect(kept.err).toMatch(/is not consistent with your checkpoint \d+: the log was rewritten/);
      } finally {
        await setData(made.intervention!, original.data);
        for (const t of tables) await p.queryRows(`DELETE FROM ${t}`);
        for (const t of tables)
          for (const r of saved[t]) {
            const cols = Object.keys(r);
            await p.queryRows(`INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, cols.map((c) => r[c]));
          }
      }
      const again = await runCli(['audit', 'verify', '--live', made.pack!, '--url', p.url], { AGP_KEY: p.readKey });
      expect(again.code, again.err).toBe(0);
    }, 120_000);

    it('after an erasure the pack still verifies, listing the erased fields as redacted, not as failures', async () => {
      const p = platform();
      const before = await verify(await exportPack('before-erasure.jsonl'));
      expect(before.out).toMatch(/fields\s+[1-9]\d* disclosed, 0 redacted/);
      const erased = await call(p, 'POST', '/api/v1/audit/erasures', { key: p.adminKey, body: { agent_id: 'pack-agent', reason: 'a data subject asked' } });
      expect(erased.status, JSON.stringify(erased.body)).toBe(201);
      expect(erased.body.fields).toBeGreaterThan(0);
      // The erasure is itself a record: wait for its leaf, then export and verify.
      await eventually(async () => ((await p.queryRows(`SELECT count(*)::int AS n FROM agp_tlog_leaves WHERE leaf::jsonb->>'type' = 'AuditRecordsErased'`))[0].n as number) > 0, 30_000);
      const pack = await exportPack('after-erasure.jsonl');
      const ok = await verify(pack);
      expect(ok.code, ok.err).toBe(0);
      expect(ok.out).toMatch(/fields\s+\d+ disclosed, [1-9]\d* redacted/);
      const killSwitch = readFileSync(pack, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.record_id === made.killSwitch);
      expect(killSwitch.redacted).toContain('/data/reason');
      expect(JSON.stringify(killSwitch)).not.toContain('pack drill');
      // The pack exported before the erasure still verifies live: the log only appended.
      const live = await runCli(['audit', 'verify', '--live', file('before-erasure.jsonl'), '--url', p.url], { AGP_KEY: p.readKey });
      expect(live.code, live.err).toBe(0);
    }, 120_000);
  },
  { env: { AGP_AUDIT_CHECKPOINT_INTERVAL_MS: '0', AGP_SECRETS_KEY: randomBytes(32).toString('base64') } },
);

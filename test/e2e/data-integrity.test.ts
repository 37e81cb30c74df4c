import { describe, expect, it } from 'vitest';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { parseCsv } from '../support/csv.js';

/**
 * Data integrity at the API's edges, over the real HTTP API in both run modes (one platform per mode):
 * concurrent kill-switch PUTs converge without a 409 and without internal names in any problem; the ledger CSV export
 * neutralises formula cells (OWASP CSV injection) while json keeps them unchanged; run events that contradict each
 * other never give a negative duration and a run's second run.start naming another agent is refused with a reason;
 * an admin reads the dead letters over HTTP (their organisation's only), retries an ingest dead letter through ingest
 * and a projection dead letter through its projection (refused again it is kept; applied once its cause is fixed).
 * Source: docs/decisions.md (Concurrent writes; Ledger CSV export: formula cells; Run data quality; Dead letters over HTTP).
 */
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
const ev = (type: string, body: Record<string, unknown>, timestamp = new Date().toISOString()): Ev => ({ id: `di-${uniq()}`, type, timestamp, body });

describeModes('data integrity: concurrent kill switches, CSV formula cells, run consistency', (platform) => {
  const p = (): BootedPlatform => platform();
  const ingest = async (batch: Ev[]) => {
    const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch } });
    expect(r.status).toBe(207);
    return r.body as { successes: Array<{ id: string; status: number }>; errors: Array<{ id: string; status: number; message: string }> };
  };
  const put = (path: string, body: unknown) => call(p(), 'PUT', path, { key: p().writeKey, body });

  describe('kill switches under concurrency', () => {
    it('20 concurrent PUTs of the organisation switch all answer 200 and leave one consistent state', async () => {
      for (const engaged of [true, false]) {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put('/api/v1/kill-switches/organization', { engaged, reason: `race ${i}` })));
        for (const a of answers) expect({ status: a.status, body: a.body }).toEqual({ status: 200, body: expect.objectContaining({ scope: 'organization', engaged }) });
        // Exactly one PUT changed the switch; every answer is that state.
        expect(new Set(answers.map((a) => a.body.version)).size).toBe(1);
        const now = (await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.organization;
        expect(now).toEqual(answers[0].body);
      }
    });

    it('20 concurrent PUTs of an agent switch, engaging and releasing, all answer 200; the final state is the last applied', async () => {
      const agent = `ks-race-${uniq()}`;
      expect((await call(p(), 'POST', '/api/v1/agents', { key: p().writeKey, body: { agent_id: agent } })).status).toBe(201);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put(`/api/v1/kill-switches/agents/${agent}`, { engaged: i % 2 === 0, reason: `race ${i}` })));
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const last = answers.map((a) => a.body).sort((x, y) => y.version - x.version)[0];
      const shown = (await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey })).body.kill_switch;
      expect(shown).toEqual({ engaged: last.engaged, reason: last.reason, changed_at: last.changed_at, changed_by: last.changed_by, actor_name: last.actor_name });
      // Every answer is a state the switch really had: versions are 1..last, each with its own engaged value.
      for (const a of answers) expect(a.body.engaged).toBe(a.body.version % 2 === 1);
    });

    it('a concurrent approval decision answers the loser with who decided, never an internal stream name', async () => {
      const r = await call(p(), 'POST', '/api/v1/interventions', {
        key: p().writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_money', agent_id: `appr-${uniq()}` },
      });
      expect(r.status).toBe(201);
      const approval = `apr-${r.body.id}`;
      await eventually(async () => (await call(p(), 'GET', `/api/v1/approvals/${approval}`, { key: p().readKey })).status === 200, 20_000);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => call(p(), 'POST', `/api/v1/approvals/${approval}/${i % 2 ? 'reject' : 'approve'}`, { key: p().writeKey, body: { approver_email: `r${i}@example.com` } })),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      for (const a of answers.filter((x) => x.status !== 200)) {
        expect(a.status).toBe(409);
        expect(a.body.type).toBe('https://agp.dev/problems/conflict');
        expect(a.body.detail).toMatch(/^approval apr-\S+ is already (approved|rejected) by r\d@example\.com at /);
        expect(a.body.detail).not.toMatch(/stream|intervention-|no_stream/);
      }
    });
  });

  describe('ledger CSV export', () => {
    it('neutralises text cells that begin like a formula; json carries them unchanged; numbers stay numbers', async () => {
      const agent = `=HYPERLINK("x")-${uniq()}`;
      const run = `csv-${uniq()}`;
      const at = new Date().toISOString();
      const res = await ingest([
        ev('run.start', { run_id: run, agent_id: agent, started_at: at }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: '=HYPERLINK("x")', status: 'error', cost_usd: 0.25, duration_ms: 7, timestamp: at, error: '@SUM(A1)' }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: '+cmd', status: 'success', inputs: { n: -1 }, outputs: -3, timestamp: at }),
      ]);
      expect(res.errors).toEqual([]);
      const q = `agent_id=${encodeURIComponent(agent)}`;
      await eventually(async () => (await call(p(), 'GET', `/api/v1/runs/${run}`, { key: p().readKey })).body?.actions?.length === 2, 20_000);

      const json = (await (await fetch(`${p().url}/api/v1/ledger/export?format=json&${q}`, { headers: { authorization: `Bearer ${p().readKey}` } })).json()) as any[];
      expect(json.map((e: any) => [e.agent_id, e.action_name, e.error, e.outputs])).toEqual([
        [agent, '=HYPERLINK("x")', '@SUM(A1)', null],
        [agent, '+cmd', null, -3],
      ]);

      const csvRes = await fetch(`${p().url}/api/v1/ledger/export?format=csv&${q}`, { headers: { authorization: `Bearer ${p().readKey}` } });
      const text = await csvRes.text();
      expect(text).toContain(`"'=HYPERLINK(""x"")"`);
      const [header, ...rows] = parseCsv(text);
      const col = (row: string[], name: string) => row[header.indexOf(name)];
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(col(row, 'agent_id')).toBe(`'${agent}`);
        // No text cell begins with a formula character.
        expect(row.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
      }
      expect([col(rows[0], 'action_name'), col(rows[0], 'error'), col(rows[0], 'cost_usd'), col(rows[0], 'duration_ms')]).toEqual(["'=HYPERLINK(\"x\")", "'@SUM(A1)", '0.25', '7']);
      expect([col(rows[1], 'action_name'), col(rows[1], 'inputs'), col(rows[1], 'outputs')]).toEqual(["'+cmd", '{"n": -1}', "'-3"]);
    });
  });

  describe('run consistency', () => {
    const getRun = (id: string) => call(p(), 'GET', `/api/v1/runs/${id}`, { key: p().readKey });

    it("refuses at ingest, per event, a run.end before its run.start, and a second run.start or an action of another agent in the same batch", async () => {
      const run = `rc-${uniq()}`;
      const start = ev('run.start', { run_id: run, agent_id: 'agent-a', started_at: '2030-01-01T10:00:00.000Z' });
      const other = ev('run.start', { run_id: run, agent_id: 'agent-b' });
      const early = ev('run.end', { run_id: run, agent_id: 'agent-a', status: 'completed', ended_at: '2030-01-01T09:00:00.000Z' });
      const foreign = ev('action.record', { run_id: run, agent_id: 'agent-b', action_name: 'search', status: 'success', cost_usd: 1 });
      const own = ev('action.record', { run_id: run, agent_id: 'agent-a', action_name: 'search', status: 'success', cost_usd: 0.5 });
      const r = await ingest([start, other, early, foreign, own]);
      expect(r.successes.map((s) => s.id)).toEqual([start.id, own.id]);
      expect(r.errors).toEqual([
        { id: other.id, status: 409, message: expect.stringMatching(/^batch\[1\]\.body\.agent_id: run \S+ belongs to agent agent-a/) },
        { id: early.id, status: 422, message: expect.stringMatching(/^batch\[2\]\.body\.ended_at: 2030-01-01T09:00:00.000Z is before the run's started_at 2030-01-01T10:00:00.000Z/) },
        { id: foreign.id, status: 409, message: expect.stringMatching(/^batch\[3\]\.body\.agent_id: run \S+ belongs to agent agent-a \(run\.start \S+ in this batch\)/) },
      ]);
      const shown = await eventually(async () => ((await getRun(run)).status === 200 ? (await getRun(run)).body : null), 20_000);
      expect(shown).toMatchObject({ agent_id: 'agent-a', status: 'running', duration_ms: null, action_count: 1, cost_usd: 0.5 });
    });

    it('across batches: no negative duration anywhere, and the contradicting events are refused with a reason an operator can read', async () => {
      const [endFirst, startFirst, agentRun] = [`rc-ef-${uniq()}`, `rc-sf-${uniq()}`, `rc-ag-${uniq()}`];
      // A run.end that arrives (and is stored) before its run.start, which claims a start 9000 years later.
      const ended = ev('run.end', { run_id: endFirst, agent_id: 'agent-a', status: 'completed', ended_at: '1001-01-01T00:00:00.000Z' });
      // A run that started, then a run.end dated before that start.
      const started = ev('run.start', { run_id: startFirst, agent_id: 'agent-a', started_at: '2030-01-01T10:00:00.000Z' });
      // A run of agent-a, then a second run.start naming agent-b.
      const first = ev('run.start', { run_id: agentRun, agent_id: 'agent-a' });
      expect((await ingest([ended, started, first])).errors).toEqual([]);
      await eventually(async () => (await getRun(endFirst)).status === 200 && (await getRun(startFirst)).status === 200 && (await getRun(agentRun)).status === 200, 20_000);

      const lateStart = ev('run.start', { run_id: endFirst, agent_id: 'agent-a', started_at: '9999-01-01T00:00:00.000Z' });
      const earlyEnd = ev('run.end', { run_id: startFirst, agent_id: 'agent-a', status: 'failed', ended_at: '2030-01-01T09:00:00.000Z' });
      const second = ev('run.start', { run_id: agentRun, agent_id: 'agent-b' });
      const foreign = ev('action.record', { run_id: agentRun, agent_id: 'agent-b', action_name: 'search', status: 'success', cost_usd: 1 });
      expect((await ingest([lateStart, earlyEnd, second, foreign])).errors).toEqual([]);

      const refused = await eventually(async () => {
        const rows = (await p().projectionDeadLetters()).filter((d) => d.subscription === 'stats-read-model' && d.error.startsWith('refused:'));
        const marks = ['9999-01-01', '2030-01-01T09:00', `run.start names agent agent-b, but run ${agentRun}`, `action.record names agent agent-b, but run ${agentRun}`];
        const mine = marks.map((m) => rows.find((d) => d.error.includes(m)));
        return mine.every(Boolean) ? mine : null;
      }, 20_000);
      expect(refused.map((d) => [d!.event_type, d!.error])).toEqual([
        ['RunStarted', "refused: run.start started_at 9999-01-01T00:00:00.000Z is after the run's ended_at 1001-01-01T00:00:00.000Z"],
        ['RunEnded', "refused: run.end ended_at 2030-01-01T09:00:00.000Z is before the run's started_at 2030-01-01T10:00:00.000Z"],
        ['RunStarted', `refused: run.start names agent agent-b, but run ${agentRun} belongs to agent agent-a`],
        ['ActionRecorded', `refused: action.record names agent agent-b, but run ${agentRun} belongs to agent agent-a`],
      ]);

      expect((await getRun(endFirst)).body).toMatchObject({ status: 'completed', started_at: null, ended_at: '1001-01-01T00:00:00.000Z', duration_ms: null });
      expect((await getRun(startFirst)).body).toMatchObject({ status: 'running', started_at: '2030-01-01T10:00:00.000Z', ended_at: null, duration_ms: null });
      expect((await getRun(agentRun)).body).toMatchObject({ agent_id: 'agent-a', action_count: 0, cost_usd: 0 });
      // Nowhere a negative duration: the runs list, each run, the stats.
      const runs = (await call(p(), 'GET', '/api/v1/runs?limit=100', { key: p().readKey })).body.runs as Array<{ duration_ms: number | null }>;
      expect(runs.filter((r) => r.duration_ms !== null && r.duration_ms < 0)).toEqual([]);
      expect((await call(p(), 'GET', '/api/v1/stats/', { key: p().readKey })).body.avg_duration_ms).toBeGreaterThanOrEqual(0);
      expect((await call(p(), 'GET', '/api/v1/agents/agent-b/stats', { key: p().readKey })).status).toBe(404);

      // The operator reads the refused events over HTTP: an admin key of their organisation, with reason, times and the event.
      const listed = (await call(p(), 'GET', '/api/v1/dead-letters?projection=stats-read-model&limit=200', { key: p().adminKey })).body;
      for (const d of refused) {
        const letter = listed.dead_letters.find((l: { reason: string }) => l.reason === d!.error);
        expect(letter, d!.error).toMatchObject({ kind: 'projection', source: 'stats-read-model', attempts: 1, event: { type: d!.event_type, stream_id: d!.stream_id, metadata: { organization_id: 'acme' } } });
        expect(letter.id).toMatch(/^projection-stats-read-model-[0-9]+$/);
        expect(Date.parse(letter.last_seen)).toBeGreaterThanOrEqual(Date.parse(letter.first_seen));
      }
      expect(listed.total).toBeGreaterThanOrEqual(3);
      // Another organisation's admin sees none of them; a write key is refused.
      expect((await call(p(), 'GET', '/api/v1/dead-letters', { key: p().otherOrgAdminKey })).body).toEqual({ dead_letters: [], total: 0, skip: 0, limit: 50 });
      expect((await call(p(), 'GET', '/api/v1/dead-letters', { key: p().writeKey })).status).toBe(403);
    });
  });

  describe('dead letters over HTTP', () => {
    const deadLetters = (query = '') => call(p(), 'GET', `/api/v1/dead-letters${query}`, { key: p().adminKey });
    const retry = (id: string, key = p().adminKey) => call(p(), 'POST', `/api/v1/dead-letters/${id}/retry`, { key });

    it('lists no ingest dead letters before the first one (no table yet), and refuses a bad kind naming the allowed values', async () => {
      expect((await deadLetters('?kind=ingest')).body).toEqual({ dead_letters: [], total: 0, skip: 0, limit: 50 });
      const bad = await deadLetters('?kind=poison');
      expect(bad.status).toBe(422);
      expect(JSON.stringify(bad.body)).toMatch(/query\.kind.*ingest.*projection/);
    });

    it('retries an ingest dead letter through ingest: refused again it stays with last_seen and attempts updated; accepted it is removed and stored', async () => {
      const run = `dl-run-${uniq()}`;
      const good = ev('run.start', { run_id: run, agent_id: 'agent-dl' });
      const bad = ev('run.start', { run_id: `dl-bad-${uniq()}`, agent_id: 'agent\u0000dl' });
      await p().deadLetterIngest('acme', [good]);
      await p().deadLetterIngest('acme', [bad]);
      const ingestLetters = (await deadLetters('?kind=ingest')).body.dead_letters as Array<{ id: string; kind: string; source: string; attempts: number; first_seen: string; last_seen: string; reason: string; event: { events: Array<{ id: string }> } }>;
      const ofGood = ingestLetters.find((d) => d.event.events[0].id === good.id)!;
      const ofBad = ingestLetters.find((d) => d.event.events[0].id === bad.id)!;
      expect(ofGood).toMatchObject({ kind: 'ingest', source: 'stats-ingest', attempts: 1, reason: expect.stringContaining('0x00') });
      expect(ofGood.id).toMatch(/^ingest-[0-9]+$/);

      // Another organisation's admin cannot see or retry it; a write key cannot retry.
      expect((await call(p(), 'GET', '/api/v1/dead-letters?kind=ingest', { key: p().otherOrgAdminKey })).body.total).toBe(0);
      expect((await retry(ofGood.id, p().otherOrgAdminKey)).status).toBe(404);
      expect((await retry(ofGood.id, p().writeKey)).status).toBe(403);
      for (const unknown of ['ingest-999999999', 'ingest-99999999999999999999', 'nope', 'projection-stats-read-model-1']) {
        const r = await retry(unknown);
        expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({ status: 404, type: expect.stringContaining('application/problem+json') });
      }

      // Ingest refuses the NUL again: 422 naming the event, the letter kept with last_seen and attempts moved.
      const refused = await retry(ofBad.id);
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toMatch(/refused 1 of 1 events/);
      const kept = (await deadLetters('?kind=ingest')).body.dead_letters.find((d: { id: string }) => d.id === ofBad.id);
      expect(kept).toMatchObject({ attempts: 2, reason: expect.stringMatching(/^retry refused: /) });
      expect(Date.parse(kept.last_seen)).toBeGreaterThan(Date.parse(ofBad.last_seen));

      // The good one goes through ingest: 200 with ingest's answer, the letter removed, the run stored.
      const retried = await retry(ofGood.id);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ id: ofGood.id, result: 'retried', ingest: { successes: [{ id: good.id, status: 201, result: 'created' }], errors: [] } });
      expect((await deadLetters('?kind=ingest')).body.dead_letters.map((d: { id: string }) => d.id)).not.toContain(ofGood.id);
      await eventually(async () => (await call(p(), 'GET', `/api/v1/runs/${run}`, { key: p().readKey })).status === 200, 20_000);
      expect((await retry(ofGood.id)).status).toBe(404);
    });

    it('retries a projection dead letter through its projection: refused again it is kept and counted (422); applied once its cause is fixed, it is removed', async () => {
      const getRun = (id: string) => call(p(), 'GET', `/api/v1/runs/${id}`, { key: p().readKey });
      const run = `dl-pr-${uniq()}`;
      expect((await ingest([ev('run.start', { run_id: run, agent_id: 'agent-a', started_at: '2030-01-01T10:00:00.000Z' })])).errors).toEqual([]);
      await eventually(async () => (await getRun(run)).status === 200, 20_000);
      // Stored, then refused by the stats projection: a run.end before the run's start, a run.start of another agent.
      const earlyEnd = ev('run.end', { run_id: run, agent_id: 'agent-a', status: 'failed', ended_at: '2030-01-01T09:00:00.000Z' });
      const foreign = ev('run.start', { run_id: run, agent_id: 'agent-b' });
      expect((await ingest([earlyEnd])).errors).toEqual([]);
      expect((await ingest([foreign])).errors).toEqual([]);
      type Letter = { id: string; kind: string; source: string; attempts: number; first_seen: string; last_seen: string; reason: string; event: { event_id: string; data: { ingest_event_id: string } } };
      const letterOf = async (e: Ev) => ((await deadLetters('?projection=stats-read-model&limit=200')).body.dead_letters as Letter[]).find((d) => d.event.data?.ingest_event_id === e.id);
      const [ofEnd, ofForeign] = await eventually(async () => {
        const both = [await letterOf(earlyEnd), await letterOf(foreign)];
        return both.every(Boolean) ? (both as Letter[]) : null;
      }, 20_000);
      expect(ofEnd).toMatchObject({ kind: 'projection', source: 'stats-read-model', attempts: 1, reason: expect.stringMatching(/^refused: run\.end ended_at 2030-01-01T09:00:00\.000Z is before/) });
      expect(ofForeign).toMatchObject({ attempts: 1, reason: `refused: run.start names agent agent-b, but run ${run} belongs to agent agent-a` });

      // Another organisation's admin cannot retry it; a write key cannot; an unknown position is a 404.
      expect((await retry(ofEnd.id, p().otherOrgAdminKey)).status).toBe(404);
      expect((await retry(ofEnd.id, p().writeKey)).status).toBe(403);
      for (const unknown of ['projection-stats-read-model-999999999', 'projection-stats-read-model-9999999999999999999', 'projection-nope-1']) expect((await retry(unknown)).status, unknown).toBe(404);

      // The run still belongs to agent-a: refused again, 422 with the reason, the letter kept with last_seen and attempts moved.
      const again = await retry(ofForeign.id);
      expect({ status: again.status, type: again.headers.get('content-type') }).toEqual({ status: 422, type: expect.stringContaining('application/problem+json') });
      expect(again.body.detail).toContain(`run.start names agent agent-b, but run ${run} belongs to agent agent-a`);
      const kept = (await letterOf(foreign))!;
      expect(kept).toMatchObject({ id: ofForeign.id, attempts: 2, reason: ofForeign.reason, first_seen: ofForeign.first_seen });
      expect(Date.parse(kept.last_seen)).toBeGreaterThan(Date.parse(ofForeign.last_seen));

      // The cause fixed: a run.start of the same agent with an earlier start (the run keeps the earliest). The run.end
      // now applies: the letter is removed, the run ended at 09:00 and failed, one hour long.
      expect((await ingest([ev('run.start', { run_id: run, agent_id: 'agent-a', started_at: '2030-01-01T08:00:00.000Z' })])).errors).toEqual([]);
      await eventually(async () => (await getRun(run)).body.started_at === '2030-01-01T08:00:00.000Z', 20_000);
      const retried = await retry(ofEnd.id);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ id: ofEnd.id, result: 'retried', projection: { name: 'stats-read-model', event_id: ofEnd.event.event_id, global_position: ofEnd.id.split('-').at(-1) } });
      expect((await getRun(run)).body).toMatchObject({ status: 'failed', started_at: '2030-01-01T08:00:00.000Z', ended_at: '2030-01-01T09:00:00.000Z', duration_ms: 3_600_000 });
      expect(await letterOf(earlyEnd)).toBeUndefined();
      expect((await retry(ofEnd.id)).status).toBe(404);
    });
  });
});

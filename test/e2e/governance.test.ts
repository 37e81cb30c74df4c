import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/** One received Server-Sent Event. */
interface Received {
  id: string | null;
  event: string;
  data: any;
  /** performance.now() when it was parsed. */
  at: number;
}

/**
 * A plain fetch-based SSE client: collects events and comments as they arrive, and waits for one that matches.
 * Source: the WHATWG event-stream format (`id:`, `event:`, `data:`, `:` comments, a blank line ends an event).
 */
class SseStream {
  readonly events: Received[] = [];
  readonly comments: string[] = [];
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];
  status = 0;
  headers: Headers | null = null;
  problem: any = null;

  static async open(p: BootedPlatform, agentId: string, key: string, lastEventId?: string): Promise<SseStream> {
    const s = new SseStream();
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const res = await fetch(`${p.url}/api/v1/agents/${encodeURIComponent(agentId)}/governance/events`, { headers, signal: s.abort.signal });
    s.status = res.status;
    s.headers = res.headers;
    if (res.status !== 200) {
      s.problem = await res.json();
      return s;
    }
    void s.pump(res.body!);
    return s;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) this.events.push({ id, event, data: JSON.parse(data.join('\n')), at: performance.now() });
          for (const w of this.waiters.splice(0)) w();
        }
      }
    } catch {
      /* aborted */
    }
  }

  /** The first event (after index `from`) that matches, waiting up to `timeoutMs`. */
  async next(match: (e: Received) => boolean, from = 0, timeoutMs = 5000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.events.slice(from).find(match);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(this.events.map((e) => [e.id, e.event]))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }
}

const uniq = () => Math.random().toString(36).slice(2, 10);
const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/**
 * The governance snapshot and push channel over real HTTP, in both run modes: the snapshot's policies and kill
 * switches with a strong ETag and 304; the SSE stream with a read key delivering kill-switch changes (latency measured
 * over 20 trials), policy changes and approval decisions; resuming with Last-Event-ID; organisation and agent
 * isolation; the per-organisation stream limit; the heartbeat. Source: the SDK's live policies, kill switches and
 * approvals.
 */
describeModes(
  'governance snapshot and push channel',
  (platform, mode) => {
    const agent = `gov-${uniq()}`;
    const other = `gov-other-${uniq()}`;
    const streams: SseStream[] = [];
    let main: SseStream;
    let foreign: SseStream;
    const policy = (p: BootedPlatform, body: Record<string, unknown>) => call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body });
    const setSwitch = (p: BootedPlatform, engaged: boolean, id = agent) => call(p, 'PUT', `/api/v1/kill-switches/agents/${id}`, { key: p.writeKey, body: { engaged, reason: engaged ? 'test' : undefined } });

    beforeAll(async () => {
      const p = platform();
      for (const id of [agent, other]) expect((await call(p, 'POST', '/api/v1/agents', { key: p.writeKey, body: { agent_id: id } })).status).toBe(201);
      main = await SseStream.open(p, agent, p.readKey);
      // Another organisation's stream for the same agent id: it must see none of acme's changes.
      foreign = await SseStream.open(p, agent, p.otherOrgWriteKey);
      streams.push(main, foreign);
      expect([main.status, foreign.status]).toEqual([200, 200]);
      expect(main.headers!.get('content-type')).toMatch(/^text\/event-stream/);
      await main.next((e) => e.event === 'ready');
      await foreign.next((e) => e.event === 'ready');
    });
    afterAll(() => {
      // `main` stays open: stopping the platform must end it (an open SSE response would hold the HTTP server's close).
      for (const s of streams) if (s !== main) s.close();
    });

    it('the snapshot holds the enabled policies for the agent and its kill switches, with a strong ETag and 304', async () => {
      const p = platform();
      const scoped = await policy(p, { name: `scoped-${uniq()}`, agent_ids: [agent], denied_actions: ['drop_table'] });
      const everyone = await policy(p, { name: `all-${uniq()}`, run_budget: 50 });
      const elsewhere = await policy(p, { name: `else-${uniq()}`, agent_ids: [other] });
      const disabled = await policy(p, { name: `off-${uniq()}`, enabled: false });
      for (const r of [scoped, everyone, elsewhere, disabled]) expect(r.status).toBe(201);
      const snap = await call(p, 'GET', `/api/v1/agents/${agent}/governance`, { key: p.readKey });
      expect(snap.status).toBe(200);
      const ids = snap.body.policies.map((x: any) => x.id);
      expect(ids).toEqual(expect.arrayContaining([scoped.body.id, everyone.body.id]));
      expect(ids).not.toContain(elsewhere.body.id);
      expect(ids).not.toContain(disabled.body.id);
      expect(snap.body.kill_switches.organization).toEqual({ engaged: false, reason: null });
      const etag = snap.headers.get('etag')!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const again = await call(p, 'GET', `/api/v1/agents/${agent}/governance`, { key: p.readKey, headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.body).toBeNull();
      // The other organisation sees none of acme's policies.
      const theirs = await call(p, 'GET', `/api/v1/agents/${agent}/governance`, { key: p.otherOrgWriteKey });
      expect(theirs.body.policies).toEqual([]);
      // A change makes the held ETag stale.
      expect((await setSwitch(p, true)).status).toBe(200);
      const changed = await call(p, 'GET', `/api/v1/agents/${agent}/governance`, { key: p.readKey, headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect(changed.body.kill_switches.agents).toEqual([{ agent_id: agent, engaged: true, reason: 'test' }]);
      expect((await setSwitch(p, false)).status).toBe(200);
      expectProblem(await call(p, 'GET', `/api/v1/agents/${'x'.repeat(300)}/governance`, { key: p.readKey }), 422, ['path.agent_id']);
    });

    it('a kill-switch change reaches a read key’s stream within a second (20 trials per path, latency printed)', async () => {
      const p = platform();
      /**
       * 20 trials of `write` (engage, release, …) at random moments (0-150 ms apart, so trials do not fall into step
       * with the tailer's ticks), each timed from just before the write until its event is parsed here.
       */
      const measure = async (label: string, write: (engaged: boolean) => Promise<{ status: number }>) => {
        const latencies: number[] = [];
        for (let i = 0; i < 20; i++) {
          await new Promise((r) => setTimeout(r, Math.random() * 150));
          const engaged = i % 2 === 0;
          const from = main.events.length;
          const t0 = performance.now();
          const put = write(engaged);
          const e = await main.next((x) => x.event === 'kill_switch.changed' && x.data.engaged === engaged, from);
          expect((await put).status).toBe(200);
          latencies.push(e.at - t0);
          expect(e.data).toMatchObject({ scope: 'agent', agent_id: agent, engaged, changed_by: expect.stringMatching(/^key:/) });
        }
        const sorted = [...latencies].sort((a, b) => a - b);
        console.log(`[governance ${mode}] ${label} -> SSE event: p50 ${pct(sorted, 0.5).toFixed(1)} ms, p99 ${pct(sorted, 0.99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms over ${sorted.length} trials`);
        expect(sorted.at(-1)!).toBeLessThan(1000);
      };
      // Through this gateway's REST route: the write wakes the tailer.
      await measure('kill switch PUT (REST, wakes the tailer)', (engaged) => setSwitch(p, engaged));
      // Through the tool gateway: nothing wakes the tailer, so this is its poll path (as a write through another
      // gateway replica, or the approval sweeper).
      await measure('kill switch set_kill_switch (MCP tool, poll path)', (engaged) =>
        call(p, 'POST', '/api/v1/mcp/call', { key: p.writeKey, body: { tool_name: 'set_kill_switch', arguments: { engaged, agent_id: agent, ...(engaged ? { reason: 'test' } : {}) } } }),
      );
      // The organisation's switch concerns every agent.
      const from = main.events.length;
      expect((await call(p, 'PUT', '/api/v1/kill-switches/organization', { key: p.writeKey, body: { engaged: true, reason: 'incident' } })).status).toBe(200);
      expect((await main.next((x) => x.event === 'kill_switch.changed' && x.data.scope === 'organization', from)).data).toMatchObject({ engaged: true, reason: 'incident', agent_id: null });
      expect((await call(p, 'PUT', '/api/v1/kill-switches/organization', { key: p.writeKey, body: { engaged: false } })).status).toBe(200);
      await main.next((x) => x.event === 'kill_switch.changed' && x.data.scope === 'organization' && !x.data.engaged, from);
    });

    it('policy changes reach the streams of the agents they apply to, and no other', async () => {
      const p = platform();
      const from = main.events.length;
      const elsewhere = await policy(p, { name: `else2-${uniq()}`, agent_ids: [other] });
      const mine = await policy(p, { name: `mine-${uniq()}`, agent_ids: [agent] });
      const created = await main.next((x) => x.event === 'policy.changed' && x.data.policy_id === mine.body.id, from);
      expect(created.data).toMatchObject({ change: 'created', version: 1, agent_ids: [agent] });
      const patched = await call(p, 'PATCH', `/api/v1/policies/${mine.body.id}`, { key: p.writeKey, body: { description: 'tighter', run_budget: 5 } });
      expect(patched.status).toBe(200);
      const updated = await main.next((x) => x.event === 'policy.changed' && x.data.change === 'updated', from);
      expect(updated.data).toMatchObject({ policy_id: mine.body.id, version: 2, agent_ids: [agent], actor: expect.stringMatching(/^key:/) });
      expect(updated.data.fields.sort()).toEqual(['description', 'run_budget']);
      // Moving the policy to another agent tells this one (it no longer applies).
      expect((await call(p, 'PATCH', `/api/v1/policies/${mine.body.id}`, { key: p.writeKey, body: { agent_ids: [other] } })).status).toBe(200);
      await main.next((x) => x.event === 'policy.changed' && x.data.version === 3 && x.data.policy_id === mine.body.id, from);
      // Events arrive in position order: the other agent's policy, created first, would be here by now.
      expect(main.events.slice(from).filter((x) => x.data.policy_id === elsewhere.body.id)).toEqual([]);
      const ids = main.events.slice(from).map((x) => BigInt(x.id!));
      expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    });

    it('an approval decision for the agent reaches its stream', async () => {
      const p = platform();
      const from = main.events.length;
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent, reason: 'above threshold', estimated_cost_usd: 900 },
      });
      expect(r.status).toBe(201);
      const approvalId = `apr-${r.body.id}`;
      await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 200);
      const t0 = performance.now();
      expect((await call(p, 'POST', `/api/v1/approvals/${approvalId}/approve`, { key: p.writeKey, body: { approver_email: 'jane@acme.test', notes: 'ok' } })).status).toBe(200);
      const e = await main.next((x) => x.event === 'approval.decided', from);
      console.log(`[governance ${mode}] approve -> SSE event: ${(e.at - t0).toFixed(1)} ms`);
      expect(e.data).toMatchObject({ approval_id: approvalId, intervention_id: r.body.id, agent_id: agent, status: 'approved', notes: 'ok', decided_by: 'approver:jane@acme.test' });
    });

    it('a stream resumed with Last-Event-ID replays exactly what came after it, then goes live', async () => {
      const p = platform();
      const seen = main.events.filter((e) => e.event !== 'ready');
      expect(seen.length).toBeGreaterThan(10);
      const cut = seen[seen.length - 8];
      const resumed = await SseStream.open(p, agent, p.readKey, cut.id!);
      streams.push(resumed);
      expect(resumed.status).toBe(200);
      const ready = await resumed.next((e) => e.event === 'ready');
      const replayed = resumed.events.slice(0, resumed.events.indexOf(ready));
      expect(replayed.map((e) => [e.id, e.event])).toEqual(seen.slice(-7).map((e) => [e.id, e.event]));
      expect(BigInt(ready.id!)).toBeGreaterThanOrEqual(BigInt(seen.at(-1)!.id!));
      // Then live: the next change reaches both streams with the same id.
      const [mainFrom, resumedFrom] = [main.events.length, resumed.events.length];
      expect((await setSwitch(p, true)).status).toBe(200);
      const [a, b] = await Promise.all([main.next((x) => x.event === 'kill_switch.changed', mainFrom), resumed.next((x) => x.event === 'kill_switch.changed', resumedFrom)]);
      expect(a.data.engaged).toBe(true);
      expect(b.id).toBe(a.id);
      const releasedFrom = main.events.length;
      expect((await setSwitch(p, false)).status).toBe(200);
      // The feed has handed the release out: a stream opened now starts after it.
      await main.next((x) => x.event === 'kill_switch.changed', releasedFrom);
      expectProblem(await call(p, 'GET', `/api/v1/agents/${agent}/governance/events`, { key: p.readKey, headers: { 'last-event-id': 'yesterday' } }), 422, ['header.last-event-id']);
      // An id past the log's head (the platform's data was reset) starts live instead of skipping what comes.
      const reset = await SseStream.open(p, agent, p.readKey, '999999999999');
      const live = await reset.next((e) => e.event === 'ready');
      reset.close();
      expect(BigInt(live.id!)).toBeLessThan(999999999999n);
      expect(reset.events).toEqual([live]);
    });

    it('another organisation’s stream of the same agent id received none of these changes; heartbeats keep streams alive', async () => {
      await eventually(async () => foreign.comments.includes('heartbeat') && main.comments.includes('heartbeat'), 5000);
      expect(foreign.events.map((e) => e.event)).toEqual(['ready']);
    });

    it('at most AGP_GOVERNANCE_MAX_STREAMS streams per organisation (429), and a closed stream frees its place', async () => {
      const p = platform();
      // acme holds main and the resumed stream (the earlier test's last stream is closing): the limit is 3.
      const opened = async () => {
        const s = await SseStream.open(p, agent, p.readKey);
        return s.status === 200 ? s : null;
      };
      const third = await eventually(opened, 5000);
      streams.push(third);
      const fourth = await SseStream.open(p, agent, p.readKey);
      expect(fourth.status).toBe(429);
      expect(fourth.headers!.get('retry-after')).toBe('5');
      expect(fourth.problem).toMatchObject({ status: 429 });
      third.close();
      const again = await eventually(opened, 5000);
      streams.push(again);
    });
  },
  { env: { AGP_GOVERNANCE_MAX_STREAMS: '3', AGP_GOVERNANCE_HEARTBEAT_MS: '300' } },
);

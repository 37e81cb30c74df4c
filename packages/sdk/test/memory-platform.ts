/**
 * An in-memory transport for unit tests of the SDK: a `fetch` that answers the routes the SDK calls from state held
 * in memory, with no platform, no socket and no database. It serves the governance snapshot (with its ETag and 304),
 * the push channel (a Server-Sent Events body the test writes to and ends), ingest (207 per event, or 503 while
 * `ingestDown`), the synchronous interventions route, approvals, the agent registry, and the leases of fleet-wide
 * limits (`POST /api/v1/quotas/leases`: counters and leases in memory, the engine's `leaseSlice`). Every request is
 * recorded.
 * The shapes are the platform's (docs/api.md); the decisions stay the SDK's own (the policy engine it bundles).
 */
import { PolicySettingsSchema, type PolicySettings } from '@agp/contracts';
import { leaseSlice, quotaLimitOf, quotaWindow, type QuotaPolicy } from '@agp/policy-engine';
import type { z } from 'zod';

/** A policy record of the snapshot: the settings given, every other one empty, and the record fields. */
export function policyRecord(settings: Partial<z.input<typeof PolicySettingsSchema>> & { name?: string }, id = `pol-${Math.random().toString(36).slice(2, 8)}`): Record<string, unknown> {
  const base: PolicySettings = { name: id, description: null, enabled: true, session_budget: null, run_budget: null, denied_actions: [], allowed_actions: null, approval_required_actions: [], rate_limits: {}, agent_ids: [], action_budget: null, downgrades: [], guardrails: {}, period_budgets: [], approvals_required: 1, separation_of_duties: false, auto_kill_switch: null };
  const parsed = PolicySettingsSchema.parse({ ...base, ...settings });
  return { ...parsed, id, organization_id: 'org-1', version: 1, created_at: '2026-11-28T00:00:00.000Z', updated_at: '2026-11-28T00:00:00.000Z' };
}

/** Wait until `check` is true (polling every 10 ms, at most `ms`). */
export async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not true within ${ms} ms: ${check}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One open push-channel stream: write events to it, or end it. */
export interface MemoryStream {
  /** The `Last-Event-ID` the client sent, if any. */
  lastEventId: string | undefined;
  /** Send one event (`id:` when given). */
  send(event: string, data: unknown, id?: string): void;
  /** Send raw bytes. */
  raw(text: string): void;
  /** End the stream (the server closed it). */
  end(): void;
  /** Whether the client aborted it. */
  aborted: boolean;
}

/** An ingest event as the platform stored it. */
export interface StoredReport {
  id: string;
  type: string;
  timestamp: string;
  body: Record<string, unknown>;
}

/** A fleet-wide counter: `committed` = Σ active leases' max(held, spent) + Σ ended leases' spent. */
export interface MemoryCounter {
  policy_id: string;
  limit: string;
  scope_key: string;
  window_start: number;
  limit_value: number;
  committed: number;
  spent: number;
  overshoot: number;
}

/** A lease as the memory platform keeps it. */
export interface MemoryLease {
  lease_id: string;
  holder: string;
  counter: string;
  held: number;
  spent: number;
  seq: number;
  status: 'active' | 'released' | 'expired';
  expires_at: number;
  window_end: number | null;
}

/** See the module docs. */
export class MemoryPlatform {
  readonly agentId: string;
  policies: Array<Record<string, unknown>> = [];
  killSwitches = { organization: { engaged: false, reason: null as string | null }, agents: [] as Array<{ agent_id: string; engaged: boolean; reason: string | null }> };
  /** Answer the snapshot route with this status instead (e.g. 503). */
  snapshotStatus = 200;
  /** Answer ingest 503 while true. */
  ingestDown = false;
  /** Answer each ingest request only after this many ms (a slow platform). */
  ingestDelayMs = 0;
  /** Answer the push channel with this status instead of a stream (e.g. 503). */
  streamStatus = 200;
  /** Reports stored, by id (each once). */
  readonly reports = new Map<string, StoredReport>();
  /** Interventions recorded through `POST /api/v1/interventions`, by id. */
  readonly interventions = new Map<string, Record<string, unknown>>();
  /** Approvals by id: status and the approver's notes; `original_inputs` from its intervention. */
  readonly approvals = new Map<string, { status: 'pending' | 'approved' | 'rejected' | 'expired'; notes: string | null; original_inputs: Record<string, unknown> }>();
  /** Registered agents, by id. */
  readonly agents = new Map<string, Record<string, unknown>>();
  /** Push-channel streams opened, oldest first. */
  readonly streams: MemoryStream[] = [];
  /** Every request: method and path. */
  readonly requests: Array<{ method: string; path: string }> = [];
  /** Fleet-wide counters by key (policy, limit, scope key, window start). */
  readonly counters = new Map<string, MemoryCounter>();
  /** Leases by id. */
  readonly leases = new Map<string, MemoryLease>();
  /** Answer the lease route with this status instead (e.g. 503). */
  quotasStatus = 200;
  /** Answer each lease request only after this many ms. */
  leaseDelayMs = 0;
  /** How long a lease lasts without renewal, ms. */
  leaseTtlMs = 15_000;
  private gen = 0;

  constructor(agentId = 'agent-1') {
    this.agentId = agentId;
  }

  /** The `fetch` to give `Governor.connect`. */
  readonly fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init?.method ?? 'GET';
    const path = decodeURIComponent(url.pathname);
    const headers = new Headers(init?.headers);
    this.requests.push({ method, path });
    const json = (status: number, body: unknown, extra: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...extra } });
    const notFound = () => json(404, { type: 'about:blank', title: 'Not Found', status: 404, detail: `${path} not found` });
    const agents = '/api/v1/agents/';
    if (method === 'GET' && path === `${agents}${this.agentId}/governance`) {
      if (this.snapshotStatus !== 200) return json(this.snapshotStatus, { type: 'about:blank', title: 'Unavailable', status: this.snapshotStatus, detail: 'down' });
      const etag = `"s${this.gen}"`;
      if (headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers: { etag } });
      return json(200, { agent_id: this.agentId, policies: this.policies, kill_switches: this.killSwitches }, { etag });
    }
    if (method === 'GET' && path === `${agents}${this.agentId}/governance/events`) {
      if (this.streamStatus !== 200) return json(this.streamStatus, { type: 'about:blank', title: 'Unavailable', status: this.streamStatus, detail: 'no stream' });
      return this.openStream(headers.get('last-event-id') ?? undefined, init?.signal ?? undefined);
    }
    if (method === 'POST' && path === '/api/v1/ingest/') {
      if (this.ingestDown) return json(503, { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'ingest down' });
      if (this.ingestDelayMs > 0) await new Promise((r) => setTimeout(r, this.ingestDelayMs));
      const { batch } = JSON.parse(String(init?.body)) as { batch: StoredReport[] };
      const successes = batch.map((ev) => {
        const dup = this.reports.has(ev.id);
        if (!dup) this.reports.set(ev.id, ev);
        return dup ? { id: ev.id, status: 200, result: 'duplicate' } : { id: ev.id, status: 201, result: 'created' };
      });
      return json(207, { successes, errors: [] });
    }
    if (method === 'POST' && path === '/api/v1/quotas/leases') {
      if (this.leaseDelayMs > 0) await new Promise((r) => setTimeout(r, this.leaseDelayMs));
      if (this.quotasStatus !== 200) return json(this.quotasStatus, { type: 'about:blank', title: 'Unavailable', status: this.quotasStatus, detail: 'quotas down' });
      const out = this.lease(JSON.parse(String(init?.body)));
      return 'problem' in out ? json(out.problem.status, out.problem) : json(200, out.answer);
    }
    if (method === 'POST' && path === '/api/v1/interventions') {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      const id = `int-${this.interventions.size + 1}`;
      this.interventions.set(id, body);
      if (body.outcome === 'escalated') this.approvals.set(`apr-${id}`, { status: 'pending', notes: null, original_inputs: body.original_inputs as Record<string, unknown> });
      return json(201, { ...body, id });
    }
    if (method === 'GET' && path.startsWith('/api/v1/approvals/')) {
      const id = path.slice('/api/v1/approvals/'.length);
      const a = this.approvals.get(id);
      if (!a) return notFound();
      return json(200, { id, intervention_id: id.slice(4), agent_id: this.agentId, status: a.status, notes: a.notes, approver_email: a.status === 'pending' ? null : 'ops@example.com', original_inputs: a.original_inputs });
    }
    if (method === 'GET' && path.startsWith(agents)) {
      const a = this.agents.get(path.slice(agents.length));
      return a ? json(200, a) : notFound();
    }
    if (method === 'POST' && path === '/api/v1/agents') {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      const created = !this.agents.has(body.agent_id as string);
      this.agents.set(body.agent_id as string, { actions: [], ...body });
      return json(created ? 201 : 200, this.agents.get(body.agent_id as string));
    }
    return notFound();
  }) as typeof fetch;

  /** The counter of `limit` of policy `policyId` (the first when several scope keys or windows exist). */
  counter(policyId: string, limit: string): MemoryCounter | undefined {
    return [...this.counters.values()].find((c) => c.policy_id === policyId && c.limit === limit);
  }

  /** `POST /api/v1/quotas/leases`: checks every item first (404/409/422: nothing applied), then reports, then grants. */
  private lease(body: { holder: string; acquire?: Array<{ policy_id: string; limit: string; agent_id: string; session_id?: string; run_id?: string; need?: number }>; report?: Array<{ lease_id: string; seq: number; spent: number; release?: boolean }> }) {
    const now = Date.now();
    const problem = (status: number, path: string, message: string) => ({ problem: { type: 'about:blank', title: status === 404 ? 'Not Found' : status === 409 ? 'Conflict' : 'Unprocessable Content', status, detail: `${path}: ${message}`, errors: [{ path, message }] } });
    const acquire = body.acquire ?? [];
    const report = body.report ?? [];
    for (const l of this.leases.values()) if (l.status === 'active' && l.expires_at <= now) this.expire(l);
    const grants: Array<{ key: string; limit_value: number; unit: 'usd' | 'calls'; need: number; window_end: number | null; policy_id: string; limit: string; scope_key: string; window_start: number }> = [];
    for (const [i, a] of acquire.entries()) {
      const p = this.policies.find((x) => x.id === a.policy_id && x.enabled) as unknown as QuotaPolicy | undefined;
      const lim = p && quotaLimitOf(p, a.limit);
      if (!p || !lim) return problem(404, `acquire.${i}.policy_id`, `no policy ${a.policy_id} with limit ${a.limit}`);
      const scopeKey = lim.scope === 'run' ? a.run_id : lim.scope === 'session' ? a.session_id : lim.scope === 'agent' ? a.agent_id : 'org-1';
      if (!scopeKey) return problem(422, `acquire.${i}.${lim.scope}_id`, 'required for this limit');
      const w = quotaWindow(p, a.limit, now) ?? null;
      const start = w ? w.start : 0;
      grants.push({ key: `${a.policy_id}|${a.limit}|${scopeKey}|${start}`, limit_value: lim.value, unit: lim.unit, need: a.need ?? 0, window_end: w ? w.end : null, policy_id: a.policy_id, limit: a.limit, scope_key: scopeKey, window_start: start });
    }
    for (const [i, r] of report.entries()) {
      const l = this.leases.get(r.lease_id);
      if (!l) return problem(404, `report.${i}.lease_id`, 'no such lease');
      if (l.holder !== body.holder || l.status !== 'active') return problem(409, `report.${i}.lease_id`, `lease is ${l.status}`);
    }
    const leases: unknown[] = [];
    const released: string[] = [];
    for (const r of report) {
      const l = this.leases.get(r.lease_id) as MemoryLease;
      const c = this.counters.get(l.counter) as MemoryCounter;
      if (r.seq > l.seq) {
        l.seq = r.seq;
        c.committed += Math.max(l.held, r.spent) - Math.max(l.held, l.spent);
        c.spent += r.spent - l.spent;
        c.overshoot += Math.max(0, r.spent - l.held) - Math.max(0, l.spent - l.held);
        l.spent = r.spent;
        l.expires_at = Math.min(now + this.leaseTtlMs, l.window_end ?? Infinity);
        if (r.release) {
          l.status = 'released';
          c.committed -= Math.max(0, l.held - l.spent);
        }
      }
      if (l.status === 'released') released.push(l.lease_id);
      else leases.push(this.leaseView(l, 0, false));
    }
    for (const g of grants) {
      let c = this.counters.get(g.key);
      if (!c) this.counters.set(g.key, (c = { policy_id: g.policy_id, limit: g.limit, scope_key: g.scope_key, window_start: g.window_start, limit_value: g.limit_value, committed: 0, spent: 0, overshoot: 0 }));
      c.limit_value = g.limit_value;
      const active = [...this.leases.values()].filter((l) => l.counter === g.key && l.status === 'active');
      let mine = active.find((l) => l.holder === body.holder);
      const amount = leaseSlice({ limit_value: g.limit_value, committed: c.committed, need: g.need, others: active.length - (mine ? 1 : 0), unit: g.unit });
      if (amount > 0 && !mine) {
        mine = { lease_id: `lease-${this.leases.size + 1}`, holder: body.holder, counter: g.key, held: 0, spent: 0, seq: 0, status: 'active', expires_at: 0, window_end: g.window_end };
        this.leases.set(mine.lease_id, mine);
      }
      if (mine) {
        c.committed += Math.max(mine.held + amount, mine.spent) - Math.max(mine.held, mine.spent);
        mine.held += amount;
        mine.expires_at = Math.min(now + this.leaseTtlMs, g.window_end ?? Infinity);
        leases.push(this.leaseView(mine, amount, amount === 0 && g.need > 0));
      } else {
        leases.push({ lease_id: '', policy_id: g.policy_id, limit: g.limit, unit: g.unit, scope_key: g.scope_key, status: 'released', held: 0, spent: 0, granted: 0, exhausted: g.need > 0, expires_at: new Date(now).toISOString(), window_start: null, window_end: null, limit_value: g.limit_value, remaining: g.limit_value - c.committed, holders: active.length });
      }
    }
    return { answer: { holder: body.holder, leases, released } };
  }

  /** An active lease past its expiry: what it did not spend returns to its counter. */
  private expire(l: MemoryLease): void {
    const c = this.counters.get(l.counter) as MemoryCounter;
    c.committed -= Math.max(0, l.held - l.spent);
    l.status = 'expired';
  }

  private leaseView(l: MemoryLease, granted: number, exhausted: boolean) {
    const c = this.counters.get(l.counter) as MemoryCounter;
    const holders = [...this.leases.values()].filter((x) => x.counter === l.counter && x.status === 'active').length;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return { lease_id: l.lease_id, policy_id: c.policy_id, limit: c.limit, unit: c.limit.startsWith('rate_limit:') ? 'calls' : 'usd', scope_key: c.scope_key, status: l.status, held: l.held, spent: l.spent, granted, exhausted, expires_at: new Date(l.expires_at).toISOString(), window_start: l.window_end === null ? null : iso(c.window_start), window_end: iso(l.window_end), limit_value: c.limit_value, remaining: c.limit_value - c.committed, holders };
  }

  /** The snapshot changed (its ETag changes). */
  changed(): void {
    this.gen++;
  }

  /** The newest stream. */
  get stream(): MemoryStream {
    const s = this.streams.at(-1);
    if (!s) throw new Error('no push-channel stream was opened');
    return s;
  }

  /** Reports of `type`, in the order they were stored. */
  reportsOf(type: string): StoredReport[] {
    return [...this.reports.values()].filter((r) => r.type === type);
  }

  private openStream(lastEventId: string | undefined, signal: AbortSignal | undefined): Response {
    const enc = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let open = true;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      cancel() {
        open = false;
      },
    });
    const stream: MemoryStream = {
      lastEventId,
      aborted: false,
      send: (event, data, id) => stream.raw(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
      raw: (text) => {
        if (open) controller.enqueue(enc.encode(text));
      },
      end: () => {
        if (open) controller.close();
        open = false;
      },
    };
    signal?.addEventListener('abort', () => {
      stream.aborted = true;
      if (open) controller.error(signal.reason);
      open = false;
    });
    this.streams.push(stream);
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }
}

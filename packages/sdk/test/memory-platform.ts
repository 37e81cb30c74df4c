/**
 * An in-memory transport for unit tests of the SDK: a `fetch` that answers the routes the SDK calls from state held
 * in memory, with no platform, no socket and no database. It serves the governance snapshot (with its ETag and 304),
 * the push channel (a Server-Sent Events body the test writes to and ends), ingest (207 per event, or 503 while
 * `ingestDown`), the synchronous interventions route, approvals, and the agent registry. Every request is recorded.
 * The shapes are the platform's (docs/api.md); the decisions stay the SDK's own (the policy engine it bundles).
 */
import { PolicySettingsSchema, type PolicySettings } from '@agp/contracts';

/** A policy record of the snapshot: the settings given, every other one empty, and the record fields. */
export function policyRecord(settings: Partial<PolicySettings> & { name?: string }, id = `pol-${Math.random().toString(36).slice(2, 8)}`): Record<string, unknown> {
  const base: PolicySettings = { name: id, description: null, enabled: true, session_budget: null, run_budget: null, denied_actions: [], allowed_actions: null, approval_required_actions: [], rate_limits: {}, agent_ids: [], action_budget: null, downgrades: [], guardrails: {}, period_budgets: [] };
  const parsed = PolicySettingsSchema.parse({ ...base, ...settings });
  return { ...parsed, id, organization_id: 'org-1', version: 1, created_at: '2026-11-28T00:00:00.000Z', updated_at: '2026-11-28T00:00:00.000Z' };
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

/**
 * The push channel of one agent: ONE Server-Sent Events connection to
 * `GET /api/v1/agents/{agent_id}/governance/events`, read with the SDK's own reader (./sse.ts).
 * - `ready`: the stream is live; the snapshot is refetched once (If-None-Match: usually a 304) so a change made
 *   between the snapshot's load and the stream's start is not missed, and it counts as confirmed while live.
 * - `kill_switch.changed`: applied to the snapshot at once (the event holds the whole new state).
 * - `policy.changed`: the snapshot is refetched.
 * - `approval.decided`: a waiting escalation is woken (it then reads its approval).
 * - `: heartbeat` comments (every 15 s) and any other bytes keep it live; nothing for `livenessMs` → reconnect.
 * An event name the SDK does not know (a newer platform's) is ignored, as the SSE format and every long-lived client
 * expect: the stream stays open, and each unknown name is logged once at debug (`NODE_DEBUG=agp-sdk`). A known event
 * the SDK does not understand (a non-JSON `data:`, a shape that does not parse) drops the stream, which is
 * reconnected: it never throws into the agent. Reconnects wait a jittered
 * exponential back-off (250 ms doubling to 30 s; a 429's Retry-After when longer) and resume with `Last-Event-ID`.
 * While the stream is down the snapshot is polled every `pollIntervalMs` (ETag makes a poll of an unchanged snapshot
 * a 304); while it is up, only when the last refetch failed. Source: docs/sdk.md §Live updates; docs/decisions.md (governance snapshot and push channel).
 */
import { GOVERNANCE_SSE_EVENTS, GovernanceApprovalDecidedSchema, GovernanceKillSwitchChangedSchema, GovernancePolicyChangedSchema, GovernanceReadySchema } from '@agp/contracts';
import type { z } from 'zod';
import { debuglog } from 'node:util';
import { readSse, type SseEvent } from './sse.js';
import type { SnapshotSource } from './snapshot.js';
import type { ChannelState } from './status.js';

export type { ChannelState } from './status.js';

/** An approval decision heard on the channel. */
export type ApprovalDecided = z.infer<typeof GovernanceApprovalDecidedSchema>;

/** Options of {@link GovernanceChannel}. Durations in ms. */
export interface ChannelOptions {
  fetch: typeof fetch;
  base: string;
  key: string;
  agentId: string;
  /** Poll interval of the snapshot while the stream is down. */
  pollIntervalMs: number;
  /** No bytes for this long on a connected stream → it is dropped and reconnected. @default 45000 (3 heartbeats) */
  livenessMs?: number;
  /** Called for each approval decision. */
  onApproval(a: ApprovalDecided): void;
}

/** The events the SDK acts on (the push channel's events, `GOVERNANCE_SSE_EVENTS` of @agp/contracts); any other is ignored. */
const KNOWN_EVENTS: ReadonlySet<string> = new Set(GOVERNANCE_SSE_EVENTS);

const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 30_000;

/** Debug log of the SDK (`NODE_DEBUG=agp-sdk`). */
const debug = debuglog('agp-sdk');

/** A known event the SDK does not understand: the stream is dropped. */
class StreamGarbage extends Error {}

/** See the module docs. */
export class GovernanceChannel {
  state: ChannelState = 'connecting';
  /** Why the stream last dropped or failed, null while none did. */
  lastError: string | null = null;
  /** Streams opened (each `ready` heard) and dropped since connect. */
  readonly counts = { connects: 0, drops: 0 };
  private lastEventId: string | null = null;
  private failures = 0;
  /** When the current stream sent `ready` (ms since the epoch), or 0. */
  private connectedAt = 0;
  private pollGen = 0;
  /** Unknown event names already logged (each once). */
  private readonly unknownEvents = new Set<string>();
  private abort: AbortController | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private livenessTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly snapshot: SnapshotSource,
    private readonly opts: ChannelOptions,
  ) {}

  /** Open the stream (in the background), and poll the snapshot whenever it is not live. */
  start(): void {
    this.startPolling();
    void this.connect();
  }

  /** End the stream and every timer. */
  stop(): void {
    this.state = 'closed';
    this.abort?.abort();
    this.stopPolling();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    this.snapshot.setLive(false);
  }

  private async connect(): Promise<void> {
    if (this.state === 'closed') return;
    const abort = new AbortController();
    this.abort = abort;
    let retryAfterMs = 0;
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.opts.key}`, accept: 'text/event-stream' };
      if (this.lastEventId !== null) headers['last-event-id'] = this.lastEventId;
      const res = await this.opts.fetch(`${this.opts.base}/api/v1/agents/${encodeURIComponent(this.opts.agentId)}/governance/events`, { headers, signal: abort.signal });
      if (res.status !== 200 || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        const text = await res.text().catch(() => '');
        retryAfterMs = Math.max(0, Number(res.headers.get('retry-after')) * 1000 || 0);
        throw new Error(`the push channel answered ${res.status} ${res.headers.get('content-type') ?? ''}: ${text.slice(0, 200)}`);
      }
      this.touch();
      await readSse(res.body, {
        onBytes: () => this.touch(),
        onComment: () => undefined,
        onEvent: (e) => this.onEvent(e),
      });
      throw new Error('the push channel ended');
    } catch (err) {
      if ((this.state as ChannelState) === 'closed') return;
      abort.abort();
      this.lastError = err instanceof Error ? err.message : String(err);
      this.down(retryAfterMs);
    }
  }

  /** Bytes arrived: the stream is alive; re-arm the liveness timer. */
  private touch(): void {
    if (this.state === 'connected') this.snapshot.setLive(true);
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    this.livenessTimer = setTimeout(() => this.abort?.abort(new Error(`no bytes on the push channel for ${this.opts.livenessMs ?? 45_000} ms`)), this.opts.livenessMs ?? 45_000);
    this.livenessTimer.unref();
  }

  private onEvent(e: SseEvent): void {
    if (!KNOWN_EVENTS.has(e.event)) {
      const name = e.event.slice(0, 64);
      if (this.unknownEvents.size < 100 && !this.unknownEvents.has(name)) {
        this.unknownEvents.add(name);
        debug('the push channel sent an event this SDK does not know, %j: ignored', name);
      }
      if (e.id !== null) this.lastEventId = e.id;
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(e.data);
    } catch {
      throw new StreamGarbage(`the push channel sent a ${e.event} event whose data is not JSON: ${e.data.slice(0, 100)}`);
    }
    const parse = <T>(schema: z.ZodType<T>): T => {
      const r = schema.safeParse(data);
      if (!r.success) throw new StreamGarbage(`the push channel sent a ${e.event} event the SDK does not understand: ${r.error.issues.slice(0, 2).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      return r.data;
    };
    switch (e.event) {
      case 'ready':
        parse(GovernanceReadySchema);
        this.counts.connects++;
        this.connectedAt = Date.now();
        this.state = 'connected';
        this.lastError = null;
        this.snapshot.setLive(true);
        void this.snapshot.refresh();
        break;
      case 'kill_switch.changed':
        this.snapshot.applyKillSwitch(parse(GovernanceKillSwitchChangedSchema));
        break;
      case 'policy.changed':
        void this.applyPolicyChange(parse(GovernancePolicyChangedSchema));
        break;
      case 'approval.decided':
        this.opts.onApproval(parse(GovernanceApprovalDecidedSchema));
        break;
    }
    if (e.id !== null) this.lastEventId = e.id;
  }

  /**
   * Refetch the snapshot after a `policy.changed` event. The event comes from the event log, the snapshot from the
   * policies read model, which may not have applied the change yet (distributed mode): while a policy that should now
   * apply to the agent (not disabled, in scope) is missing or older than the event's version, the refetch is repeated
   * (50 ms doubling, for at most 5 s; each is an If-None-Match request, a 304 when nothing changed). Any other change
   * gets one more refetch 250 ms later for the same reason.
   */
  private async applyPolicyChange(e: { policy_id: string; version: number; change: string; agent_ids: string[] }): Promise<void> {
    const shouldApply = e.change !== 'disabled' && (e.agent_ids.length === 0 || e.agent_ids.includes(this.opts.agentId));
    const reflected = () => {
      // The snapshot holds the platform's policy records, which carry their version (the engine's type does not name it).
      const p = this.snapshot.current?.policies.find((x) => x.id === e.policy_id) as { version?: unknown } | undefined;
      return p !== undefined && (typeof p.version !== 'number' || p.version >= e.version);
    };
    await this.snapshot.refresh();
    if (!shouldApply) {
      await new Promise((r) => setTimeout(r, 250));
      if (this.state !== 'closed') await this.snapshot.refresh();
      return;
    }
    for (let wait = 50, spent = 0; !reflected() && spent < 5000 && this.state !== 'closed'; spent += wait, wait = Math.min(wait * 2, 1000)) {
      await new Promise((r) => setTimeout(r, wait));
      await this.snapshot.refresh();
    }
  }

  /** The stream dropped or could not open: poll, and reconnect after a jittered back-off. */
  private down(retryAfterMs: number): void {
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    if (this.state === 'connected') {
      this.counts.drops++;
      // A stream that stayed up a while resets the back-off; one that says `ready` and then garbage does not.
      if (Date.now() - this.connectedAt > 10_000) this.failures = 0;
    }
    this.snapshot.setLive(false);
    this.failures++;
    this.state = this.failures >= 3 ? 'polling' : 'reconnecting';
    this.startPolling();
    const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(this.failures - 1, 10));
    const delay = Math.max(retryAfterMs, cap / 2 + Math.random() * (cap / 2));
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private startPolling(): void {
    if (this.pollTimer || this.state === 'closed') return;
    const gen = ++this.pollGen;
    const tick = () => {
      this.pollTimer = setTimeout(() => {
        // Connected: changes are pushed; poll only to retry a refetch that failed.
        const skip = this.state === 'connected' && this.snapshot.lastError === null;
        void (skip ? Promise.resolve() : this.snapshot.refresh()).then(() => this.pollTimer && gen === this.pollGen && tick());
      }, this.opts.pollIntervalMs);
      this.pollTimer.unref();
    };
    tick();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.pollGen++;
  }
}

/**
 * The gateway's governance feed: what the push channel (`GET /api/v1/agents/{agent_id}/governance/events`) streams.
 * One tailer per gateway process reads the event store's global log, filtered to the policy, kill-switch and
 * intervention-outcome event types, every `pollMs` while at least one stream is open (nothing while none is), and fans
 * each event out to the open streams of its organisation that it concerns. A stream that resumes (`Last-Event-ID`)
 * first reads what it missed from the same log, scoped to its organisation, then joins the live fan-out; positions
 * dedupe the seam. A change written through this gateway (a policy, kill-switch or approval route answered 2xx)
 * wakes the tailer at once, so it is read without waiting for the next tick. The log is read through the event
 * store's port (`readAll` filtered by type, `headPosition`, `readStream` for what scoping needs), so every adapter
 * (PostgreSQL, PGlite, KurrentDB) serves it alike.
 * Why polling the log rather than a NATS notification: docs/decisions.md (governance push channel).
 * Source: the SDK's live policies, kill switches and approvals; architecture §3 (event store: global positions
 * are committed in order).
 */
import {
  APPROVAL_EXPIRED_REASON,
  GOVERNANCE_SOURCE_EVENT_TYPES,
  InterventionEvents,
  KillSwitchEvents,
  PolicyEvents,
  type GovernanceSseEvent,
  type InterventionOutcomeChangedData,
  type KillSwitchChangedData,
} from '@agp/contracts';
import type { EventStore, StoredEvent } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';

/** One event of the feed, as a stream sends it. */
export interface FeedEvent {
  /** The event store's global position: the SSE `id:`. */
  position: bigint;
  organization_id: string;
  event: Exclude<GovernanceSseEvent, 'ready'>;
  /** The SSE `data:` object. */
  data: Record<string, unknown>;
  /** The agents it concerns; null = every agent of the organisation. */
  agents: readonly string[] | null;
}

/** A stream's end of the feed. */
export interface FeedSubscriber {
  organization_id: string;
  agent_id: string;
  /** Called in position order with each live event that concerns the subscriber. Must not throw. */
  deliver(event: FeedEvent): void;
}

/**
 * A feed event as read from the log, with what scoping needs from its stream: an outcome change's agent (its
 * intervention's first event), and a policy's agent scope as of that event (the latest `agent_ids` its stream set at
 * or before it).
 */
export interface FeedRow {
  position: string;
  event_type: string;
  data: unknown;
  organization_id: string;
  actor: string | null;
  stream_version: number;
  recorded_at: unknown;
  approval_agent: string | null;
  policy_scope: unknown;
}

const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const POLICY_CHANGE: Record<string, 'created' | 'updated' | 'enabled' | 'disabled'> = {
  [PolicyEvents.Created]: 'created',
  [PolicyEvents.Updated]: 'updated',
  [PolicyEvents.Enabled]: 'enabled',
  [PolicyEvents.Disabled]: 'disabled',
};

/**
 * A row as a feed event, or null when it is none (an outcome change that decides no approval).
 * - Policy events: `policy.changed`, concerning every agent when the policy's scope is (or was, before an update of
 *   `agent_ids`) empty, else the agents in its scope before and after.
 * - Kill-switch events: `kill_switch.changed`, the organisation's concerning every agent.
 * - An outcome change from `escalated`: `approval.decided` (approved, rejected, or expired when its reason is
 *   `expired`), concerning the intervention's agent.
 */
export function feedEventOf(r: FeedRow): FeedEvent | null {
  const position = BigInt(r.position);
  const data = parse<Record<string, unknown>>(r.data);
  const base = { position, organization_id: r.organization_id };
  const actor = r.actor ?? 'system';
  const change = POLICY_CHANGE[r.event_type];
  if (change) {
    const after = (parse<string[] | null>(r.policy_scope) ?? []) as string[];
    const changes = (data.changes ?? {}) as Record<string, { from?: unknown; to?: unknown }>;
    const before = Array.isArray(changes.agent_ids?.from) ? (changes.agent_ids.from as string[]) : after;
    const agents = after.length === 0 || before.length === 0 ? null : [...new Set([...before, ...after])];
    return {
      ...base,
      event: 'policy.changed',
      agents,
      data: { policy_id: String(data.id), version: r.stream_version, change, fields: change === 'updated' ? Object.keys(changes) : [], agent_ids: after, actor, at: typeof data.at === 'string' ? data.at : iso(r.recorded_at) },
    };
  }
  if (r.event_type === KillSwitchEvents.Engaged || r.event_type === KillSwitchEvents.Released) {
    const d = data as unknown as KillSwitchChangedData;
    return {
      ...base,
      event: 'kill_switch.changed',
      agents: d.scope === 'organization' ? null : [d.agent_id ?? ''],
      data: { scope: d.scope, agent_id: d.agent_id, engaged: r.event_type === KillSwitchEvents.Engaged, reason: d.reason, changed_by: actor, at: d.at },
    };
  }
  if (r.event_type === InterventionEvents.OutcomeChanged && r.approval_agent !== null) {
    const d = data as unknown as InterventionOutcomeChangedData;
    const status = d.to === 'approved_after_review' ? 'approved' : d.reason === APPROVAL_EXPIRED_REASON ? 'expired' : 'rejected';
    return {
      ...base,
      event: 'approval.decided',
      agents: [r.approval_agent],
      data: { approval_id: `apr-${d.id}`, intervention_id: d.id, agent_id: r.approval_agent, status, decided_by: actor, notes: d.notes ?? null, at: iso(r.recorded_at) },
    };
  }
  return null;
}

/** Whether `e` concerns `s`: the same organisation, and the agent among those it concerns (or every agent). */
export const concerns = (e: FeedEvent, s: Pick<FeedSubscriber, 'organization_id' | 'agent_id'>) =>
  e.organization_id === s.organization_id && (e.agents === null || e.agents.includes(s.agent_id));

/** What the feed reads of the event store. */
export type GovernanceLog = Pick<EventStore, 'readAll' | 'readStream' | 'headPosition'>;

/** The policy scope (`agent_ids`) stream `events` set at or before version `version`, or null when none did. */
function policyScopeAt(events: readonly StoredEvent[], version: number): unknown {
  let scope: unknown = null;
  for (const p of events) {
    if (p.stream_version > version) break;
    const changes = p.data.changes as Record<string, { to?: unknown }> | undefined;
    if (p.type === PolicyEvents.Created) scope = p.data.agent_ids ?? null;
    else if (changes && typeof changes === 'object' && 'agent_ids' in changes) scope = changes.agent_ids?.to ?? p.data.agent_ids ?? null;
  }
  return scope;
}

/**
 * The feed rows of `events` (feed event types, in position order): each with its approval agent or policy scope,
 * read from its stream (each stream once per call).
 */
export async function feedRowsOf(log: Pick<EventStore, 'readStream'>, events: readonly StoredEvent[]): Promise<FeedRow[]> {
  const streams = new Map<string, Promise<StoredEvent[]>>();
  const streamOf = (id: string) => {
    let s = streams.get(id);
    if (!s) streams.set(id, (s = log.readStream(id)));
    return s;
  };
  const rows: FeedRow[] = [];
  for (const e of events) {
    const decidesApproval = e.type === InterventionEvents.OutcomeChanged && e.data.from === 'escalated';
    const isPolicy = e.type.startsWith('Policy');
    const stream = decidesApproval || isPolicy ? await streamOf(e.stream_id) : [];
    const first = stream.find((x) => x.stream_version === 1);
    rows.push({
      position: String(e.global_position),
      event_type: e.type,
      data: e.data,
      organization_id: e.metadata.organization_id,
      actor: e.metadata.actor ?? null,
      stream_version: e.stream_version,
      recorded_at: e.recorded_at,
      approval_agent: decidesApproval && typeof first?.data.agent_id === 'string' ? first.data.agent_id : null,
      policy_scope: isPolicy ? policyScopeAt(stream, e.stream_version) : null,
    });
  }
  return rows;
}

/** Options of {@link GovernanceFeed}. */
export interface GovernanceFeedOptions {
  /** The event store's log. */
  store: GovernanceLog;
  logger: Logger;
  /** How often the tailer reads the log while streams are open, in ms (`AGP_GOVERNANCE_POLL_MS`). @default 100 */
  pollMs?: number;
  /** Events per read. @default 500 */
  batchSize?: number;
}

/** See the module docstring. */
export class GovernanceFeed {
  private readonly subscribers = new Set<FeedSubscriber>();
  /** Where the tailer is: every feed event at or below it was handed out. Null while stopped. */
  private pos: bigint | null = null;
  private starting: Promise<bigint> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** A wake-up came while a read ran: read again right after it. */
  private again = false;
  private closed = false;
  private readonly pollMs: number;
  private readonly batchSize: number;

  constructor(private readonly opts: GovernanceFeedOptions) {
    this.pollMs = opts.pollMs ?? 100;
    this.batchSize = opts.batchSize ?? 500;
  }

  /** Open streams, by organisation. */
  streamsOf(organizationId: string): number {
    let n = 0;
    for (const s of this.subscribers) if (s.organization_id === organizationId) n++;
    return n;
  }

  /**
   * Add a subscriber; starts the tailer when it is the first. Resolves with the tailer's position once it runs: every
   * feed event after it reaches the subscriber live (events at or below it are history, read with {@link replay}).
   * @throws what reading the log's head throws (the database down); the subscriber is removed again then.
   */
  async add(s: FeedSubscriber): Promise<bigint> {
    this.subscribers.add(s);
    try {
      if (this.pos !== null) {
        this.schedule();
        return this.pos;
      }
      this.starting ??= this.head().then((h) => {
        this.starting = null;
        // Every subscriber left while the head was read: stay stopped (the next one starts again).
        if (this.subscribers.size === 0) return h;
        this.pos = h;
        this.schedule();
        return h;
      }, (err) => {
        this.starting = null;
        throw err;
      });
      return await this.starting;
    } catch (err) {
      this.remove(s);
      throw err;
    }
  }

  /** Remove a subscriber; the tailer stops with the last one (and starts again from the head with the next). */
  remove(s: FeedSubscriber): void {
    this.subscribers.delete(s);
    if (this.subscribers.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.pos = null;
    }
  }

  /**
   * The organisation's feed events after `from` (exclusive) up to what is committed now, in position order, a page
   * at a time, each handed to `each`; `each` returning false stops the read (the stream closed).
   * @returns the position of the last event read, or `from`.
   */
  async replay(organizationId: string, from: bigint, each: (e: FeedEvent) => boolean): Promise<bigint> {
    let at = from;
    for (;;) {
      const { rows, last, full } = await this.read(at, organizationId);
      for (const r of rows) {
        at = BigInt(r.position);
        const e = feedEventOf(r);
        if (e && !each(e)) return at;
      }
      at = last;
      if (!full) return at;
    }
  }

  /**
   * Read the log now instead of at the next tick (a change was just written through this gateway: its answer came
   * after the event committed). While a read runs, one more follows it at once. Nothing while no stream is open.
   */
  wake(): void {
    if (this.pos === null || this.closed) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    void this.poll();
  }

  /** Stop the tailer and forget every subscriber (their streams are ended by their owners). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.subscribers.clear();
  }

  /** The event log's head: its highest global position (0 when empty). @throws when the database cannot answer. */
  head(): Promise<bigint> {
    return this.opts.store.headPosition();
  }

  /**
   * A page of feed events after `from` (at most `batchSize` read), kept to `organizationId`'s when not null: the rows,
   * the position of the last event read (or `from`), and whether the page was full (more may follow).
   */
  private async read(from: bigint, organizationId: string | null): Promise<{ rows: FeedRow[]; last: bigint; full: boolean }> {
    const events = await this.opts.store.readAll(from, this.batchSize, [...GOVERNANCE_SOURCE_EVENT_TYPES]);
    const kept = organizationId === null ? events : events.filter((e) => e.metadata.organization_id === organizationId);
    return { rows: await feedRowsOf(this.opts.store, kept), last: events.at(-1)?.global_position ?? from, full: events.length === this.batchSize };
  }

  private schedule(delay = this.pollMs): void {
    if (this.closed || this.subscribers.size === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll();
    }, delay);
  }

  /**
   * One read of the log: the head first, then the feed events after the position. Appends commit in position order,
   * so every event at or below that head is visible to the second read; when it returned less than a page, the
   * position moves to the head (past events of other types without reading them again).
   */
  private async poll(): Promise<void> {
    if (this.polling || this.pos === null) return;
    this.polling = true;
    let delay = this.pollMs;
    try {
      const from = this.pos;
      const head = await this.head();
      const { rows, last, full } = head > from ? await this.read(from, null) : { rows: [], last: from, full: false };
      if (this.pos !== from) return; // stopped and restarted meanwhile
      for (const r of rows) {
        const e = feedEventOf(r);
        if (!e) continue;
        for (const s of this.subscribers) if (concerns(e, s)) s.deliver(e);
      }
      this.pos = !full ? (head > last ? head : last) : last;
      if (full) delay = 0;
    } catch (err) {
      // The database down: the streams stay open (heartbeats go on) and the tailer resumes from where it was.
      this.opts.logger.debug({ err }, 'governance feed: reading the event log failed; retrying');
      delay = Math.max(this.pollMs, 1000);
    } finally {
      this.polling = false;
      if (this.again) {
        this.again = false;
        delay = 0;
      }
      this.schedule(delay);
    }
  }
}

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
import { GOVERNANCE_SOURCE_EVENT_TYPES, governanceFeedEventOf, governanceFeedNeedsStream, type GovernanceFeedEvent } from '@agp/contracts';
import type { EventStore, StoredEvent } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';
import { DEFAULT_GOVERNANCE_POLL_MS } from './env.js';

/** One event of the feed, as a stream sends it (see `GovernanceFeedEvent` of `@agp/contracts`). */
export type FeedEvent = GovernanceFeedEvent;

/** A stream's end of the feed. */
export interface FeedSubscriber {
  organization_id: string;
  agent_id: string;
  /** Called in position order with each live event that concerns the subscriber. Must not throw. */
  deliver(event: FeedEvent): void;
}

/** Whether `e` concerns `s`: the same organisation, and the agent among those it concerns (or every agent). */
export const concerns = (e: FeedEvent, s: Pick<FeedSubscriber, 'organization_id' | 'agent_id'>) =>
  e.organization_id === s.organization_id && (e.agents === null || e.agents.includes(s.agent_id));

/** What the feed reads of the event store. */
export type GovernanceLog = Pick<EventStore, 'readAll' | 'readStream' | 'headPosition'>;

/**
 * The feed events of `events` (feed source event types, in position order), mapped by `governanceFeedEventOf` of
 * `@agp/contracts`, with the stream each needs read from `log` (each stream once per call). Events that are no feed
 * event are left out.
 */
export async function feedEventsOf(log: Pick<EventStore, 'readStream'>, events: readonly StoredEvent[]): Promise<FeedEvent[]> {
  const streams = new Map<string, Promise<StoredEvent[]>>();
  const streamOf = (id: string) => {
    let s = streams.get(id);
    if (!s) streams.set(id, (s = log.readStream(id)));
    return s;
  };
  const out: FeedEvent[] = [];
  for (const e of events) {
    const mapped = governanceFeedEventOf(e, governanceFeedNeedsStream(e) ? await streamOf(e.stream_id) : []);
    if (mapped) out.push(mapped);
  }
  return out;
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
    this.pollMs = opts.pollMs ?? DEFAULT_GOVERNANCE_POLL_MS;
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
      const { events, last, full } = await this.read(at, organizationId);
      for (const e of events) {
        at = e.position;
        if (!each(e)) return at;
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
   * A page of feed events after `from` (at most `batchSize` read), kept to `organizationId`'s when not null: the feed events,
   * the position of the last event read (or `from`), and whether the page was full (more may follow).
   */
  private async read(from: bigint, organizationId: string | null): Promise<{ events: FeedEvent[]; last: bigint; full: boolean }> {
    const events = await this.opts.store.readAll(from, this.batchSize, [...GOVERNANCE_SOURCE_EVENT_TYPES]);
    const kept = organizationId === null ? events : events.filter((e) => e.metadata.organization_id === organizationId);
    return { events: await feedEventsOf(this.opts.store, kept), last: events.at(-1)?.global_position ?? from, full: events.length === this.batchSize };
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
      const { events, last, full } = head > from ? await this.read(from, null) : { events: [], last: from, full: false };
      if (this.pos !== from) return; // stopped and restarted meanwhile
      for (const e of events) {
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

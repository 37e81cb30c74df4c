/**
 * What an agent-side client reads to enforce policies where its agent acts:
 * - `GET /api/v1/agents/{agent_id}/governance`: the snapshot (`agents.governance` of the policies service) with a
 *   strong ETag of its canonical JSON, and 304 when If-None-Match holds it;
 * - `GET /api/v1/agents/{agent_id}/governance/events`: the push channel, Server-Sent Events from the gateway's
 *   {@link GovernanceFeed}: replay after `Last-Event-ID`, a `ready` event, then live events and a heartbeat comment.
 * Both are reads: a read key may call them. Source: the SDK's live policies, kill switches and approvals; spec §Auth.
 */
import { GOVERNANCE_HEARTBEAT_MS, GOVERNANCE_MAX_STREAMS_PER_ORG, GOVERNANCE_MAX_UNSENT_BYTES, Wire } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import { ValidationError, parseOrThrow, problem } from '@agp/runtime';
import { sendProblem } from '../edge.js';
import { noneMatch, strongEtag } from '../etag.js';
import type { FeedEvent, FeedSubscriber, GovernanceFeed } from '../governance-feed.js';
import type { RouteCall } from '../router.js';

/** The feed with the push channel's bounds (defaults: the contracts' constants). */
export interface GovernanceStreams {
  feed: GovernanceFeed;
  /** Most open streams per organisation in this process. */
  maxStreamsPerOrg?: number;
  /** Interval of the heartbeat comment, in ms. */
  heartbeatMs?: number;
  /** Unsent bytes past which a stream's client is dropped. */
  maxUnsentBytes?: number;
  /** Open streams' end functions, so the gateway can end them all on close. */
  open: Set<() => void>;
}

/** A `Last-Event-ID` as a position: absent → null. @throws ValidationError (422) when it is not a decimal position. */
export function parseLastEventId(value: string | undefined): bigint | null {
  if (value === undefined || value.trim() === '') return null;
  if (!/^\s*\d{1,19}\s*$/.test(value)) throw new ValidationError('Last-Event-ID must be the id of an event of this stream (a decimal position)', [{ path: 'header.last-event-id', message: 'expected a decimal position, e.g. "1234"' }]);
  return BigInt(value.trim());
}

/** One SSE event as text. */
const sse = (id: bigint, event: string, data: unknown) => `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** GET /api/v1/agents/{agent_id}/governance: `{agent_id, policies, kill_switches}` with its ETag, or 304. */
export async function getAgentGovernance({ req, res, ctx, params, deps }: RouteCall): Promise<void> {
  const snapshot = await callUnchecked(deps.bus, 'agents.governance', ctx, { path: { agent_id: params.agent_id } });
  const etag = strongEtag(snapshot);
  res.set({ etag, 'cache-control': 'private, no-cache', vary: 'Authorization, X-API-Key' });
  if (noneMatch(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  res.type('application/json').send(JSON.stringify(snapshot));
}

/**
 * GET /api/v1/agents/{agent_id}/governance/events: the push channel. 422 for a bad agent id or Last-Event-ID,
 * 429 past the organisation's stream limit; else 200 and an unending text/event-stream (see the route table).
 */
export async function streamAgentGovernance({ req, res, ctx, params, deps }: RouteCall): Promise<void> {
  const streams = deps.governance;
  const { path } = parseOrThrow(Wire['agents.governance'].request, { path: { agent_id: params.agent_id } });
  const lastEventId = parseLastEventId(req.get('last-event-id'));
  const { feed, open } = streams;
  const max = streams.maxStreamsPerOrg ?? GOVERNANCE_MAX_STREAMS_PER_ORG;
  if (feed.streamsOf(ctx.organization_id) >= max) {
    sendProblem(res, problem(429, 'Too Many Requests', `this organisation already holds ${max} push-channel streams on this gateway; close one or retry later`), { 'retry-after': '5' });
    return;
  }
  const maxUnsent = streams.maxUnsentBytes ?? GOVERNANCE_MAX_UNSENT_BYTES;
  let ended = false;
  /** Live events that arrive while the replay runs; sent after it, those past its end. */
  let pending: FeedEvent[] | null = [];
  let cursor = 0n;
  const write = (text: string): boolean => {
    if (ended) return false;
    res.write(text);
    // A client that does not read: drop it rather than buffer without bound (it resumes with Last-Event-ID).
    if (res.writableLength > maxUnsent) {
      end();
      return false;
    }
    return true;
  };
  const send = (e: FeedEvent): boolean => {
    if (e.position <= cursor) return true;
    cursor = e.position;
    return write(sse(e.position, e.event, e.data));
  };
  const subscriber: FeedSubscriber = {
    organization_id: ctx.organization_id,
    agent_id: path.agent_id,
    deliver: (e) => {
      if (pending) pending.push(e);
      else send(e);
    },
  };
  let heartbeat: NodeJS.Timeout | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    feed.remove(subscriber);
    open.delete(end);
    if (!res.writableEnded) res.end();
    res.destroy();
  };
  open.add(end);
  res.on('close', end);
  // Subscribe first, so nothing between the replay's end and going live is missed (positions dedupe the overlap).
  let live: bigint;
  try {
    live = await feed.add(subscriber);
  } catch (err) {
    open.delete(end);
    ended = true;
    throw err;
  }
  if (ended) return;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  heartbeat = setInterval(() => write(': heartbeat\n\n'), streams.heartbeatMs ?? GOVERNANCE_HEARTBEAT_MS);
  heartbeat.unref();
  try {
    // A Last-Event-ID past the log's head is from another log (the platform's data was reset): start live.
    const from = lastEventId !== null && lastEventId > live && lastEventId > (await feed.head()) ? null : lastEventId;
    cursor = from ?? live;
    if (from !== null && from < live) await feed.replay(ctx.organization_id, from, (e) => (e.agents === null || e.agents.includes(path.agent_id) ? send(e) : !ended));
    if (cursor < live) cursor = live;
  } catch {
    // The database failed during the replay: end the stream; the client reconnects with its Last-Event-ID.
    end();
    return;
  }
  const buffered = pending;
  pending = null;
  write(sse(cursor, 'ready', { agent_id: path.agent_id, position: String(cursor) }));
  for (const e of buffered) send(e);
}

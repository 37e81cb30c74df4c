/**
 * Request/reply over NATS through Nest's own NATS transport, with every subject under a prefix.
 * Handlers are declared without the prefix (`@MessagePattern('interventions.list')`); the server
 * subscribes `${prefix}.interventions.list` in the service's queue group, and the client publishes
 * to the same prefixed subject. Source: architecture §1 (Framework), §2 (Distributed).
 */
import { ClientNats, NatsRequestJSONDeserializer, ServerNats, type NatsOptions, type PacketId, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { NATS_RECONNECT_OPTIONS, notConnectedHealth, watchNatsConnection, type NatsConnectionHealth, type NatsLogger } from './nats-connection.js';
import { assertSubjectPrefix, prefixedSubject } from './subjects.js';

/** Nest's NATS options (servers, name, reconnect settings, ...) as accepted by `ServerNats` / `ClientNats`. */
export type NestNatsOptions = NonNullable<NatsOptions['options']>;

/**
 * What the prefixed server and client add to Nest's NATS options to survive a broker outage (their reconnect
 * settings default to {@link NATS_RECONNECT_OPTIONS}; options given here override them).
 */
export interface NatsWatchOptions {
  /** Logs disconnects, reconnects and a close, once per transition. */
  logger?: NatsLogger;
  /** Called when the connection closes for good without `close()` (see `watchNatsConnection`). */
  onClosed?: (err: Error | undefined) => void;
}

/**
 * Header of a request whose body is bytes (a wire row whose request is `WireBytesSchema` in @agp/contracts, e.g.
 * `ingest.raw`): the NATS payload is the body's bytes as they are, and this header holds the rest of Nest's packet as
 * JSON (`{pattern, id, data: {ctx, body: null}}`). Every other request is Nest's JSON packet.
 * Source: docs/decisions.md (The gateway forwards the ingest body's bytes).
 */
export const WIRE_BYTES_HEADER = 'Agp-Rpc';

/** The shape of what a Nest NATS serializer returns (Nest does not export its type). */
interface NatsSerialized {
  data: string | Uint8Array;
  headers?: MsgHdrs;
}

/**
 * Nest serializer of the prefixed client and server: a packet whose request body is a `Uint8Array` is sent as those
 * bytes with the rest of the packet in the {@link WIRE_BYTES_HEADER} header (no copy, no escaping); anything else
 * (every other request, every reply) as Nest's JSON packet. Pure.
 */
export const wireSerializer = {
  serialize(packet: { data?: { body?: unknown } } & Record<string, unknown>): NatsSerialized {
    const body = packet?.data?.body;
    if (!(body instanceof Uint8Array)) return { data: JSON.stringify(packet) };
    const h = natsHeaders();
    h.set(WIRE_BYTES_HEADER, JSON.stringify({ ...packet, data: { ...packet.data, body: null } }));
    return { data: body, headers: h };
  },
};

/**
 * Nest deserializer of the prefixed server: a message with the {@link WIRE_BYTES_HEADER} header is that header's
 * packet with the payload (copied out of the connection's read buffer) as the request body; anything else is read as
 * Nest's JSON packet.
 * @throws SyntaxError when the header is not JSON (Nest logs it; the request then times out at the caller).
 */
export class WireRequestDeserializer extends NatsRequestJSONDeserializer {
  override deserialize(value: { data: Uint8Array; headers?: MsgHdrs; json(): unknown }, options?: Record<string, unknown>) {
    const meta = value.headers?.get(WIRE_BYTES_HEADER);
    if (!meta) return super.deserialize(value, options);
    const packet = JSON.parse(meta) as { data: { body: unknown } };
    packet.data.body = new Uint8Array(value.data);
    return packet as ReturnType<NatsRequestJSONDeserializer['deserialize']>;
  }
}

/**
 * How long the connection keeps the reply slot of a request open, in ms: longer than any caller waits (the longest
 * route timeout is 120 s), so the caller's timeout is the one that answers; only then is the slot freed.
 */
export const MUX_REQUEST_BACKSTOP_MS = 600_000;

/**
 * Header of a responder probe: a request on a service's subject that the prefixed server answers at once (empty
 * reply) without running the handler. The client sends one while a request waits for its reply, to learn whether the
 * subject still has a responder ({@link PrefixedNatsClient}).
 */
export const PROBE_HEADER = 'Agp-Probe';

/**
 * How long a request waits for its reply before the client probes whether its subject still has a responder, and the
 * interval of the probes while requests wait, in ms. A responder killed after it took a request leaves that request
 * without a reply; a probe answered "no responders" fails it (503) within about this long instead of at the caller's
 * timeout (10 s by default).
 */
export const RESPONDER_PROBE_MS = 500;

/** Options of {@link PrefixedNatsServer}: Nest's NATS options plus the subject prefix and queue group. */
export interface PrefixedNatsServerOptions extends NestNatsOptions, NatsWatchOptions {
  /** Subject prefix, `AGP_SUBJECT_PREFIX`. @default agp */
  prefix?: string;
  /**
   * Queue group shared by every process of one service (e.g. `interventions`), so they split the
   * requests. A handler may override it with `@MessagePattern(p, { queue })`.
   */
  queue: string;
}

/** Options of {@link PrefixedNatsClient}: Nest's NATS options plus the subject prefix. */
export interface PrefixedNatsClientOptions extends NestNatsOptions, NatsWatchOptions {
  /** Subject prefix, `AGP_SUBJECT_PREFIX`. @default agp */
  prefix?: string;
}

/** One request of the prefixed client waiting for its reply: when it was sent, and how to fail it for want of a responder. */
interface WaitingRequest {
  sentAt: number;
  fail(): void;
}

/** The requests waiting on one subject, and that subject's probe: planned (`timer`) or under way (`probing`). */
interface WaitingRequests {
  requests: Set<WaitingRequest>;
  timer: NodeJS.Timeout | undefined;
  probing: boolean;
}

/** The body of a responder probe. */
const PROBE_BODY = new Uint8Array(0);

/** A request's rejection as nats.js gives it: a `RequestError` whose cause says why. */
type NatsRequestError = Error & { cause?: { name?: string }; isNoResponders?: () => boolean };

/**
 * Whether nats.js rejected a request for want of a responder: a `RequestError` that says so (`isNoResponders()`, its
 * cause named `NoResponders`), or a NoRespondersError.
 */
function isNoResponders(err: NatsRequestError | undefined): boolean {
  if (typeof err?.isNoResponders === 'function' && err.isNoResponders()) return true;
  return [err?.name, err?.cause?.name].some((n) => n === 'NoRespondersError' || n === 'NoResponders');
}

/** Error a NATS request fails with when no server subscribes to its subject. */
export class NoRespondersError extends Error {
  constructor(readonly subject: string) {
    super(`no responders for ${subject}`);
    this.name = 'NoRespondersError';
  }
}

interface NatsSubscription {
  unsubscribe(): void;
}
/** The part of a received NATS message the server's probe answer reads. */
interface NatsMsgLike {
  headers?: MsgHdrs;
  respond(data?: Uint8Array): boolean;
}
interface NatsConnectionLike {
  subscribe(subject: string, opts: { queue?: string; callback: (err: Error | null, msg: NatsMsgLike) => unknown }): NatsSubscription;
  flush(): Promise<void>;
}

/**
 * Nest `ServerNats` that subscribes `${prefix}.${pattern}` (with the queue group) for every registered
 * handler and dispatches to the handler registered under the unprefixed `pattern`. String patterns only.
 * Waits until the server has confirmed every subscription (flush) before `listen` calls back, so a
 * request sent right after start-up finds its responder.
 *
 * @example
 * const app = await NestFactory.createMicroservice(AppModule, {
 *   strategy: new PrefixedNatsServer({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, queue: 'interventions' }),
 * });
 * await app.listen();
 */
export class PrefixedNatsServer extends ServerNats {
  /** The subject prefix, without trailing dot. */
  readonly prefix: string;
  private readonly queue: string;

  private readonly watch: NatsWatchOptions;
  private connection: NatsConnectionHealth = notConnectedHealth('rpc server');

  constructor(options: PrefixedNatsServerOptions) {
    const { prefix = 'agp', logger, onClosed, ...nats } = options;
    super({ ...NATS_RECONNECT_OPTIONS, serializer: wireSerializer, deserializer: new WireRequestDeserializer(), ...nats });
    this.prefix = assertSubjectPrefix(prefix);
    this.queue = options.queue;
    this.watch = { logger, onClosed };
  }

  /** The connection's health (readiness): throws ServiceUnavailableError (503) unless connected. */
  get health(): NatsConnectionHealth {
    return this.connection;
  }

  /** Connect (with {@link NATS_RECONNECT_OPTIONS}) and watch the connection; nats.js re-subscribes after a reconnect. */
  override async createNatsClient(): ReturnType<ServerNats['createNatsClient']> {
    const nc = await super.createNatsClient();
    this.connection = watchNatsConnection(nc as NatsConnection, { role: 'rpc server', ...this.watch });
    return nc;
  }

  /** Close the connection; the close is intended, so it is not reported as a failure. */
  override async close(): Promise<void> {
    this.connection.closing();
    await super.close();
  }

  /**
   * The handler key of a subject's pattern: the pattern itself (string patterns only). Nest's own first tries
   * `JSON.parse` on it, which throws (an Error with its stack) on every request for a pattern such as `ingest.raw`.
   */
  override getRouteFromPattern(pattern: string): string {
    return pattern;
  }

  /** Bind the subscriptions, then wait for the server to have registered them. */
  override start(callback: (err?: unknown, ...optionalParams: unknown[]) => void): void {
    try {
      this.bindEvents(this.unwrap());
    } catch (err) {
      callback(err);
      return;
    }
    this.unwrap<NatsConnectionLike>()
      .flush()
      .then(() => callback(), callback);
  }

  /**
   * Subscribe `${prefix}.${pattern}` in the queue group for each handler; the handler lookup uses `pattern`. A
   * responder probe ({@link PROBE_HEADER}) is answered at once with an empty reply, never handed to the handler.
   */
  override bindEvents(client: NatsConnectionLike): void {
    const subscriptions = (this as unknown as { subscriptions: NatsSubscription[] }).subscriptions;
    for (const [pattern, handler] of this.messageHandlers) {
      const queue: string = handler.extras?.queue ?? this.queue;
      const handle = this.getMessageHandler(pattern).bind(this) as (err: Error | null, msg: NatsMsgLike) => unknown;
      const sub = client.subscribe(prefixedSubject(this.prefix, pattern), {
        queue,
        callback: (err, msg) => (!err && msg?.headers?.has(PROBE_HEADER) ? msg.respond() : handle(err, msg)),
      });
      subscriptions.push(sub);
    }
  }
}

/**
 * Nest `ClientNats` that sends requests and events to `${prefix}.${pattern}`. A request nobody
 * subscribes to fails at once with {@link NoRespondersError} (NATS "no responders") instead of hanging.
 *
 * @example
 * const client = new PrefixedNatsClient({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX });
 * const list = await call(client, 'interventions.list', ctx, { query: {} });
 */
export class PrefixedNatsClient extends ClientNats {
  /** The subject prefix, without trailing dot. */
  readonly prefix: string;

  private readonly watch: NatsWatchOptions;
  private connection: NatsConnectionHealth = notConnectedHealth('bus client');

  constructor(options: PrefixedNatsClientOptions = {}) {
    const { prefix = 'agp', logger, onClosed, ...nats } = options;
    // noAsyncTraces: no Error (its stack) made per request to name the caller should it fail.
    super({ ...NATS_RECONNECT_OPTIONS, noAsyncTraces: true, serializer: wireSerializer, ...nats });
    this.prefix = assertSubjectPrefix(prefix);
    this.watch = { logger, onClosed };
  }

  /** The connection's health (readiness): throws ServiceUnavailableError (503) unless connected. */
  get health(): NatsConnectionHealth {
    return this.connection;
  }

  /** Connect (with {@link NATS_RECONNECT_OPTIONS}) and watch the connection. */
  override async createClient(): ReturnType<ClientNats['createClient']> {
    const nc = await super.createClient();
    this.connection = watchNatsConnection(nc as NatsConnection, { role: 'bus client', ...this.watch });
    return nc;
  }

  /** Close the connection; the close is intended, so it is not reported as a failure. */
  override async close(): Promise<void> {
    this.connection.closing();
    await super.close();
  }

  /** Requests waiting for their reply, by subject, with the subject's probe state ({@link RESPONDER_PROBE_MS}). */
  private readonly waiting = new Map<string, WaitingRequests>();

  /**
   * Send a request through the connection's one muxed reply subscription (nats.js `request`), not Nest's fresh inbox
   * subscription per request (a SUB and an UNSUB for the server to process on every call). The reply is handed to
   * Nest's handler; the caller's own timeout (`callRpc`) still decides when to give up, the connection's
   * is only a backstop ({@link MUX_REQUEST_BACKSTOP_MS}) that frees the reply slot of a request nobody answered.
   * A subject nobody serves fails at once with {@link NoRespondersError}; so does a request whose responder went away
   * after it took the request (killed), as soon as a probe of its subject finds no responder ({@link RESPONDER_PROBE_MS}).
   */
  protected override publish(partialPacket: ReadPacket, callback: (packet: WritePacket) => unknown): () => void {
    const packet = this.assignPacketId(partialPacket);
    const subject = this.normalizePattern(partialPacket.pattern);
    let live = true;
    const request: WaitingRequest = {
      sentAt: Date.now(),
      fail: () => {
        if (!live) return;
        live = false;
        callback({ err: new NoRespondersError(subject), isDisposed: true });
      },
    };
    const settled = () => this.settled(subject, request);
    try {
      const serialized = this.serializer.serialize(packet) as NatsSerialized;
      const handle = this.createSubscriptionHandler(packet, callback);
      this.wait(subject, request);
      this.mux()
        .request(subject, serialized.data, { timeout: MUX_REQUEST_BACKSTOP_MS, ...(serialized.headers ? { headers: serialized.headers } : {}) })
        .then(
          (msg) => {
            settled();
            if (live) handle(null, msg as Record<string, unknown>);
          },
          (err: NatsRequestError) => {
            settled();
            if (!live) return;
            live = false;
            callback({ err: isNoResponders(err) ? new NoRespondersError(subject) : err, isDisposed: true });
          },
        );
    } catch (err) {
      settled();
      callback({ err, isDisposed: true });
    }
    return () => {
      live = false;
      settled();
    };
  }

  /** The connection's request function (nats.js `request` over its muxed reply subscription). */
  private mux(): { request(subject: string, data: string | Uint8Array, opts: { timeout: number; headers?: MsgHdrs }): Promise<unknown> } {
    return this.natsClient as unknown as ReturnType<PrefixedNatsClient['mux']>;
  }

  /** Count `request` as waiting on `subject`, and plan the subject's next probe when none is planned. */
  private wait(subject: string, request: WaitingRequest): void {
    let w = this.waiting.get(subject);
    if (!w) this.waiting.set(subject, (w = { requests: new Set(), timer: undefined, probing: false }));
    w.requests.add(request);
    this.planProbe(subject, w);
  }

  /** `request` has its answer (or was given up): it waits no more; a subject with nothing waiting is not probed. */
  private settled(subject: string, request: WaitingRequest): void {
    const w = this.waiting.get(subject);
    if (!w?.requests.delete(request) || w.requests.size || w.probing) return;
    clearTimeout(w.timer);
    this.waiting.delete(subject);
  }

  /** Probe `subject` {@link RESPONDER_PROBE_MS} from now, unless a probe is planned or under way. */
  private planProbe(subject: string, w: WaitingRequests): void {
    if (w.timer || w.probing) return;
    w.timer = setTimeout(() => this.probe(subject, w), RESPONDER_PROBE_MS);
    w.timer.unref();
  }

  /**
   * Ask whether `subject` still has a responder (a {@link PROBE_HEADER} request, which a prefixed server answers at
   * once). "No responders" means every process that took a request of it before the probe is gone: those requests can
   * never be answered, so they fail now with {@link NoRespondersError} (503). An answer, or no answer within the
   * interval (a busy responder), leaves them waiting; the subject is probed again while any waits.
   */
  private probe(subject: string, w: WaitingRequests): void {
    w.timer = undefined;
    if (!w.requests.size) {
      this.waiting.delete(subject);
      return;
    }
    w.probing = true;
    const probedAt = Date.now();
    const h = natsHeaders();
    h.set(PROBE_HEADER, '1');
    const done = () => {
      w.probing = false;
      if (w.requests.size) this.planProbe(subject, w);
      else this.waiting.delete(subject);
    };
    let sent: Promise<unknown>;
    try {
      sent = this.mux().request(subject, PROBE_BODY, { timeout: RESPONDER_PROBE_MS, headers: h });
    } catch {
      return done();
    }
    sent.then(done, (err: NatsRequestError) => {
      if (isNoResponders(err)) for (const r of [...w.requests]) if (r.sentAt <= probedAt) r.fail();
      done();
    });
  }

  protected override normalizePattern(pattern: Parameters<ClientNats['normalizePattern']>[0]): string {
    return prefixedSubject(this.prefix, super.normalizePattern(pattern));
  }

  /** Turn NATS's "no responders" status (503, empty body) into a {@link NoRespondersError}. */
  override createSubscriptionHandler(packet: ReadPacket & PacketId, callback: (packet: WritePacket) => unknown) {
    const handle = super.createSubscriptionHandler(packet, callback);
    return async (error: Error | null, natsMsg: Record<string, any>) => {
      if (!error && natsMsg?.data?.length === 0 && natsMsg?.headers?.code === 503) {
        return callback({ err: new NoRespondersError(this.normalizePattern(packet.pattern)), isDisposed: true });
      }
      return handle(error, natsMsg);
    };
  }
}

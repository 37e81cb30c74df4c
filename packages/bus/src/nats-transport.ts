/**
 * Request/reply over NATS through Nest's own NATS transport, with every subject under a prefix.
 * Handlers are declared without the prefix (`@MessagePattern('interventions.list')`); the server
 * subscribes `${prefix}.interventions.list` in the service's queue group, and the client publishes
 * to the same prefixed subject. Source: architecture §1 (Framework), §2 (Distributed).
 */
import { ClientNats, ServerNats, type NatsOptions, type PacketId, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import type { NatsConnection } from '@nats-io/transport-node';
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
interface NatsConnectionLike {
  subscribe(subject: string, opts: { queue?: string; callback: (err: Error | null, msg: unknown) => unknown }): NatsSubscription;
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
    super({ ...NATS_RECONNECT_OPTIONS, ...nats });
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

  /** Subscribe `${prefix}.${pattern}` in the queue group for each handler; the handler lookup uses `pattern`. */
  override bindEvents(client: NatsConnectionLike): void {
    const subscriptions = (this as unknown as { subscriptions: NatsSubscription[] }).subscriptions;
    for (const [pattern, handler] of this.messageHandlers) {
      const queue: string = handler.extras?.queue ?? this.queue;
      const sub = client.subscribe(prefixedSubject(this.prefix, pattern), {
        queue,
        callback: this.getMessageHandler(pattern).bind(this) as (err: Error | null, msg: unknown) => unknown,
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
    super({ ...NATS_RECONNECT_OPTIONS, ...nats });
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

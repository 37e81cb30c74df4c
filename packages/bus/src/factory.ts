/**
 * One setting picks the request/reply transport: NATS in distributed mode, in-process when embedded.
 * Services build their server and client here and never name a transport class.
 * Source: architecture §2 (Two ways to run, same code).
 */
import { InProcessBroker, InProcessClient, InProcessServer } from './in-process.js';
import { PrefixedNatsClient, PrefixedNatsServer, type NatsWatchOptions, type NestNatsOptions } from './nats-transport.js';

/** `nats` (distributed) or `in-process` (embedded). */
export type BusTransportKind = 'nats' | 'in-process';

/** Nest injection token for the service's bus `ClientProxy` (`@Inject(BUS_CLIENT) client: ClientProxy`). */
export const BUS_CLIENT = Symbol.for('agp.bus.client');

/** Options of {@link createBusClient}. */
export interface BusClientOptions {
  /** NATS server URL(s), `NATS_URL`. Required for `nats`. */
  servers?: string | string[];
  /** Subject prefix, `AGP_SUBJECT_PREFIX` (NATS only). @default agp */
  prefix?: string;
  /** Connection name shown by the NATS server (NATS only). */
  name?: string;
  /**
   * Further Nest NATS options (credentials; reconnect settings override NATS_RECONNECT_OPTIONS), NATS only.
   * `logger` and `onClosed` watch the connection (see `watchNatsConnection`).
   */
  nats?: NestNatsOptions & NatsWatchOptions;
  /** The process's broker (in-process only). @default InProcessBroker.default */
  broker?: InProcessBroker;
}

/** Options of {@link createBusServer}. */
export interface BusServerOptions extends BusClientOptions {
  /** Queue group of the service, e.g. `interventions`; processes of one service share its requests. */
  queue: string;
}

/** The transport strategy {@link createBusServer} returns, usable as `createMicroservice(AppModule, { strategy })`. */
export type BusServer = PrefixedNatsServer | InProcessServer;

/** The Nest `ClientProxy` {@link createBusClient} returns (`send`, `emit`, `connect`, `close`). */
export type BusClient = PrefixedNatsClient | InProcessClient;

function natsServers(kind: string, servers: string | string[] | undefined): string | string[] {
  if (!servers || (Array.isArray(servers) && servers.length === 0)) throw new Error(`bus transport ${kind} needs servers (NATS_URL)`);
  return servers;
}

/**
 * The `ClientProxy` a service sends requests with.
 * @throws Error when `kind` is `nats` and no servers are given, or `kind` is unknown.
 * @example const client = createBusClient(env.NATS_URL ? 'nats' : 'in-process', { servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX });
 */
export function createBusClient(kind: BusTransportKind, opts: BusClientOptions = {}): BusClient {
  switch (kind) {
    case 'nats':
      return new PrefixedNatsClient({ ...opts.nats, servers: natsServers(kind, opts.servers), prefix: opts.prefix, name: opts.name ?? opts.nats?.name });
    case 'in-process':
      return new InProcessClient({ broker: opts.broker });
    default:
      throw new Error(`unknown bus transport ${String(kind)}`);
  }
}

/**
 * The transport strategy a service listens on: `NestFactory.createMicroservice(AppModule, { strategy })`.
 * @throws Error when `kind` is `nats` and no servers are given, or `kind` is unknown.
 */
export function createBusServer(kind: BusTransportKind, opts: BusServerOptions): BusServer {
  switch (kind) {
    case 'nats':
      return new PrefixedNatsServer({ ...opts.nats, servers: natsServers(kind, opts.servers), prefix: opts.prefix, queue: opts.queue, name: opts.name ?? opts.nats?.name });
    case 'in-process':
      return new InProcessServer({ broker: opts.broker, queue: opts.queue });
    default:
      throw new Error(`unknown bus transport ${String(kind)}`);
  }
}

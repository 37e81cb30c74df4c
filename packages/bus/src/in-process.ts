/**
 * In-process transport for embedded mode, built on Nest's documented extension points
 * (`CustomTransportStrategy` + `ClientProxy`): every service of the process registers its handlers in
 * one {@link InProcessBroker}, and clients dispatch to them directly. Payloads and replies go through
 * a JSON round trip, so handlers see exactly what NATS would deliver and cannot share mutable objects
 * with callers. Handlers do not change between the two transports. Source: architecture §1
 * (Framework), §2 (Embedded).
 */
import { BaseRpcContext, ClientProxy, Server, type CustomTransportStrategy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { NoRespondersError } from './nats-transport.js';

/** Transport id of the in-process transport (`Server.transportId`). */
export const IN_PROCESS_TRANSPORT = Symbol.for('agp.bus.in-process');

/** Nest's reply when a server has no handler for a pattern (same text as Nest's NATS server). */
const NO_MESSAGE_HANDLER = 'There is no matching message handler defined in the remote service.';

/** RPC context handed to in-process handlers (`@Ctx() ctx: InProcessContext`); args are `[pattern]`. */
export class InProcessContext extends BaseRpcContext<[string]> {
  /** The (unprefixed) pattern the message was sent to. */
  getPattern(): string {
    return this.args[0];
  }
}

interface Registration {
  queue: string;
  server: InProcessServer;
}

/**
 * The registry of one process: pattern → servers that handle it, grouped by queue group like NATS.
 * A request goes to one server (round robin over the registrations of the pattern); an event goes
 * to one server of each queue group. Share one broker between the servers and clients of a process;
 * give separate brokers to apps that must not see each other (tests).
 */
export class InProcessBroker {
  /** A broker for the whole process, used when a factory gets no explicit broker. */
  static readonly default = new InProcessBroker();

  private readonly routes = new Map<string, Registration[]>();
  private readonly cursor = new Map<string, number>();

  /** Register `server` for `pattern` in `queue`. @returns a function that removes the registration. */
  register(pattern: string, queue: string, server: InProcessServer): () => void {
    const reg: Registration = { queue, server };
    const list = this.routes.get(pattern) ?? [];
    list.push(reg);
    this.routes.set(pattern, list);
    return () => {
      const current = this.routes.get(pattern);
      if (!current) return;
      const rest = current.filter((r) => r !== reg);
      if (rest.length) this.routes.set(pattern, rest);
      else this.routes.delete(pattern);
    };
  }

  /** The server that takes the next request for `pattern`, or undefined when none (no responders). */
  pickRequest(pattern: string): InProcessServer | undefined {
    const list = this.routes.get(pattern);
    if (!list?.length) return undefined;
    const i = (this.cursor.get(pattern) ?? 0) % list.length;
    this.cursor.set(pattern, i + 1);
    return list[i].server;
  }

  /** One server per queue group for an event on `pattern` (round robin within a group). */
  pickEvent(pattern: string): InProcessServer[] {
    const list = this.routes.get(pattern) ?? [];
    const groups = new Map<string, Registration[]>();
    for (const r of list) groups.set(r.queue, [...(groups.get(r.queue) ?? []), r]);
    const picked: InProcessServer[] = [];
    for (const [queue, regs] of groups) {
      const key = `${pattern}\u0000${queue}`;
      const i = (this.cursor.get(key) ?? 0) % regs.length;
      this.cursor.set(key, i + 1);
      picked.push(regs[i].server);
    }
    return picked;
  }

  /** Registered patterns (for diagnostics). */
  patterns(): string[] {
    return [...this.routes.keys()];
  }
}

/** Options of {@link InProcessServer}. */
export interface InProcessServerOptions {
  /** The process's broker. @default InProcessBroker.default */
  broker?: InProcessBroker;
  /** Queue group of the service, as with NATS (e.g. `interventions`). @default 'default' */
  queue?: string;
}

/**
 * A Nest transport strategy that registers the app's `@MessagePattern` / `@EventPattern` handlers in an
 * {@link InProcessBroker}. Use with `NestFactory.createMicroservice(AppModule, { strategy })`.
 */
export class InProcessServer extends Server implements CustomTransportStrategy {
  override transportId = IN_PROCESS_TRANSPORT;
  readonly broker: InProcessBroker;
  private readonly queue: string;
  private unregister: Array<() => void> = [];

  constructor(options: InProcessServerOptions = {}) {
    super();
    this.broker = options.broker ?? InProcessBroker.default;
    this.queue = options.queue ?? 'default';
  }

  /** Register every handler in the broker, then call back. */
  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    for (const [pattern, handler] of this.messageHandlers) {
      const queue: string = handler.extras?.queue ?? this.queue;
      this.unregister.push(this.broker.register(pattern, queue, this));
    }
    this._status$.next('connected');
    callback();
  }

  /** Remove this server's registrations. */
  close(): void {
    for (const off of this.unregister) off();
    this.unregister = [];
    this._status$.next('disconnected');
  }

  /** No transport events to listen to in process. */
  on(): void {}

  /** The broker this server registered in. */
  unwrap<T>(): T {
    return this.broker as T;
  }

  /**
   * Run the handler of `pattern` with `data` (already JSON round-tripped) and send each reply packet
   * to `respond`, ending with one whose `isDisposed` is true. Called by {@link InProcessClient}.
   */
  dispatchRequest(pattern: string, data: unknown, respond: (packet: WritePacket) => void): void {
    const ctx = new InProcessContext([pattern]);
    const handler = this.getHandlerByPattern(pattern);
    if (!handler) {
      respond({ err: NO_MESSAGE_HANDLER, isDisposed: true });
      return;
    }
    this.handleRequest(ctx, async () => this.transformToObservable(await handler(data, ctx)), respond);
  }

  /** Run the event handler(s) of `pattern`. Called by {@link InProcessClient}. */
  async dispatchEvent(pattern: string, data: unknown): Promise<void> {
    await this.handleEvent(pattern, { pattern, data }, new InProcessContext([pattern]));
  }
}

/** Options of {@link InProcessClient}. */
export interface InProcessClientOptions {
  /** The process's broker. @default InProcessBroker.default */
  broker?: InProcessBroker;
}

/**
 * A JSON round trip, which is what crossing NATS does to a value (Dates become strings, undefined fields vanish); a
 * request body that is bytes (`WireBytesSchema` in @agp/contracts, sent as the NATS payload) is copied instead.
 */
function wire<T>(value: T): T {
  if (value === undefined) return value;
  const body = (value as { body?: unknown } | null)?.body;
  if (body instanceof Uint8Array) return { ...(JSON.parse(JSON.stringify({ ...value, body: null })) as T), body: new Uint8Array(body) };
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * A Nest `ClientProxy` that dispatches to the handlers registered in an {@link InProcessBroker}.
 * Requests with no handler fail with {@link NoRespondersError}, like NATS "no responders".
 * Dispatch is asynchronous (next macrotask), so callers never run handler code synchronously.
 */
export class InProcessClient extends ClientProxy {
  readonly broker: InProcessBroker;

  constructor(options: InProcessClientOptions = {}) {
    super();
    this.broker = options.broker ?? InProcessBroker.default;
  }

  /** Nothing to connect; resolves at once. */
  async connect(): Promise<InProcessBroker> {
    this._status$.next('connected');
    return this.broker;
  }

  /** Nothing to release. */
  async close(): Promise<void> {
    this._status$.next('disconnected');
  }

  /** The broker this client dispatches to. */
  unwrap<T>(): T {
    return this.broker as T;
  }

  /** No transport events to listen to in process. */
  override on(): void {}

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    let active = true;
    const pattern = this.normalizePattern(packet.pattern);
    const reply = (p: WritePacket) => {
      if (active) callback(p);
    };
    setImmediate(() => {
      if (!active) return;
      const server = this.broker.pickRequest(pattern);
      if (!server) return reply({ err: new NoRespondersError(pattern), isDisposed: true });
      let data: unknown;
      try {
        data = wire(packet.data);
      } catch (err) {
        return reply({ err, isDisposed: true });
      }
      server.dispatchRequest(pattern, data, (p) => {
        try {
          reply(wire(p));
        } catch (err) {
          reply({ err, isDisposed: true });
        }
      });
    });
    return () => {
      active = false;
    };
  }

  protected async dispatchEvent<T = unknown>(packet: ReadPacket): Promise<T> {
    const pattern = this.normalizePattern(packet.pattern);
    const data = wire(packet.data);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.broker.pickEvent(pattern).map((s) => s.dispatchEvent(pattern, wire(data))));
    return undefined as T;
  }
}

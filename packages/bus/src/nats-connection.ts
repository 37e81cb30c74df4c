/**
 * How every NATS connection of the platform survives a broker outage: the reconnect settings, and a watcher that
 * logs each transition once, tells readiness whether the connection is up, and reports a connection that closed
 * for good. Source: architecture §2 (Distributed), §5 (operations); docs/reliability.md (NATS outages).
 */
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { ServiceUnavailableError } from '@agp/runtime';

/**
 * Reconnect settings of every NATS connection (request/reply server and client, gateway): never give up
 * (`maxReconnectAttempts: -1`), try again every 1 s plus up to 1 s of random jitter (so a fleet of processes does not
 * reconnect in lock-step; each attempt is at most ~2 s after the previous one, which bounds recovery after the broker
 * returns), and find a silently dead connection (no FIN, e.g. a network partition) by pinging every 10 s and
 * reconnecting after 2 unanswered pings (≤ 30 s). nats.js restores every subscription on the new connection and
 * flushes what was published meanwhile (up to its 8 MiB reconnect buffer).
 * Without these, nats.js stops after 10 attempts 2 s apart, and a broker outage longer than ~20 s left every
 * service deaf until restarted.
 */
export const NATS_RECONNECT_OPTIONS = {
  maxReconnectAttempts: -1,
  reconnectTimeWait: 1_000,
  reconnectJitter: 1_000,
  reconnectJitterTLS: 1_000,
  pingInterval: 10_000,
  maxPingOut: 2,
} as const satisfies Partial<ConnectionOptions>;

/** The part of a (pino) logger the watcher uses. */
export interface NatsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** State of a watched connection: `connected`, `disconnected` (reconnecting) or `closed` (for good). */
export type NatsConnectionState = 'connected' | 'disconnected' | 'closed';

/** Options of {@link watchNatsConnection}. */
export interface WatchNatsOptions {
  /** What the connection is for, in logs and readiness details, e.g. `rpc server`, `bus client`. */
  role: string;
  /** Logger; nothing is logged without one. */
  logger?: NatsLogger;
  /**
   * Called once when the connection closes without {@link NatsConnectionHealth.closing} having been called first
   * (a fatal error, e.g. an authorization failure): nothing brings it back in this process. Service processes exit
   * non-zero here so an orchestrator restarts them.
   */
  onClosed?: (err: Error | undefined) => void;
}

/** A watched NATS connection's health, read by readiness probes. */
export interface NatsConnectionHealth {
  /** The current state. */
  readonly state: NatsConnectionState;
  /** Epoch ms of the last state change. */
  readonly since: number;
  /**
   * Throws when the connection is not up.
   * @throws ServiceUnavailableError naming the connection, its state and since when (readiness answers 503 with it).
   */
  check(): void;
  /** Mark an intended close, so the close that follows is neither an error nor reported through `onClosed`. */
  closing(): void;
}

/**
 * Watch `nc`: log `disconnect` (warn), `reconnect` (info, with the outage's length) and a close (error) once per
 * transition, never per reconnect attempt; server errors are logged once per outage. Returns the connection's health.
 */
export function watchNatsConnection(nc: Pick<NatsConnection, 'status' | 'closed' | 'getServer'>, opts: WatchNatsOptions): NatsConnectionHealth {
  const { role, logger } = opts;
  let state: NatsConnectionState = 'connected';
  let since = Date.now();
  let intended = false;
  let errorLogged = false;
  const health: NatsConnectionHealth = {
    get state() {
      return state;
    },
    get since() {
      return since;
    },
    check() {
      if (state === 'connected') return;
      const secs = ((Date.now() - since) / 1000).toFixed(1);
      throw new ServiceUnavailableError(`NATS (${role}) ${state === 'closed' ? 'connection closed' : 'disconnected, reconnecting'} for ${secs} s`);
    },
    closing() {
      intended = true;
    },
  };
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' && state === 'connected') {
        state = 'disconnected';
        since = Date.now();
        errorLogged = false;
        logger?.warn({ nats: role, server: s.server }, `NATS ${role} disconnected; reconnecting`);
      } else if (s.type === 'reconnect') {
        const outageMs = Date.now() - since;
        state = 'connected';
        since = Date.now();
        logger?.info({ nats: role, server: s.server, outage_ms: outageMs }, `NATS ${role} reconnected after ${(outageMs / 1000).toFixed(1)} s`);
      } else if (s.type === 'error' && !errorLogged) {
        errorLogged = true;
        logger?.warn({ nats: role, err: s.error }, `NATS ${role} error`);
      } else if (s.type === 'staleConnection' && state === 'connected') {
        logger?.warn({ nats: role }, `NATS ${role} connection stale (pings unanswered); reconnecting`);
      }
    }
  })().catch(() => {});
  void nc.closed().then((err) => {
    state = 'closed';
    since = Date.now();
    if (intended) return;
    logger?.error({ nats: role, err }, `NATS ${role} connection closed for good`);
    opts.onClosed?.(err instanceof Error ? err : undefined);
  });
  return health;
}

/** A health that is never up, for a connection that has not been made yet. */
export function notConnectedHealth(role: string): NatsConnectionHealth {
  const since = Date.now();
  return {
    state: 'disconnected',
    since,
    check() {
      throw new ServiceUnavailableError(`NATS (${role}) not connected`);
    },
    closing() {},
  };
}

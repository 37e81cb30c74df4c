import type { Logger } from './logger.js';

/** One named step of a shutdown, e.g. `{name: 'nats', run: () => bus.close()}`. */
export interface ShutdownStep {
  name: string;
  run(): unknown;
}

/**
 * An idempotent, ordered shutdown: the returned function runs `steps` in order the first time it is called (later
 * calls get the same promise), logs and continues past a step that fails, and resolves to `true` when every step
 * succeeded. Source: docs/architecture.md (`packages/runtime`: ordered shutdown; one shutdown, with its `stopping` guard).
 */
export function orderedShutdown(steps: ShutdownStep[], logger?: Pick<Logger, 'error'>): () => Promise<boolean> {
  let running: Promise<boolean> | undefined;
  return () =>
    (running ??= (async () => {
      let ok = true;
      for (const step of steps) {
        try {
          await step.run();
        } catch (err) {
          ok = false;
          logger?.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      return ok;
    })());
}

/**
 * Run `shutdown` once on SIGTERM or SIGINT, then exit the process (0 when it succeeded, 1 otherwise). A shutdown that
 * has not finished after `graceMs` exits with code 1 anyway: a process that cannot serve exits rather than lingers
 * (the same bound as {@link exitOnFatal}).
 * Source: architecture §5 (operations).
 * @param graceMs longest wait for the shutdown, in ms. @default 5000
 */
export function exitOnSignals(shutdown: () => Promise<boolean>, logger: Pick<Logger, 'info' | 'error'>, graceMs = SHUTDOWN_GRACE_MS): void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      logger.error({ signal, graceMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    void shutdown()
      .catch(() => false)
      .then((ok) => process.exit(ok ? 0 : 1));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** Longest wait for an ordered shutdown before the process exits anyway (signals and fatal errors), in ms. */
export const SHUTDOWN_GRACE_MS = 5_000;

/**
 * A dependency connection closed for good (nothing in this process brings it back): log `reason` as fatal, run
 * `shutdown` (at most `graceMs`), and exit with code 1 so an orchestrator (or scripts/distributed.mjs) restarts the
 * process. Readiness is already false by then. Runs once; later calls are ignored.
 * Source: docs/reliability.md (NATS outages: a connection that closes for good).
 * @param graceMs longest wait for the shutdown, in ms. @default 5000
 */
export function exitOnFatal(shutdown: () => Promise<boolean>, logger: Pick<Logger, 'fatal'>, graceMs = SHUTDOWN_GRACE_MS): (reason: string, err?: unknown) => void {
  let exiting = false;
  return (reason, err) => {
    if (exiting) return;
    exiting = true;
    logger.fatal({ err }, `${reason}; exiting so that the process is restarted`);
    const timer = setTimeout(() => process.exit(1), graceMs);
    timer.unref();
    void shutdown()
      .catch(() => false)
      .finally(() => process.exit(1));
  };
}

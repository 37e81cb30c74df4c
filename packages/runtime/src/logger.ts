import { destination, pino, type Logger } from 'pino';
import { activeTraceIds, tracingConfigured } from './tracing.js';

export type { Logger };

/**
 * Create the JSON logger for a service. One line per event, `service` on every line.
 * @param service e.g. `gateway`, `interventions`
 * @param level the lowest level written. @default env LOG_LEVEL, else `info`
 * @param fd where the lines go: 1 (stdout, what a service in a container writes) or 2 (stderr: the embedded
 *   platform keeps stdout for its human start banner, so log lines never mix into it). @default 1
 * When trace export is on ({@link tracingConfigured}), a line written inside a sampled span carries its `trace_id` and
 * `span_id` (lowercase hex), so a log line leads to its trace.
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info', fd: 1 | 2 = 1): Logger {
  const options = { name: service, level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime, ...(tracingConfigured() ? { mixin: activeTraceIds } : {}) };
  return fd === 1 ? pino(options) : pino(options, destination({ dest: fd, sync: true }));
}

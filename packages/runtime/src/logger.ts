import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Create the JSON logger for a service. One line per event, `service` on every line.
 * @param service e.g. `gateway`, `interventions`
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: service, level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime });
}

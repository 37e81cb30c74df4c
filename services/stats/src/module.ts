import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { StatsService } from './service.js';

/**
 * The stats service's part of the wire table (`Wire` in `@agp/contracts`): one call per subject, each given the
 * request body already parsed by the row's schema. Source: docs/decisions.md (One typed wire registry).
 */
export function statsHandlers(service: StatsService): WireHandlers<'stats'> {
  return {
    'stats.retry-projection-dead-letter': (ctx, { body }) => service.retryProjectionDeadLetter(ctx, body),
    'stats.summary': (ctx, { query }) => service.summary(ctx, query),
    'stats.daily': (ctx, { query }) => service.daily(ctx, query),
    'stats.estimation-accuracy': (ctx, { query }) => service.estimationAccuracy(ctx, query),
    'stats.agent': (ctx, { path, query }) => service.agentStats(ctx, path.agent_id, query),
    'runs.list': (ctx, { query }) => service.listRuns(ctx, query),
    'runs.get': (ctx, { path, query }) => service.getRun(ctx, path.id, query),
    'ledger.export-page': (ctx, { query, cursor }) => service.exportPage(ctx, query, cursor),
  };
}

/** The Nest module of the stats service (NATS or in-process), bound to an already-built service instance. */
export class StatsModule {
  /** Serve {@link statsHandlers} of `service`; `logger` logs the unexpected errors (answered as 500). */
  static register(service: StatsService, logger: Logger): DynamicModule {
    return serveRpc('stats', statsHandlers(service), logger);
  }
}

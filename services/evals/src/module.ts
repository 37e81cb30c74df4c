/**
 * The evals service's part of the wire table (`evals.*`): one handler per subject, each passing the request, already
 * parsed by the row's schema, to the service. Source: docs/decisions.md (One typed wire registry); docs/evals-gate.md.
 */
import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { EvalsService } from './service.js';

/** The handlers of the evals service's subjects, bound to `service`. */
export function evalsHandlers(service: EvalsService): WireHandlers<'evals'> {
  return {
    'evals.retry-projection-dead-letter': (ctx, { body }) => service.retryProjectionDeadLetter(ctx, body),
    'evals.submit': (ctx, { body }) => service.submit(ctx, body),
    'evals.list': (ctx, { query }) => service.list(ctx, query),
    'evals.latest': (ctx, { query }) => service.latest(ctx, query),
    'evals.get': (ctx, { path }) => service.get(ctx, path.id),
    'evals.compare': (ctx, { path }) => service.compare(ctx, path.baseline_id, path.current_id),
    'evals.benchmarks': (ctx, { query }) => service.benchmarks(ctx, query),
    'evals.generate-scenarios': (ctx, { body }) => service.generateScenarios(ctx, body),
  };
}

/** The Nest module of the evals service (NATS or in-process), bound to an already-built service instance. */
export class EvalsModule {
  /** Serve {@link evalsHandlers} of `service`; `logger` logs the unexpected errors (answered as 500). */
  static register(service: EvalsService, logger: Logger): DynamicModule {
    return serveRpc('evals', evalsHandlers(service), logger);
  }
}

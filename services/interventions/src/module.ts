import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { InterventionsService } from './service.js';

/**
 * The interventions service's part of the wire table (`Wire` in `@agp/contracts`): one call per subject, each
 * given the request body already parsed by the row's schema. Source: docs/decisions.md (One typed wire registry).
 */
export function interventionsHandlers(svc: InterventionsService): WireHandlers<'interventions'> {
  return {
    'interventions.retry-projection-dead-letter': (ctx, { body }) => svc.retryProjectionDeadLetter(ctx, body),
    'interventions.create': (ctx, { body }) => svc.create(ctx, body),
    'interventions.list': (ctx, { query }) => svc.list(ctx, query),
    'interventions.get': (ctx, { path }) => svc.get(ctx, path.id),
    'interventions.stats': (ctx, { query }) => svc.stats(ctx, query),
    'interventions.delete': (ctx, { path }) => svc.delete(ctx, path.id),
    'interventions.enrich': (ctx, { path }) => svc.enrichment.enrich(ctx, path.id),
    'interventions.agent-counts': (ctx, { path, query }) => svc.agentCounts(ctx, path.agent_id, query),
    'interventions.enrichment-coverage': (ctx) => svc.enrichmentCoverage(ctx),
    'approvals.list': (ctx, { query }) => svc.approvals.list(ctx, query),
    'approvals.get': (ctx, { path }) => svc.approvals.get(ctx, path.id),
    'approvals.approve': (ctx, { path, body }) => svc.approvals.decide(ctx, path.id, body, 'approve'),
    'approvals.reject': (ctx, { path, body }) => svc.approvals.decide(ctx, path.id, body, 'reject'),
  };
}

/** The Nest module of the interventions service (NATS or in-process), bound to an already-built service instance. */
export class InterventionsModule {
  /** Serve {@link interventionsHandlers} of `service`; `logger` logs the unexpected errors (answered as 500). */
  static register(service: InterventionsService, logger: Logger): DynamicModule {
    return serveRpc('interventions', interventionsHandlers(service), logger);
  }
}

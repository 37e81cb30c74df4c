/**
 * The replay service's part of the wire table (`replay.*`): one handler per subject, each passing the request, already
 * parsed by the row's schema, to the service. Source: docs/decisions.md (One typed wire registry); docs/replay.md (The API).
 */
import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { ReplayService } from './service.js';

/** The handlers of the replay service's subjects, bound to `service`. */
export function replayHandlers(service: ReplayService): WireHandlers<'replay'> {
  return {
    'replay.retry-projection-dead-letter': (ctx, { body }) => service.retryProjectionDeadLetter(ctx, body),
    'replay.submit': (ctx, { path, body }) => service.submit(ctx, path.run_id, body),
    'replay.history': (ctx, { query }) => service.history(ctx, query),
    'replay.run-history': (ctx, { path, query }) => service.runHistory(ctx, path.run_id, query),
    'replay.bundle': (ctx, { path }) => service.bundle(ctx, path.run_id),
    'replay.bundle-part': (ctx, { path, query }) => service.bundlePart(ctx, path.run_id, query.sha256, query.part),
    'replay.analysis': (ctx, { path }) => service.analysis(ctx, path.run_id),
    'replay.evaluate-run': (ctx, { path, body }) => service.evaluateRun(ctx, path.run_id, body),
    'replay.evaluate-runs': (ctx, { body }) => service.evaluateRuns(ctx, body),
  };
}

/** The Nest module of the replay service (NATS or in-process), bound to an already-built service instance. */
export class ReplayModule {
  /** Serve {@link replayHandlers} of `service`; `logger` logs the unexpected errors (answered as 500). */
  static register(service: ReplayService, logger: Logger): DynamicModule {
    return serveRpc('replay', replayHandlers(service), logger);
  }
}

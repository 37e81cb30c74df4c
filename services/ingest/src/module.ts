/**
 * The ingest service's part of the wire table (`ingest.raw`, `ingest.batch`). Source: docs/decisions.md (One typed wire registry).
 */
import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { IngestService } from './service.js';

/** The handlers of the ingest service's subjects, bound to `service`: a whole body as text, or a chunk of parsed events. */
export function ingestHandlers(service: IngestService): WireHandlers<'ingest'> {
  return {
    'ingest.raw': (ctx, raw) => service.acceptRaw(ctx, raw),
    'ingest.batch': (ctx, chunk) => service.accept(ctx, chunk),
  };
}

/** The Nest module of the ingest service, bound to an already-built service instance. */
export class IngestModule {
  /** Serve `ingest.raw` and `ingest.batch` with `service` (NATS or in-process, whichever transport the app uses). */
  static register(service: IngestService, logger: Logger): DynamicModule {
    return serveRpc('ingest', ingestHandlers(service), logger);
  }
}

import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { rpcHandler } from '@agp/bus';
import type { Logger, RpcRequest } from '@agp/runtime';
import type { IngestService } from './service.js';

const SERVICE = Symbol('IngestService');
const LOGGER = Symbol('Logger');

/** `ingest.batch` handler: one chunk of a client batch in, per-event results out. */
@Controller()
export class IngestController {
  constructor(
    @Inject(SERVICE) private readonly svc: IngestService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(Patterns.ingestBatch)
  batch(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.accept(r.ctx, r.body))(req);
  }
}

/** The Nest module of the ingest service, bound to an already-built service instance. */
@Module({})
export class IngestModule {
  static register(service: IngestService, logger: Logger): DynamicModule {
    return {
      module: IngestModule,
      controllers: [IngestController],
      providers: [
        { provide: SERVICE, useValue: service },
        { provide: LOGGER, useValue: logger },
      ],
    };
  }
}

import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@agp/runtime';
import type { PoliciesService } from './service.js';

const SERVICE = Symbol('PoliciesService');
const LOGGER = Symbol('Logger');

/** NATS (or in-process) request handlers: thin, each maps one pattern to one service call. */
@Controller()
export class PoliciesController {
  constructor(
    @Inject(SERVICE) private readonly svc: PoliciesService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}
}

/** The Nest module of the policies service, bound to an already-built service instance. */
@Module({})
export class PoliciesModule {
  static register(service: PoliciesService, logger: Logger): DynamicModule {
    return {
      module: PoliciesModule,
      controllers: [PoliciesController],
      providers: [
        { provide: SERVICE, useValue: service },
        { provide: LOGGER, useValue: logger },
      ],
    };
  }
}

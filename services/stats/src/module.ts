import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@agp/runtime';
import type { StatsService } from './service.js';

const SERVICE = Symbol('StatsService');
const LOGGER = Symbol('Logger');

/** NATS (or in-process) request handlers: thin, each maps one pattern to one service call. */
@Controller()
export class StatsController {
  constructor(
    @Inject(SERVICE) private readonly svc: StatsService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}
}

/** The Nest module of the stats service, bound to an already-built service instance. */
@Module({})
export class StatsModule {
  static register(service: StatsService, logger: Logger): DynamicModule {
    return {
      module: StatsModule,
      controllers: [StatsController],
      providers: [
        { provide: SERVICE, useValue: service },
        { provide: LOGGER, useValue: logger },
      ],
    };
  }
}

import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { rpcHandler } from '@agp/bus';
import type { Logger, RpcRequest } from '@agp/runtime';
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

  @MessagePattern(Patterns.statsSummary)
  summary(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.summary(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.statsDaily)
  daily(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.daily(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.statsEstimationAccuracy)
  estimationAccuracy(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.estimationAccuracy(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.statsAgent)
  agent(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.agentStats(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.runsList)
  runsList(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.listRuns(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.runsGet)
  runsGet(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.getRun(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.ledgerExportPage)
  exportPage(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.exportPage(r.ctx, r.body))(req);
  }
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

import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { rpcHandler } from '@agp/bus';
import type { Logger, RpcRequest } from '@agp/runtime';
import type { InterventionsService } from './service.js';

const SERVICE = Symbol('InterventionsService');
const LOGGER = Symbol('Logger');

/** NATS (or in-process) request handlers: thin, each maps one pattern to one service call. */
@Controller()
export class InterventionsController {
  constructor(
    @Inject(SERVICE) private readonly svc: InterventionsService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(Patterns.interventionsCreate)
  create(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.create(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsList)
  list(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.list(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsGet)
  get(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.get(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsStats)
  stats(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.stats(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsDelete)
  delete(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.delete(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsEnrich)
  enrich(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.enrichment.enrich(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.interventionsAgentCounts)
  agentCounts(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.agentCounts(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.approvalsList)
  approvalsList(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.approvals.list(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.approvalsGet)
  approvalsGet(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.approvals.get(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.approvalsApprove)
  approve(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.approvals.decide(r.ctx, r.body, 'approve'))(req);
  }

  @MessagePattern(Patterns.approvalsReject)
  reject(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.approvals.decide(r.ctx, r.body, 'reject'))(req);
  }
}

/** The Nest module of the interventions service, bound to an already-built service instance. */
@Module({})
export class InterventionsModule {
  static register(service: InterventionsService, logger: Logger): DynamicModule {
    return {
      module: InterventionsModule,
      controllers: [InterventionsController],
      providers: [
        { provide: SERVICE, useValue: service },
        { provide: LOGGER, useValue: logger },
      ],
    };
  }
}

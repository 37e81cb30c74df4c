import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { rpcHandler } from '@agp/bus';
import type { Logger, RpcRequest } from '@agp/runtime';
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

  @MessagePattern(Patterns.policiesCreate)
  policiesCreate(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.createPolicy(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.policiesList)
  policiesList(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.listPolicies(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.policiesGet)
  policiesGet(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.getPolicy(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.policiesUpdate)
  policiesUpdate(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.updatePolicy(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.policiesHistory)
  policiesHistory(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.policyHistory(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.agentsRegister)
  agentsRegister(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.registerAgent(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.agentsList)
  agentsList(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.listAgents(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.agentsGet)
  agentsGet(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.getAgent(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.killSwitchesList)
  killSwitchesList(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.listKillSwitches(r.ctx, r.body))(req);
  }

  @MessagePattern(Patterns.killSwitchesSet)
  killSwitchesSet(@Payload() req: RpcRequest) {
    return rpcHandler(this.logger, (r: RpcRequest) => this.svc.setKillSwitch(r.ctx, r.body))(req);
  }
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

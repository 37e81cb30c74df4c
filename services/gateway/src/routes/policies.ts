/**
 * `/api/v1/policies`, `/api/v1/agents`, `/api/v1/kill-switches`: forwarded to the policies service.
 * Source: issue #3 point 2.
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { Response } from 'express';
import { Patterns } from '@agp/contracts';
import { callRpc } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

type Bus = Pick<ClientProxy, 'send'>;

/** Policies: list, create, get (optionally at a version), update, history. */
@Controller('api/v1/policies')
export class PoliciesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.policiesList, { ctx: ctxOf(req), body: query });
  }

  @Post()
  @HttpCode(201)
  async create(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const policy = await callRpc<{ id: string }>(this.bus, Patterns.policiesCreate, { ctx: ctxOf(req), body: body ?? {} });
    res.location(`/api/v1/policies/${policy.id}`);
    return policy;
  }

  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return callRpc(this.bus, Patterns.policiesGet, { ctx: ctxOf(req), body: { id, query } });
  }

  @Patch(':id')
  update(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callRpc(this.bus, Patterns.policiesUpdate, { ctx: ctxOf(req), body: { id, if_match: req.get('if-match') ?? null, patch: body ?? {} } });
  }

  @Get(':id/history')
  history(@Req() req: AuthedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return callRpc(this.bus, Patterns.policiesHistory, { ctx: ctxOf(req), body: { id, query } });
  }
}

/** The agent registry: list, register (or re-register), get. */
@Controller('api/v1/agents')
export class AgentsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.agentsList, { ctx: ctxOf(req), body: query });
  }

  @Post()
  async register(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const out = await callRpc<{ created: boolean; agent: { agent_id: string } }>(this.bus, Patterns.agentsRegister, { ctx: ctxOf(req), body: body ?? {} });
    res.status(out.created ? 201 : 200).location(`/api/v1/agents/${encodeURIComponent(out.agent.agent_id)}`);
    return out.agent;
  }

  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callRpc(this.bus, Patterns.agentsGet, { ctx: ctxOf(req), body: { id } });
  }
}

/** Kill switches: the organisation's and each agent's. */
@Controller('api/v1/kill-switches')
export class KillSwitchesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.killSwitchesList, { ctx: ctxOf(req), body: query });
  }

  @Put('organization')
  setOrganization(@Req() req: AuthedRequest, @Body() body: unknown) {
    return callRpc(this.bus, Patterns.killSwitchesSet, { ctx: ctxOf(req), body: { scope: 'organization', change: body ?? {} } });
  }

  @Put('agents/:agentId')
  setAgent(@Req() req: AuthedRequest, @Param('agentId') agentId: string, @Body() body: unknown) {
    return callRpc(this.bus, Patterns.killSwitchesSet, { ctx: ctxOf(req), body: { scope: 'agent', agent_id: agentId, change: body ?? {} } });
  }
}

export const policiesControllers = [PoliciesController, AgentsController, KillSwitchesController];

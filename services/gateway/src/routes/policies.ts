/**
 * The `/api/v1/policies` and `/api/v1/agents` routes of the policies service that do more than forward: a policy's
 * create, get and update (ETag, If-Match, Location) and an agent's registration (201 or 200 by the reply). The others
 * (lists, the decision API, history, one agent, the kill switches) are forwarded as the route table says
 * (../forward.ts). The request parts are checked against the row's schema before sending (422s name each bad field,
 * as the service would). Read keys are refused writes (403) at the edge. Source: spec §Policies, §Agents.
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { Response } from 'express';
import type { Policy } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

type Bus = Pick<ClientProxy, 'send'>;

/** `ETag: "<version>"` of a policy, for `If-Match` on the next PATCH. */
function withEtag(res: Response, policy: Policy): Policy {
  res.setHeader('ETag', `"${policy.version}"`);
  return policy;
}

/** Policies: create, get (optionally at a version), update. */
@Controller('api/v1/policies')
export class PoliciesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** POST /api/v1/policies: 201 with the policy (version 1), its Location and ETag. */
  @Post()
  @HttpCode(201)
  async create(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const policy = await callUnchecked(this.bus, 'policies.create', ctxOf(req), { body: body ?? {} });
    res.location(`/api/v1/policies/${policy.id}`);
    return withEtag(res, policy);
  }

  /** GET /api/v1/policies/{id}[?version=N]: the policy now, or as it was at version N; with its ETag. */
  @Get(':id')
  async get(@Req() req: AuthedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>, @Res({ passthrough: true }) res: Response) {
    return withEtag(res, await callUnchecked(this.bus, 'policies.get', ctxOf(req), { path: { id }, query }));
  }

  /** PATCH /api/v1/policies/{id} (If-Match: version): the policy after the change; 409 on a version conflict. */
  @Patch(':id')
  async update(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const policy = await callUnchecked(this.bus, 'policies.update', ctxOf(req), { path: { id }, headers: { if_match: req.get('if-match') ?? null }, body: body ?? {} });
    return withEtag(res, policy);
  }
}

/** The agent registry: register (or re-register). */
@Controller('api/v1/agents')
export class AgentsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** POST /api/v1/agents: 201 with the agent when new, 200 when re-registered (changed or not). */
  @Post()
  async register(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const out = await callUnchecked(this.bus, 'agents.register', ctxOf(req), { body: body ?? {} });
    res.status(out.created ? 201 : 200).location(`/api/v1/agents/${encodeURIComponent(out.agent.agent_id)}`);
    return out.agent;
  }
}

/** The policies and agents routes that do more than forward, registered by the gateway module. */
export const policiesControllers = [PoliciesController, AgentsController];

/**
 * `/api/v1/policies` (with the decision API `POST /api/v1/policies/evaluate`), `/api/v1/agents`,
 * `/api/v1/kill-switches`: forwarded to the policies service as the wire table's `policies.*`, `agents.*` and
 * `kill-switches.*` messages. The request parts are checked against the row's schema before sending (422s name each
 * bad field, as the service would); the service scopes everything by the caller's organisation. Read keys are refused
 * writes (403) at the edge. Source: docs/api.md (Policies, Policy decisions); docs/decisions.md (One typed wire registry).
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { Response } from 'express';
import type { Policy } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import { BUS, ctxOf, sendable } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

type Bus = Pick<ClientProxy, 'send'>;

/** `ETag: "<version>"` of a policy, for `If-Match` on the next PATCH. */
function withEtag(res: Response, policy: Policy): Policy {
  res.setHeader('ETag', `"${policy.version}"`);
  return policy;
}

/** Policies: list, create, get (optionally at a version), update, history. */
@Controller('api/v1/policies')
export class PoliciesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** GET /api/v1/policies?enabled&agent_id&name&skip&limit: `{policies, total, skip, limit}`, newest first. */
  @Get()
  async list(@Req() req: AuthedRequest, @Query() query: unknown, @Res({ passthrough: true }) res: Response) {
    return sendable(res, await callUnchecked(this.bus, 'policies.list', ctxOf(req), { query }));
  }

  /** POST /api/v1/policies: 201 with the policy (version 1), its Location and ETag. */
  @Post()
  @HttpCode(201)
  async create(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const policy = await callUnchecked(this.bus, 'policies.create', ctxOf(req), { body: body ?? {} });
    res.location(`/api/v1/policies/${policy.id}`);
    return withEtag(res, policy);
  }

  /**
   * POST /api/v1/policies/evaluate `{agent_id, run_id?, action_name, arguments?, estimated_cost_usd?}`: 200 with one
   * decision (a read: any key may ask). A literal path, declared before the `:id` routes.
   */
  @Post('evaluate')
  @HttpCode(200)
  evaluate(@Req() req: AuthedRequest, @Body() body: unknown) {
    return callUnchecked(this.bus, 'policies.evaluate', ctxOf(req), { body: body ?? {} });
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

  /** GET /api/v1/policies/{id}/history: `{policy_id, history: [{version, event, at, actor, changes}]}`. */
  @Get(':id/history')
  history(@Req() req: AuthedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return callUnchecked(this.bus, 'policies.history', ctxOf(req), { path: { id }, query });
  }
}

/** The agent registry: list, register (or re-register), get. */
@Controller('api/v1/agents')
export class AgentsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** GET /api/v1/agents?skip&limit: `{agents, total, skip, limit}` by agent_id. */
  @Get()
  async list(@Req() req: AuthedRequest, @Query() query: unknown, @Res({ passthrough: true }) res: Response) {
    return sendable(res, await callUnchecked(this.bus, 'agents.list', ctxOf(req), { query }));
  }

  /** POST /api/v1/agents: 201 with the agent when new, 200 when re-registered (changed or not). */
  @Post()
  async register(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const out = await callUnchecked(this.bus, 'agents.register', ctxOf(req), { body: body ?? {} });
    res.status(out.created ? 201 : 200).location(`/api/v1/agents/${encodeURIComponent(out.agent.agent_id)}`);
    return out.agent;
  }

  /** GET /api/v1/agents/{id}: the agent with its actions and kill switch. */
  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callUnchecked(this.bus, 'agents.get', ctxOf(req), { path: { id } });
  }
}

/** Kill switches: the organisation's and each agent's. */
@Controller('api/v1/kill-switches')
export class KillSwitchesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** GET /api/v1/kill-switches: `{organization: state, agents: [engaged agent switches]}`. */
  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callUnchecked(this.bus, 'kill-switches.list', ctxOf(req), { query });
  }

  /** PUT /api/v1/kill-switches/organization `{engaged, reason?}`: the new state. */
  @Put('organization')
  setOrganization(@Req() req: AuthedRequest, @Body() body: unknown) {
    return callUnchecked(this.bus, 'kill-switches.set', ctxOf(req), { path: {}, body: body ?? {} });
  }

  /** PUT /api/v1/kill-switches/agents/{agent_id} `{engaged, reason?}`: the new state; 404 for an unregistered agent. */
  @Put('agents/:agentId')
  setAgent(@Req() req: AuthedRequest, @Param('agentId') agentId: string, @Body() body: unknown) {
    return callUnchecked(this.bus, 'kill-switches.set', ctxOf(req), { path: { agent_id: agentId }, body: body ?? {} });
  }
}

/** The policies, agents and kill-switch routes, registered by the gateway module. */
export const policiesControllers = [PoliciesController, AgentsController, KillSwitchesController];

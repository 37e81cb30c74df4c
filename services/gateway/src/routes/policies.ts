/**
 * The `/api/v1/policies` and `/api/v1/agents` routes of the policies service that do more than forward: a policy's
 * create, get and update (ETag, If-Match, Location) and an agent's registration (201 or 200 by the reply). The others
 * (lists, the decision API, history, one agent, the kill switches) are forwarded as the route table says
 * (../forward.ts). The request parts are checked against the row's schema before sending (422s name each bad field,
 * as the service would). Read keys are refused writes (403) at the edge. Source: spec §Policies, §Agents.
 */
import type { Response } from 'express';
import type { Policy } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import type { RouteAnswer, RouteCall } from '../router.js';

/** `ETag: "<version>"` of a policy, for `If-Match` on the next PATCH. */
function withEtag(res: Response, policy: Policy): RouteAnswer {
  res.setHeader('ETag', `"${policy.version}"`);
  return { body: policy };
}

/** POST /api/v1/policies: 201 with the policy (version 1), its Location and ETag. */
export async function createPolicy({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const policy = await callUnchecked(deps.bus, 'policies.create', ctx, { body: req.body ?? {} });
  res.location(`/api/v1/policies/${policy.id}`);
  return withEtag(res, policy);
}

/** GET /api/v1/policies/{id}[?version=N]: the policy now, or as it was at version N; with its ETag. */
export async function getPolicy({ req, res, ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  return withEtag(res, await callUnchecked(deps.bus, 'policies.get', ctx, { path: { id: params.id }, query: req.query }));
}

/** PATCH /api/v1/policies/{id} (If-Match: version): the policy after the change; 409 on a version conflict. */
export async function updatePolicy({ req, res, ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  const policy = await callUnchecked(deps.bus, 'policies.update', ctx, { path: { id: params.id }, headers: { if_match: req.get('if-match') ?? null }, body: req.body ?? {} });
  return withEtag(res, policy);
}

/** POST /api/v1/agents: 201 with the agent when new, 200 when re-registered (changed or not). */
export async function registerAgent({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const out = await callUnchecked(deps.bus, 'agents.register', ctx, { body: req.body ?? {} });
  res.location(`/api/v1/agents/${encodeURIComponent(out.agent.agent_id)}`);
  return { body: out.agent, status: out.created ? 201 : 200 };
}

/** PATCH /api/v1/mcp/servers/{name} (If-Match: version): the server after the change; 409 on a version conflict. */
export async function updateMcpServer({ req, ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  return { body: await callUnchecked(deps.bus, 'mcp-servers.update', ctx, { path: { name: params.name }, headers: { if_match: req.get('if-match') ?? null }, body: req.body ?? {} }) };
}

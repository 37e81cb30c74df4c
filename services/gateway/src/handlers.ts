/**
 * The handler of every route-table row the gateway does not simply forward, in one map keyed by the row's operation
 * id. `RouteHandlers` makes the compiler require exactly these keys: a row added to `HTTP_ROUTES` without `forward`
 * does not build until it has its handler here. The handlers live in rooms by area (./routes/*.ts).
 * Source: the route table (`HTTP_ROUTES` in `@agp/contracts`); docs/architecture.md (The route table).
 */
import type { RouteHandlers } from './router.js';
import { createIntervention, listInterventions } from './routes/interventions.js';
import { ingest } from './routes/ingest.js';
import { createPolicy, getPolicy, registerAgent, updateMcpServer, updatePolicy } from './routes/policies.js';
import { getAgentGovernance, streamAgentGovernance } from './routes/governance.js';
import { exportLedger } from './routes/stats.js';
import { listAuditLog } from './routes/audit-log.js';
import { getAuditKeys } from './routes/audit-trail.js';
import { submitEvalRun } from './routes/evals.js';
import { getReplayBundle, submitReplay } from './routes/replay.js';
import { createApiKey, getCallerKey, listApiKeys, revokeApiKey } from './routes/keys.js';
import { listDeadLetters, retryDeadLetter } from './routes/dead-letters.js';
import { createMember, getCaller, getMcpProxyResourceMetadata, getMcpResourceMetadata, getSignInConfig, switchOrganization, listMembers, removeMember, signIn, signInCallback, signOut, updateMember } from './routes/people.js';
import { slackInteractivity } from './routes/slack.js';
import { callMcpTool, listMcpPrompts, listMcpResources, listMcpTools, mcpEndpoint } from './routes/mcp.js';

/** The gateway's route map: one handler per row of `HTTP_ROUTES` without `forward`. */
export const ROUTE_HANDLERS: RouteHandlers = {
  listInterventions,
  createIntervention,
  ingest,
  otlpTraces: ({ req, res, deps }) => deps.otlp(req, res),
  createPolicy,
  getPolicy,
  updatePolicy,
  registerAgent,
  updateMcpServer,
  getAgentGovernance,
  streamAgentGovernance,
  exportLedger,
  listAuditLog,
  getAuditKeys,
  submitEvalRun,
  submitReplay,
  getReplayBundle,
  getCallerKey,
  getCaller,
  getMcpResourceMetadata,
  getSignInConfig,
  switchOrganization,
  getMcpProxyResourceMetadata,
  signIn,
  signInCallback,
  signOut,
  listMembers,
  createMember,
  updateMember,
  removeMember,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  listDeadLetters,
  retryDeadLetter,
  listMcpTools,
  callMcpTool,
  listMcpResources,
  listMcpPrompts,
  mcpEndpoint,
  mcpProxy: ({ req, res, ctx, params, deps }) => deps.hostedMcp.serve(req, res, ctx, params.server),
  slackInteractivity,
};

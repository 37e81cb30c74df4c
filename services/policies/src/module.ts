/**
 * The policies service's part of the wire table (`policies.*`, `agents.*`, `kill-switches.*`, `mcp-servers.*`, `quotas.*`, `audit-log.*`, `webhooks.*`): one handler per
 * subject, each passing the parsed request to the service. Source: docs/decisions.md (One typed wire registry).
 */
import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { PoliciesService } from './service.js';

/** The handlers of the policies service's subjects, bound to `service`. */
export function policiesHandlers(service: PoliciesService): WireHandlers<'policies'> {
  return {
    'policies.retry-projection-dead-letter': (ctx, { body }) => service.retryProjectionDeadLetter(ctx, body),
    'policies.create': (ctx, { body }) => service.createPolicy(ctx, body),
    'policies.list': (ctx, { query }) => service.listPolicies(ctx, query),
    'policies.get': (ctx, { path, query }) => service.getPolicy(ctx, path.id, query),
    'policies.update': (ctx, { path, headers, body }) => service.updatePolicy(ctx, path.id, headers.if_match, body),
    'policies.history': (ctx, { path }) => service.policyHistory(ctx, path.id),
    'policies.evaluate': (ctx, { body }) => service.evaluate(ctx, body),
    'agents.register': (ctx, { body }) => service.registerAgent(ctx, body),
    'agents.list': (ctx, { query }) => service.listAgents(ctx, query),
    'agents.get': (ctx, { path }) => service.getAgent(ctx, path.id),
    'agents.governance': (ctx, { path }) => service.governance(ctx, path.agent_id),
    'kill-switches.list': (ctx) => service.listKillSwitches(ctx),
    'kill-switches.set': (ctx, { path, body }) => service.setKillSwitch(ctx, path.agent_id, body),
    'mcp-servers.register': (ctx, { body }) => service.registerMcpServer(ctx, body),
    'mcp-servers.list': (ctx, { query }) => service.listMcpServers(ctx, query),
    'mcp-servers.get': (ctx, { path }) => service.getMcpServer(ctx, path.name),
    'mcp-servers.update': (ctx, { path, headers, body }) => service.updateMcpServer(ctx, path.name, headers.if_match, body),
    'mcp-servers.delete': (ctx, { path }) => service.deleteMcpServer(ctx, path.name),
    'mcp-servers.open': (ctx, { body }) => service.openMcpServer(ctx, body.name),
    'mcp-servers.tools': (ctx, { path, query }) => service.mcpServerTools(ctx, path.name, query),
    'mcp-servers.accept-tool': (ctx, { path, body }) => service.acceptMcpServerTool(ctx, path.name, path.tool, body),
    'mcp-servers.tools-seen': (ctx, { path, body }) => service.recordMcpServerTools(ctx, path.name, body.tools),
    'quotas.leases': (ctx, { body }) => service.leaseQuotas(ctx, body),
    'quotas.list': (ctx, { query }) => service.listQuotas(ctx, query),
    'audit-log.list': (ctx, { query }) => service.listAuditLog(ctx, query),
    'audit.checkpoints': (ctx, { query }) => service.listAuditCheckpoints(ctx, query),
    'audit.checkpoint': (ctx) => service.createAuditCheckpoint(ctx),
    'audit.inclusion': (ctx, { query }) => service.auditInclusionProof(ctx, query),
    'audit.consistency': (ctx, { query }) => service.auditConsistencyProof(ctx, query),
    'audit.erase': (ctx, { body }) => service.auditErasures().erase(ctx, body),
    'audit.retention-get': (ctx) => service.auditErasures().retention(ctx),
    'audit.retention-put': (ctx, { body }) => service.auditErasures().setRetention(ctx, body),
    'audit.records': (ctx, { query }) => service.listAuditRecords(ctx, query),
    'audit.range': (ctx, { query }) => service.auditRangeProof(ctx, query),
    'webhooks.create': (ctx, { body }) => service.webhooks.create(ctx, body),
    'webhooks.list': (ctx, { query }) => service.webhooks.list(ctx, query),
    'webhooks.get': (ctx, { path }) => service.webhooks.get(ctx, path.id),
    'webhooks.update': (ctx, { path, body }) => service.webhooks.update(ctx, path.id, body),
    'webhooks.delete': (ctx, { path }) => service.webhooks.delete(ctx, path.id),
    'webhooks.rotate-secret': (ctx, { path, body }) => service.webhooks.rotateSecret(ctx, path.id, body.overlap_seconds),
    'integrations.slack-put': (ctx, { body }) => service.slack.put(ctx, body),
    'integrations.slack-get': (ctx) => service.slack.get(ctx),
    'integrations.slack-delete': (ctx) => service.slack.delete(ctx),
    'integrations.slack-interactivity': (ctx, { body }) => service.slack.interactivity(ctx, body),
    'webhooks.deliveries': (ctx, { path, query }) => service.webhooks.deliveries(ctx, path.id, query),
    'webhooks.redeliver': (ctx, { path }) => service.webhooks.redeliver(ctx, path.id, path.delivery_id),
  };
}

/** The Nest module of the policies service, bound to an already-built service instance. */
export class PoliciesModule {
  /** Serve the policies service's subjects with `service` (NATS or in-process, whichever transport the app uses). */
  static register(service: PoliciesService, logger: Logger): DynamicModule {
    return serveRpc('policies', policiesHandlers(service), logger);
  }
}

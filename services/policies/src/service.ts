import {
  DEFAULT_QUOTA_LEASE_TTL_MS,
  Durables,
  policyStream,
  type Agent,
  type AgentGovernance,
  type AgentRegister,
  type AgentRegisterResult,
  type CreatePolicy,
  type EvaluateAction,
  type GetPolicyQuery,
  type IngestEnvelope,
  type KillSwitchOverview,
  type KillSwitchState,
  type LeaseAnswer,
  type LeaseRequest,
  type ListAgentsQuery,
  type ListQuotasQuery,
  type ListPoliciesQuery,
  type Policy,
  type PolicyEvaluation,
  type PolicyHistory,
  type QuotaCounterPage,
  type SetKillSwitch,
  type UpdatePolicy,
  type ProjectionRetried,
  type RetryProjectionDeadLetter,
  type ListMcpServersQuery,
  type McpServer,
  type McpServerOpened,
  type McpServerPage,
  type McpServerPatch,
  type McpServerRegistration,
  type McpUpstreamHeaders,
  type McpSeenTool,
  type McpToolAccept,
  type McpToolPin,
  type McpToolPinList,
  type McpToolsQuery,
  type McpToolPinState,
  quotaLeaseGraceMs,
  type AuditLogPage,
  type AuditLogQuery,
  AUDIT_LEAF_EVENT_TYPES,
  type AuditCheckpoint,
  type AuditCheckpointPage,
  type AuditConsistencyProof,
  type AuditConsistencyQuery,
  type AuditInclusionProof,
  type AuditInclusionQuery,
  type AuditRangeProof,
  type AuditRangeQuery,
  type AuditRecordPage,
  type AuditRecordsQuery,
  type ListAuditCheckpointsQuery,
} from '@agp/contracts';
import { AUDIT_LOG_EVENT_TYPES, AUDIT_LOG_READ_MODEL, applyAuditEvents } from './audit/projection.js';
import { listAuditLog } from './audit/queries.js';
import { migrateAuditLog } from './audit/schema.js';
import { AUDIT_TRAIL_PROJECTION, applyAuditTrailEvents } from './tlog/leaves.js';
import { loadAuditSigner } from './tlog/keys.js';
import { migrateTlog } from './tlog/schema.js';
import { AuditTrail } from './tlog/trail.js';
import { AuditErasures } from './tlog/erasure.js';
import { retryProjectionDeadLetterIn, startEventSourcedService, type BusCallerDeps, type EventSourcedDeps, type IngestConsumerDeps, type IngestDelivery, type RunningEventSourcedService } from '@agp/bus';
import { EVENT_SCHEMA_VERSION, migrateSchema, ingestMetadata, ingestedEventId, requestMetadata, retryOnConflict, waitForProjections, type AppendRequest, type NewEvent, type SqlExecutor, type StoredEvent } from '@agp/eventstore';
import { NotFoundError, ServiceUnavailableError, ValidationError, assertOutboundUrl, counter, loadSecretBox, newId, parseOutboundAllowList, type HostLookup, type OutboundAllowList, type RawJson, type RequestContext, type SecretBox } from '@agp/runtime';
import { agentStream, decideRegister, evolveAgent, foldAgent, type RegistryAgent } from './agent/agent.js';
import { evaluateAction } from './evaluate.js';
import { decideKillSwitch, evolveKillSwitch, foldKillSwitch, killSwitchStream } from './killswitch/killswitch.js';
import { decideCreate, decideUpdate } from './policy/decide.js';
import { evolvePolicy, foldPolicy, policyHistory } from './policy/policy.js';
import { POLICIES_READ_MODEL, POLICIES_READ_MODEL_EVENT_TYPES, applyPoliciesEvents } from './projections/readModel.js';
import { migratePoliciesReadModel } from './projections/schema.js';
import { agentGovernance, applicablePolicies, getAgent, getMcpServer, getPolicy, killSwitchOverview, listAgentsJson, listMcpServers, listPoliciesJson, policiesByIds } from './queries.js';
import { decideDeleteMcpServer, decideRegisterMcpServer, decideUpdateMcpServer, evolveMcpServer, foldMcpServer, mcpHeadersContext, mcpServerStream, settingsOfServer, type SealedHeaders } from './mcpservers/mcpserver.js';
import { decideAcceptTool, decideToolsSeen, evolveMcpPins, foldMcpPins, pinList, pinOf, pinStates, withStanding, type McpPinsState } from './mcpservers/pins.js';
import { listQuotaCounters } from './quotas/counters.js';
import { LeaseGranter, type QuotaDeps } from './quotas/leases.js';
import { migrateQuotas } from './quotas/schema.js';
import { DEFAULT_AUDIT_CHECKPOINT_INTERVAL_MS, DEFAULT_AUDIT_LOG_NAME, DEFAULT_AUDIT_RETENTION_INTERVAL_MS, type PoliciesSettings } from './env.js';
import { WEBHOOKS_DDL } from './webhooks/store.js';
import { WEBHOOKS_PROJECTION, applyWebhookEvents } from './webhooks/projection.js';
import { WEBHOOK_SOURCE_EVENT_TYPES } from './webhooks/events.js';
import { DEFAULT_DISABLE_RULE, parseRetrySchedule } from './webhooks/schedule.js';
import { Webhooks } from './webhooks/webhooks.js';
import { ALERTS_DDL } from './alerts/store.js';
import { enqueueBudgetThresholds } from './alerts/budget.js';
import { DECISION_COUNTS_PROJECTION, DECISION_COUNT_EVENT_TYPES, DecisionAlerts, type AutoKillTrip } from './alerts/decisions.js';
import { autoKillActor } from './alerts/rules.js';
import { SLACK_DDL, SlackApprovals } from './slack/slack.js';

/** Dependencies of the policies service; the same in both run modes. */
export type PoliciesDeps = EventSourcedDeps &
  IngestConsumerDeps &
  BusCallerDeps & {
    /** Settings read from the environment (`AGP_QUOTA_LEASE_TTL_MS`, `AGP_QUOTA_VACUUM_EVERY_ITEMS`, …); absent ones take the defaults of `policiesSettings` (./env.ts). */
    env?: Partial<PoliciesSettings>;
    /**
     * Seals and opens registered MCP servers' headers. Absent: built at start from `env` (`loadSecretBox` of
     * @agp/runtime without a data folder: AGP_SECRETS_KEY, else none, and a registration with headers answers 503).
     */
    secrets?: SecretBox;
    /** How an upstream's host name is resolved for the outbound address check; the system resolver by default. */
    lookup?: HostLookup;
  };

/** Create the policies service's tables: the read model's, the fleet-wide quotas', the audit log's. */
async function migratePolicies(sql: Parameters<typeof migratePoliciesReadModel>[0]): Promise<void> {
  await migratePoliciesReadModel(sql);
  await migrateQuotas(sql);
  await migrateAuditLog(sql);
  await migrateTlog(sql);
  await migrateSchema(sql, WEBHOOKS_DDL);
  await migrateSchema(sql, ALERTS_DDL);
  await migrateSchema(sql, SLACK_DDL);
}

const agentRegistrations = counter('agp_policies_agent_registrations_total', 'Agent registrations applied, by source and result', ['source', 'result']);

/**
 * The If-Match header as a version: `3`, `"3"` or `W/"3"`; `*` and absent mean "any".
 * @throws ValidationError (422, path `header.if-match`) for anything else.
 */
export function parseIfMatch(value: string | null): number | null {
  if (value === null || value.trim() === '*' || value.trim() === '') return null;
  const m = /^\s*(?:W\/)?"?([1-9][0-9]{0,8})"?\s*$/.exec(value);
  if (!m) throw new ValidationError('If-Match must be a policy version, e.g. "3"', [{ path: 'header.if-match', message: 'expected a version number, e.g. "3"' }]);
  return Number(m[1]);
}

/**
 * The policies service: versioned event-sourced policies (`policy-<id>`), the agent registry and kill switches,
 * their read models, the `agent.register` ingest consumer, and the decision API (`policies.evaluate`). Its methods take input already parsed by the wire
 * table's request schemas (`policies.*`, `agents.*`, `kill-switches.*`); only what a schema cannot express (If-Match,
 * checks against the store) is validated here. Source: docs/api.md (Policies); docs/decisions.md (One typed wire registry); architecture §1, §3.
 */
export class PoliciesService {
  private running?: RunningEventSourcedService;
  private readonly now: () => Date;
  private readonly quotas: QuotaDeps;
  /** The `quotas.leases` calls, coalesced per organisation. */
  private readonly granter: LeaseGranter;
  /** The outbound address check's allow list (AGP_OUTBOUND_ALLOWED_HOSTS). */
  private readonly outbound: OutboundAllowList;
  private secrets?: SecretBox;
  /** Webhook subscriptions and their delivery worker (./webhooks/). */
  readonly webhooks: Webhooks;
  /** The verifiable audit trail's proofs and checkpoints (./tlog/); built at start, once the signing key is loaded. */
  private trail?: AuditTrail;
  /** Erasure requests and the organisations' audit retention (./tlog/erasure.ts). */
  private erasures?: AuditErasures;
  /** Set by the audit trail projection when a batch queued erasures of deleted interventions; cleared when the worker is woken. */
  private erasuresQueued = false;
  /** Block-rate alerts and the automatic kill switch (./alerts/decisions.ts). */
  readonly alerts: DecisionAlerts;
  /** Approvals in Slack: the connection, the message worker, the interactivity callback (./slack/slack.ts). */
  readonly slack: SlackApprovals;

  constructor(private readonly deps: PoliciesDeps) {
    this.now = deps.now ?? (() => new Date());
    this.quotas = {
      db: deps.db,
      ttlMs: deps.env?.AGP_QUOTA_LEASE_TTL_MS ?? DEFAULT_QUOTA_LEASE_TTL_MS,
      vacuumEveryItems: deps.env?.AGP_QUOTA_VACUUM_EVERY_ITEMS,
      // budget.threshold: enqueued with the counter's change; the worker is woken once it committed.
      onSpend: async (tx, org, changes, at) => {
        if (await enqueueBudgetThresholds(tx, org, changes, at)) setTimeout(() => this.webhooks.wake(), 0).unref?.();
      },
    };
    this.outbound = parseOutboundAllowList(deps.env?.AGP_OUTBOUND_ALLOWED_HOSTS);
    this.secrets = deps.secrets;
    const env = deps.env ?? {};
    this.webhooks = new Webhooks({
      db: deps.db,
      store: deps.store,
      secrets: () => this.secrets!,
      outbound: this.outbound,
      lookup: deps.lookup,
      logger: deps.logger,
      now: this.now,
      schedule: parseRetrySchedule(env.AGP_WEBHOOK_RETRY_SCHEDULE_MS),
      disable: { failures: env.AGP_WEBHOOK_DISABLE_AFTER_FAILURES ?? DEFAULT_DISABLE_RULE.failures, windowMs: env.AGP_WEBHOOK_DISABLE_AFTER_MS ?? DEFAULT_DISABLE_RULE.windowMs },
      timeoutMs: env.AGP_WEBHOOK_TIMEOUT_MS ?? 10_000,
      pollMs: env.AGP_WEBHOOK_POLL_MS ?? 500,
    });
    this.slack = new SlackApprovals({
      db: deps.db,
      bus: deps.bus,
      secrets: () => this.secrets!,
      logger: deps.logger,
      now: this.now,
      apiUrl: env.AGP_SLACK_API_URL ?? 'https://slack.com/api/',
      schedule: parseRetrySchedule(env.AGP_WEBHOOK_RETRY_SCHEDULE_MS),
      pollMs: env.AGP_WEBHOOK_POLL_MS ?? 500,
    });
    this.alerts = new DecisionAlerts({ db: deps.db, now: this.now, logger: deps.logger, engage: (t) => this.engageAutoKillSwitch(t), wake: () => this.webhooks.wake() });
    this.granter = new LeaseGranter(
      this.quotas,
      (org, ids) => policiesByIds(deps.db, org, ids),
      () => this.now().getTime(),
      (err) => deps.logger.warn({ err }, 'vacuum of the quota tables failed; retried later'),
    );
  }

  /**
   * Create the event store's and the read model's tables, start the read-model projection and the durable
   * `agent.register` ingest consumer. @throws what a migration or the consumer throws (whatever started is stopped).
   */
  async start(): Promise<void> {
    const { store, db, logger, ingestLog, subjectPrefix } = this.deps;
    this.secrets ??= await loadSecretBox(this.deps.env ?? {});
    if (this.deps.env?.AGP_AUDIT_TRAIL === 'off') logger.warn('the audit trail is off (AGP_AUDIT_TRAIL=off): governance records are not appended to it until it is turned on again, when it appends them from where it stopped');
    this.running = await startEventSourcedService<IngestEnvelope>({
      name: 'policies',
      store,
      db,
      logger,
      migrate: migratePolicies,
      projections: [
        { name: POLICIES_READ_MODEL, eventTypes: POLICIES_READ_MODEL_EVENT_TYPES, batchSize: 1000, handler: applyPoliciesEvents },
        { name: AUDIT_LOG_READ_MODEL, eventTypes: AUDIT_LOG_EVENT_TYPES, batchSize: 500, handler: applyAuditEvents },
        // AGP_AUDIT_TRAIL=off pauses the projection: its checkpoint stays where it is, so turned on again it appends what it missed.
        ...(this.deps.env?.AGP_AUDIT_TRAIL === 'off' ? [] : [
              {
                name: AUDIT_TRAIL_PROJECTION,
                eventTypes: [...AUDIT_LEAF_EVENT_TYPES],
                batchSize: 1000,
                // A deleted intervention's erasure is queued with its leaf; the worker is woken once the batch commits
                // (a claim on another connection before that would find nothing).
                handler: async (events: StoredEvent[], tx: SqlExecutor) => {
                  if (await applyAuditTrailEvents(events, tx)) this.erasuresQueued = true;
                },
                onCommitted: () => {
                  if (!this.erasuresQueued) return;
                  this.erasuresQueued = false;
                  this.erasures?.wake();
                },
              },
            ]),
        { name: DECISION_COUNTS_PROJECTION, eventTypes: DECISION_COUNT_EVENT_TYPES, batchSize: 1000, handler: (events, tx) => this.alerts.applyLedger(events, tx) },
        {
          name: WEBHOOKS_PROJECTION,
          eventTypes: WEBHOOK_SOURCE_EVENT_TYPES,
          batchSize: 500,
          handler: (events, tx) => applyWebhookEvents(events, tx, this.now()),
          // Woken once the deliveries are committed: a claim on another connection before that would find none.
          onCommitted: () => {
            this.webhooks.wake();
            this.slack.wake();
          },
        },
      ],
      ingest: { log: ingestLog, prefix: subjectPrefix, target: 'policies', durable: Durables.policiesIngest, handle: (batch) => this.recordIngested(batch) },
      parts: [
        { start: async () => this.webhooks.start(), stop: () => this.webhooks.stop() },
        {
          start: async () => {
            const env = this.deps.env ?? {};
            const logName = env.AGP_AUDIT_LOG_NAME ?? DEFAULT_AUDIT_LOG_NAME;
            const signer = await loadAuditSigner(db, this.secrets!, { AGP_AUDIT_SIGNING_KEY: env.AGP_AUDIT_SIGNING_KEY?.trim(), AGP_AUDIT_LOG_NAME: logName }, logger);
            const intervalMs = env.AGP_AUDIT_CHECKPOINT_INTERVAL_MS ?? DEFAULT_AUDIT_CHECKPOINT_INTERVAL_MS;
            this.trail = new AuditTrail({ db, signer, logName, intervalMs, now: this.now, logger, readEvents: (ids) => this.deps.store.readEvents(ids) });
            this.trail.start();
            const retentionIntervalMs = env.AGP_AUDIT_RETENTION_INTERVAL_MS ?? DEFAULT_AUDIT_RETENTION_INTERVAL_MS;
            this.erasures = new AuditErasures({ db, store, now: this.now, logger, retentionIntervalMs });
            this.erasures.start();
          },
          stop: async () => {
            await this.erasures?.stop();
            await this.trail?.stop();
          },
        },
        { start: async () => undefined, stop: () => this.alerts.idle() },
        { start: async () => this.slack.start(), stop: () => this.slack.stop() },
      ],
    });
  }

  /** Stop the ingest consumer, then the projection (in-flight batches finish first), and wait for a running vacuum of the quota tables. Idempotent. */
  async stop(): Promise<void> {
    await this.running?.stop();
    await this.granter.idle();
  }

  /**
   * `policies.retry-projection-dead-letter`: apply the organisation's dead letter of one of this service's projections
   * again through that projection (`retryProjectionDeadLetterIn` in @agp/bus: 404, 409, 422 or 503 as it says).
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
    return retryProjectionDeadLetterIn(this.running, ctx, body);
  }

  // ---------------------------------------------------------------------------------------------- policies

  /**
   * POST /api/v1/policies (`policies.create`): append PolicyCreated to a new stream; returns the policy (version 1).
   * @param input the body, parsed by `CreatePolicySchema` (`enabled` defaulted).
   */
  async createPolicy(ctx: RequestContext, input: CreatePolicy): Promise<Policy> {
    const decided = decideCreate(input, newId(), { now: this.now().toISOString(), organization_id: ctx.organization_id });
    const stored = await this.append(ctx, policyStream(decided.data.id), 'no_stream', [decided]);
    return stored.reduce<Policy | null>(evolvePolicy, null)!;
  }

  /** GET /api/v1/policies (`policies.list`): `{policies, total, skip, limit}` as JSON text, for a parsed query. */
  async listPolicies(ctx: RequestContext, query: ListPoliciesQuery): Promise<RawJson> {
    return listPoliciesJson(this.deps.db, ctx.organization_id, query);
  }

  /**
   * GET /api/v1/policies/{id} (`policies.get`): the current policy, or with `?version=N` the policy as it was at
   * version N (folded from its stream). @throws NotFoundError (404) for an unknown id, another organisation's, or
   * a version it never had.
   */
  async getPolicy(ctx: RequestContext, id: string, q: GetPolicyQuery): Promise<Policy> {
    if (q.version === undefined) {
      const policy = await getPolicy(this.deps.db, ctx.organization_id, id);
      if (!policy) throw new NotFoundError(`policy ${id} not found`);
      return policy;
    }
    const events = await this.policyEvents(ctx, id);
    if (q.version > events.length) throw new NotFoundError(`policy ${id} has no version ${q.version} (current: ${events.length})`);
    return foldPolicy(events, q.version)!;
  }

  /**
   * PATCH /api/v1/policies/{id} (`policies.update`): append PolicyUpdated and/or PolicyEnabled/PolicyDisabled with
   * the stream's expected version; a patch that changes nothing appends nothing. Returns the policy after the change.
   * @param ifMatch the raw If-Match header value, or null when absent (parsed by {@link parseIfMatch}).
   * @param changes the merge patch, parsed by `UpdatePolicySchema` (at least one field).
   * A change that lands concurrently makes it read and decide again ({@link retryOnConflict}): without If-Match the
   * patch applies to the newer version; with If-Match the version no longer matches.
   * @throws ValidationError (422, `header.if-match`) for a malformed If-Match; NotFoundError (404); ConflictError
   *   (409) when If-Match is not the current version (naming both), or after 10 concurrent changes in a row.
   */
  async updatePolicy(ctx: RequestContext, id: string, ifMatch: string | null, changes: UpdatePolicy): Promise<Policy> {
    const expected = parseIfMatch(ifMatch);
    return retryOnConflict('the policy', async () => {
      const state = foldPolicy(await this.deps.store.readStream(policyStream(id)));
      const decided = decideUpdate(state, changes, expected, { now: this.now().toISOString(), organization_id: ctx.organization_id });
      if (decided.length === 0) return state!;
      const stored = await this.append(ctx, policyStream(id), state!.version, decided);
      return stored.reduce<Policy | null>(evolvePolicy, state)!;
    });
  }

  /**
   * GET /api/v1/policies/{id}/history (`policies.history`): every event of the policy's stream with version, time,
   * actor and changes. @throws NotFoundError (404) for an unknown id or another organisation's.
   */
  async policyHistory(ctx: RequestContext, id: string): Promise<PolicyHistory> {
    return { policy_id: id, history: policyHistory(await this.policyEvents(ctx, id)) };
  }

  /**
   * POST /api/v1/policies/evaluate (`policies.evaluate`): one decision for the action from the organisation's enabled
   * policies that apply to the agent, its kill switches, the fleet-wide counters of its limits and, with `run_id`, the
   * run's spend and recent actions (asked of the stats service). Changes nothing unless `reserve: true` (then the
   * action's needs are drawn from the counters when it may run). Precedence and rules: `decide` in `@agp/policy-engine`.
   * @param input the body, parsed by `EvaluateActionSchema`.
   * @throws ForbiddenError (403) for `reserve: true` with a read key; ServiceUnavailableError (503) when the stats
   *   service cannot be asked for the run.
   */
  async evaluate(ctx: RequestContext, input: EvaluateAction): Promise<PolicyEvaluation> {
    return evaluateAction({ sql: this.deps.db, bus: this.deps.bus, quotas: this.quotas, alerts: this.alerts }, ctx, input, this.now());
  }

  // ---------------------------------------------------------------------------------------------- quotas

  /**
   * POST /api/v1/quotas/leases (`quotas.leases`): apply a holder's reports, then its acquisitions, in one transaction
   * with the other calls of the organisation waiting meanwhile (`LeaseGranter` of ./quotas/leases.ts: the batching,
   * the slice rule, the errors).
   * @param body the body, parsed by `LeaseRequestSchema`.
   * @throws ValidationError (422), NotFoundError (404), ConflictError (409) naming the item; nothing is written then.
   */
  async leaseQuotas(ctx: RequestContext, body: LeaseRequest): Promise<LeaseAnswer> {
    return this.granter.lease(ctx.organization_id, body);
  }

  /** GET /api/v1/quotas (`quotas.list`): one page of the organisation's fleet-wide counters, most recently changed first. */
  async listQuotas(ctx: RequestContext, query: ListQuotasQuery): Promise<QuotaCounterPage> {
    return listQuotaCounters(this.deps.db, ctx.organization_id, query, this.now().getTime(), quotaLeaseGraceMs(this.quotas.ttlMs));
  }

  /**
   * GET /api/v1/agents/{agent_id}/governance (`agents.governance`): the enabled policies that apply to the agent and
   * its kill switches, selected as the decision API selects them. The agent need not be registered.
   */
  async governance(ctx: RequestContext, agentId: string): Promise<AgentGovernance> {
    return agentGovernance(this.deps.db, ctx.organization_id, agentId);
  }

  /** The events of a policy's stream. @throws NotFoundError when it does not exist or is another organisation's. */
  private async policyEvents(ctx: RequestContext, id: string): Promise<StoredEvent[]> {
    const events = await this.deps.store.readStream(policyStream(id));
    if (events.length === 0 || events[0].metadata.organization_id !== ctx.organization_id) throw new NotFoundError(`policy ${id} not found`);
    return events;
  }

  // ---------------------------------------------------------------------------------------------- agents

  /**
   * POST /api/v1/agents (`agents.register`): register an agent, or re-register it (its definition is replaced; an
   * identical one appends nothing). `created` is true when this call registered it. A concurrent registration of
   * the same agent makes it read and decide again ({@link retryOnConflict}): the definition is replaced, last one wins.
   * @param input the body, parsed by `AgentRegisterSchema`.
   * @throws ConflictError (409) only after 10 concurrent registrations of the same agent in a row.
   */
  async registerAgent(ctx: RequestContext, input: AgentRegister): Promise<AgentRegisterResult> {
    const stream = agentStream(ctx.organization_id, input.agent_id);
    const { state, agent, decided } = await retryOnConflict('the agent', async () => {
      const state = foldAgent(await this.deps.store.readStream(stream));
      const decided = decideRegister(state, input, this.now().toISOString());
      let agent = state;
      if (decided) {
        const stored = await this.append(ctx, stream, state ? state.version : 'no_stream', [decided]);
        agent = stored.reduce<RegistryAgent | null>(evolveAgent, state);
      }
      return { state, agent, decided };
    });
    agentRegistrations.inc({ source: 'api', result: decided ? decided.type : 'unchanged' });
    return { created: state === null, agent: await this.withKillSwitch(ctx, agent!) };
  }

  /** GET /api/v1/agents (`agents.list`): `{agents, total, skip, limit}` as JSON text, by agent_id, for a parsed query. */
  async listAgents(ctx: RequestContext, query: ListAgentsQuery): Promise<RawJson> {
    return listAgentsJson(this.deps.db, ctx.organization_id, query);
  }

  /** GET /api/v1/agents/{id} (`agents.get`): the agent with its actions and kill switch. @throws NotFoundError (404). */
  async getAgent(ctx: RequestContext, id: string): Promise<Agent> {
    const agent = await getAgent(this.deps.db, ctx.organization_id, id);
    if (!agent) throw new NotFoundError(`agent ${id} not found`);
    return agent;
  }

  /** The agent record with its own kill switch, folded from the streams (exact, whatever the read model's lag). */
  private async withKillSwitch(ctx: RequestContext, agent: RegistryAgent): Promise<Agent> {
    const ks = foldKillSwitch('agent', agent.agent_id, await this.deps.store.readStream(killSwitchStream(ctx.organization_id, 'agent', agent.agent_id)));
    return { ...agent, kill_switch: { engaged: ks.engaged, reason: ks.reason, changed_at: ks.changed_at, changed_by: ks.changed_by, actor_name: ks.actor_name } };
  }

  // ---------------------------------------------------------------------------------------------- kill switches

  /** GET /api/v1/kill-switches (`kill-switches.list`): the organisation's switch and every engaged agent switch. */
  async listKillSwitches(ctx: RequestContext): Promise<KillSwitchOverview> {
    return killSwitchOverview(this.deps.db, ctx.organization_id);
  }

  /**
   * PUT /api/v1/kill-switches/organization and /agents/{agent_id} (`kill-switches.set`): engage or release;
   * KillSwitchEngaged / KillSwitchReleased record the reason, and the actor (`key:<key id>`) in the metadata.
   * Setting the state the switch already has appends nothing. Returns the new state. A PUT of a state is
   * idempotent, so a concurrent change of the same switch makes it read and decide again ({@link retryOnConflict}):
   * concurrent PUTs all answer 200 with the state they left.
   * @param agentId the agent whose switch to set, or undefined for the organisation's. Any agent id, registered or
   *   not: stopping an agent the registry does not know (one that connected without registering, or not yet) is when
   *   a switch is needed most; the switch applies to its decisions all the same.
   * @param change the body, parsed by `SetKillSwitchSchema`.
   * @throws ConflictError (409) only after 10 concurrent changes of the same switch in a row.
   */
  async setKillSwitch(ctx: RequestContext, agentId: string | undefined, change: SetKillSwitch): Promise<KillSwitchState> {
    const scope = agentId === undefined ? 'organization' : 'agent';
    const stream = killSwitchStream(ctx.organization_id, scope, agentId ?? null);
    return retryOnConflict('the kill switch', async () => {
      const state = foldKillSwitch(scope, agentId ?? null, await this.deps.store.readStream(stream));
      const decided = decideKillSwitch(state, change, this.now().toISOString());
      if (!decided) return state;
      const stored = await this.append(ctx, stream, state.version === 0 ? 'no_stream' : state.version, [decided]);
      return stored.reduce(evolveKillSwitch, state);
    });
  }

  /**
   * Engage an agent's own kill switch for a policy's `auto_kill_switch` that tripped: KillSwitchEngaged with the
   * rule's reason, recorded as actor `rule:auto_kill_switch:<policy id>` (its name: the policy's), so the webhooks
   * send it as `kill_switch.changed` and the audit names the rule. A switch already engaged is left as it is; only a
   * person releases it (`kill-switches.set`). Source: docs/notifications.md (Automatic kill switch).
   */
  async engageAutoKillSwitch(trip: AutoKillTrip): Promise<void> {
    const stream = killSwitchStream(trip.organization_id, 'agent', trip.agent_id);
    await retryOnConflict('the kill switch', async () => {
      const state = foldKillSwitch('agent', trip.agent_id, await this.deps.store.readStream(stream));
      const decided = decideKillSwitch(state, { engaged: true, reason: trip.reason }, this.now().toISOString());
      if (!decided) return;
      const metadata = { organization_id: trip.organization_id, actor: autoKillActor(trip.policy.id), actor_name: trip.policy.name, correlation_id: newId(), schema_version: EVENT_SCHEMA_VERSION };
      await this.deps.store.append([{ stream_id: stream, expected_version: state.version === 0 ? 'no_stream' : state.version, events: [{ event_id: newId(), type: decided.type, data: decided.data as unknown as Record<string, unknown>, metadata }] }]);
      this.deps.logger.warn({ organization_id: trip.organization_id, agent_id: trip.agent_id, policy_id: trip.policy.id }, 'automatic kill switch engaged');
    });
  }

  // ---------------------------------------------------------------------------------------------- MCP servers

  /**
   * POST /api/v1/mcp/servers (`mcp-servers.register`): check the URL (outbound address check), seal the headers, append
   * McpServerRegistered to the server's stream. Returns the record (header names, never values).
   * @param body the body, parsed by `McpServerRegistrationSchema` (defaults applied).
   * @throws ValidationError (422, `body.url`) for a URL the platform does not call; ConflictError (409) when the name is
   *   taken; ServiceUnavailableError (503 naming AGP_SECRETS_KEY) for headers without a secrets key.
   */
  async registerMcpServer(ctx: RequestContext, body: McpServerRegistration): Promise<McpServer> {
    await assertOutboundUrl(body.url, 'body.url', this.outbound, this.deps.lookup);
    const headers = this.sealHeaders(ctx, body.name, body.headers);
    const stream = mcpServerStream(ctx.organization_id, body.name);
    return retryOnConflict('the server', async () => {
      const state = foldMcpServer(await this.deps.store.readStream(stream));
      const decided = decideRegisterMcpServer(state, body, headers, this.now().toISOString());
      const stored = await this.append(ctx, stream, state.version || 'no_stream', [decided]);
      return stored.reduce(evolveMcpServer, state).record!.server;
    });
  }

  /** GET /api/v1/mcp/servers (`mcp-servers.list`): one page of the organisation's servers, by name. */
  async listMcpServers(ctx: RequestContext, query: ListMcpServersQuery): Promise<McpServerPage> {
    return listMcpServers(this.deps.db, ctx.organization_id, query);
  }

  /** GET /api/v1/mcp/servers/{name} (`mcp-servers.get`). @throws NotFoundError (404), also for another organisation's. */
  async getMcpServer(ctx: RequestContext, name: string): Promise<McpServer> {
    const server = await getMcpServer(this.deps.db, ctx.organization_id, name);
    if (!server) throw new NotFoundError(`MCP server ${name} not found`);
    return server;
  }

  /**
   * PATCH /api/v1/mcp/servers/{name} (`mcp-servers.update`): append McpServerUpdated with the settings after the patch
   * (`headers`, when given, replace the whole set, sealed anew); a patch that changes nothing appends nothing.
   * @param ifMatch the raw If-Match header, or null ({@link parseIfMatch}).
   * @throws ValidationError (422: `body.url`, `header.if-match`); NotFoundError (404); ConflictError (409) when
   *   If-Match is not the current version; ServiceUnavailableError (503) for headers without a secrets key.
   */
  async updateMcpServer(ctx: RequestContext, name: string, ifMatch: string | null, patch: McpServerPatch): Promise<McpServer> {
    const expected = parseIfMatch(ifMatch);
    if (patch.url !== undefined) await assertOutboundUrl(patch.url, 'body.url', this.outbound, this.deps.lookup);
    const stream = mcpServerStream(ctx.organization_id, name);
    return retryOnConflict('the server', async () => {
      const state = foldMcpServer(await this.deps.store.readStream(stream));
      // Sealed once the server is known to exist: an unknown one is a 404 whether or not a key is set.
      const headers = patch.headers === undefined || !state.record ? null : this.sealHeaders(ctx, name, patch.headers);
      const decided = decideUpdateMcpServer(state, name, patch, expected, headers, this.now().toISOString());
      if (!decided) return state.record!.server;
      const stored = await this.append(ctx, stream, state.version, [decided]);
      return stored.reduce(evolveMcpServer, state).record!.server;
    });
  }

  /** DELETE /api/v1/mcp/servers/{name} (`mcp-servers.delete`): append McpServerDeleted. @throws NotFoundError (404). */
  async deleteMcpServer(ctx: RequestContext, name: string): Promise<null> {
    const stream = mcpServerStream(ctx.organization_id, name);
    return retryOnConflict('the server', async () => {
      const state = foldMcpServer(await this.deps.store.readStream(stream));
      await this.append(ctx, stream, state.version || 'no_stream', [decideDeleteMcpServer(state, name, this.now().toISOString())]);
      return null;
    });
  }

  /**
   * `mcp-servers.open` (the gateway's hosted proxy only; no HTTP route): a server's settings and its headers opened,
   * and its tool pins, folded from its stream. @throws NotFoundError (404); ServiceUnavailableError (503) when no
   * configured key opens them.
   */
  async openMcpServer(ctx: RequestContext, name: string): Promise<McpServerOpened> {
    const events = await this.deps.store.readStream(mcpServerStream(ctx.organization_id, name));
    const { record } = foldMcpServer(events);
    if (!record) throw new NotFoundError(`MCP server ${name} not found`);
    const headers = record.sealed_headers === null ? {} : (JSON.parse(this.secrets!.open(record.sealed_headers, mcpHeadersContext(ctx.organization_id, name))) as Record<string, string>);
    return { settings: settingsOfServer(record.server), headers, pins: pinStates(foldMcpPins(events)) };
  }

  /**
   * GET /api/v1/mcp/servers/{name}/tools (`mcp-servers.tools`): the server's tool pins, folded from its stream; with
   * `query.agent_id`, each tool's standing for that agent ({@link withStanding}: the enabled policies applying to it,
   * selected as the decision API selects them; the agent need not be registered).
   * @throws NotFoundError (404), also for another organisation's server.
   */
  async mcpServerTools(ctx: RequestContext, name: string, query: McpToolsQuery = {}): Promise<McpToolPinList> {
    const { pins, server } = await this.registeredPins(mcpServerStream(ctx.organization_id, name), name);
    const list = pinList(name, pins);
    if (query.agent_id === undefined) return list;
    return withStanding(list, query.agent_id, server.action_prefix, await applicablePolicies(this.deps.db, ctx.organization_id, query.agent_id));
  }

  /** A registered server's stream version, record and pins. @throws NotFoundError (404) when it is not registered. */
  private async registeredPins(stream: string, name: string): Promise<{ version: number; pins: McpPinsState; server: McpServer }> {
    const events = await this.deps.store.readStream(stream);
    const { record, version } = foldMcpServer(events);
    if (!record) throw new NotFoundError(`MCP server ${name} not found`);
    return { version, pins: foldMcpPins(events), server: record.server };
  }

  /**
   * POST /api/v1/mcp/servers/{name}/tools/{tool}/accept (`mcp-servers.accept-tool`): append McpServerToolAccepted
   * (nothing when the tool is pinned as listed already). Returns the tool's pin after it.
   * @throws NotFoundError (404) for no such server or a tool it does not list; ConflictError (409) when `body.hash` is
   *   not the hash listed now.
   */
  async acceptMcpServerTool(ctx: RequestContext, name: string, tool: string, body: McpToolAccept): Promise<McpToolPin> {
    const stream = mcpServerStream(ctx.organization_id, name);
    return retryOnConflict('the server', async () => {
      const { version, pins } = await this.registeredPins(stream, name);
      const decided = decideAcceptTool(pins, name, tool, body.hash, this.now().toISOString());
      if (!decided) return pinOf(pins, tool);
      const stored = await this.appendUnprojected(ctx, stream, version, [decided]);
      return pinOf(stored.reduce(evolveMcpPins, pins), tool);
    });
  }

  /**
   * POST /api/v1/mcp/servers/{name}/tools (`mcp-servers.tools-seen`, what the MCP proxy sends): record the tool list the
   * upstream answered (McpServerToolsSeen, only when it differs from the pins) and answer the pins after it.
   * @throws NotFoundError (404) for a server not registered.
   */
  async recordMcpServerTools(ctx: RequestContext, name: string, tools: McpSeenTool[]): Promise<{ pins: McpToolPinState[] }> {
    const stream = mcpServerStream(ctx.organization_id, name);
    return retryOnConflict('the server', async () => {
      const { version, pins } = await this.registeredPins(stream, name);
      const decided = decideToolsSeen(pins, name, tools, this.now().toISOString());
      if (!decided) return { pins: pinStates(pins) };
      const stored = await this.appendUnprojected(ctx, stream, version, [decided]);
      return { pins: pinStates(stored.reduce(evolveMcpPins, pins)) };
    });
  }

  /** A server's headers sealed as one value bound to the organisation and name; none: no value (and no key needed). */
  private sealHeaders(ctx: RequestContext, name: string, headers: McpUpstreamHeaders): SealedHeaders {
    const names = Object.keys(headers);
    if (names.length === 0) return { header_names: [], sealed_headers: null };
    return { header_names: names, sealed_headers: this.secrets!.seal(JSON.stringify(headers), mcpHeadersContext(ctx.organization_id, name)) };
  }

  // ---------------------------------------------------------------------------------------------- ingest

  /**
   * Apply the `agent.register` events of a batch of ingest messages, in order. Each event's store id is derived
   * from (organisation, client event id), and an event whose id is already in the agent's stream is skipped, so a
   * repeat is a no-op. All resulting events are appended in one transaction, each stream with its expected
   * version; then the messages are acked.
   * @throws the store's error when an append fails (e.g. a concurrent registration): the consumer's `settleIsolated`
   * naks the batch for a redelivery, which decides again, or dead-letters a message that can never be stored.
   */
  async recordIngested(batch: IngestDelivery<IngestEnvelope>[]): Promise<void> {
    const streams = new Map<string, { state: RegistryAgent | null; initial: number | 'no_stream'; ids: Set<string>; events: NewEvent[] }>();
    for (const msg of batch) {
      const env = msg.payload;
      for (const ev of env.events) {
        if (ev.type !== 'agent.register') continue;
        // Trusted: the ingest service validated it, the consumer checked the message's schema version (admitBySchema).
        const body = ev.body as AgentRegister;
        const entry = await this.streamEntry(streams, env.organization_id, body);
        const eventId = ingestedEventId(env.organization_id, ev.id);
        if (entry.ids.has(eventId)) {
          agentRegistrations.inc({ source: 'ingest', result: 'duplicate' });
          continue;
        }
        const decided = decideRegister(entry.state, body, env.received_at);
        agentRegistrations.inc({ source: 'ingest', result: decided ? decided.type : 'unchanged' });
        if (!decided) continue;
        const version = (entry.state?.version ?? 0) + 1;
        const metadata = ingestMetadata(env);
        const event: NewEvent = { event_id: eventId, type: decided.type, data: decided.data as unknown as Record<string, unknown>, metadata };
        entry.events.push(event);
        entry.ids.add(eventId);
        entry.state = evolveAgent(entry.state, { ...event, stream_version: version });
      }
    }
    const requests: AppendRequest[] = [...streams.entries()]
      .filter(([, s]) => s.events.length > 0)
      .map(([stream_id, s]) => ({ stream_id, expected_version: s.initial, events: s.events }));
    await this.deps.store.append(requests);
    await Promise.all(batch.map((m) => m.ack()));
  }

  /** The in-batch state of an agent's stream, read once per batch. */
  private async streamEntry(
    streams: Map<string, { state: RegistryAgent | null; initial: number | 'no_stream'; ids: Set<string>; events: NewEvent[] }>,
    org: string,
    body: AgentRegister,
  ) {
    const stream = agentStream(org, body.agent_id);
    let entry = streams.get(stream);
    if (!entry) {
      const events = await this.deps.store.readStream(stream);
      const state = foldAgent(events);
      entry = { state, initial: state ? state.version : 'no_stream', ids: new Set(events.map((e) => e.event_id)), events: [] };
      streams.set(stream, entry);
    }
    return entry;
  }

  // ---------------------------------------------------------------------------------------------- audit log

  /**
   * GET /api/v1/audit-log (`audit-log.list`): one filtered page of the organisation's log of administrative changes,
   * newest first (./audit/queries.ts). The gateway asks page after page for an export.
   * @throws BadRequestError (400) for a cursor this list did not issue, or both cursor and skip.
   */
  async listAuditLog(ctx: RequestContext, query: AuditLogQuery): Promise<AuditLogPage> {
    return listAuditLog(this.deps.db, ctx.organization_id, query);
  }

  // ---------------------------------------------------------------------------------------------- audit trail

  /** GET /api/v1/audit/checkpoints (`audit.checkpoints`): one page of the organisation's checkpoints, newest first, with the latest. */
  async listAuditCheckpoints(ctx: RequestContext, query: ListAuditCheckpointsQuery): Promise<AuditCheckpointPage> {
    return this.auditTrail().list(ctx.organization_id, query);
  }

  /** POST /api/v1/audit/checkpoints (`audit.checkpoint`): sign a checkpoint now. @throws ServiceUnavailableError (503) without a signing key. */
  async createAuditCheckpoint(ctx: RequestContext): Promise<AuditCheckpoint> {
    return this.auditTrail().checkpoint(ctx.organization_id);
  }

  /** GET /api/v1/audit/proofs/inclusion (`audit.inclusion`). @throws NotFoundError (404); ValidationError (422, `query.tree_size`). */
  async auditInclusionProof(ctx: RequestContext, query: AuditInclusionQuery): Promise<AuditInclusionProof> {
    return this.auditTrail().inclusion(ctx.organization_id, query);
  }

  /** GET /api/v1/audit/proofs/consistency (`audit.consistency`). @throws ValidationError (422, `query.from` / `query.to`). */
  async auditConsistencyProof(ctx: RequestContext, query: AuditConsistencyQuery): Promise<AuditConsistencyProof> {
    return this.auditTrail().consistency(ctx.organization_id, query);
  }

  /**
   * The audit trail's erasures and retention (`audit.erase`, `audit.retention-get`, `audit.retention-put`), once started.
   * @throws ServiceUnavailableError (503) before the service has started.
   */
  auditErasures(): AuditErasures {
    if (!this.erasures) throw new ServiceUnavailableError('the audit trail is starting');
    return this.erasures;
  }

  /** GET /api/v1/audit/records (`audit.records`). @throws ValidationError (422, `query.start` / `query.end` / `query.cursor`). */
  async listAuditRecords(ctx: RequestContext, query: AuditRecordsQuery): Promise<AuditRecordPage> {
    return this.auditTrail().records(ctx.organization_id, query);
  }

  /** GET /api/v1/audit/proofs/range (`audit.range`). @throws ValidationError (422, `query.tree_size` / `query.end`). */
  async auditRangeProof(ctx: RequestContext, query: AuditRangeQuery): Promise<AuditRangeProof> {
    return this.auditTrail().range(ctx.organization_id, query);
  }

  /** The audit trail, once started. @throws ServiceUnavailableError (503) before the service has started. */
  private auditTrail(): AuditTrail {
    if (!this.trail) throw new ServiceUnavailableError('the audit trail is starting');
    return this.trail;
  }

  // ---------------------------------------------------------------------------------------------- helpers

  /**
   * Append decided events to one stream with its expected version and wait until the read model has applied
   * them (read-your-writes). @returns the stored events. @throws WrongExpectedVersionError (409).
   */
  private async append(ctx: RequestContext, streamId: string, expected: number | 'no_stream', decided: Array<{ type: string; data: object }>): Promise<StoredEvent[]> {
    const events = decided.map((d) => ({ event_id: newId(), type: d.type, data: d.data as Record<string, unknown>, metadata: requestMetadata(ctx) }));
    const [result] = await this.deps.store.append([{ stream_id: streamId, expected_version: expected, events }]);
    await this.caughtUp(result.appended.at(-1)?.global_position);
    return result.appended;
  }

  /**
   * Append events the policies read model does not project (tool pins, read by folding the stream; the audit log
   * records an accept on its own time, as every change): no waiting for the projections.
   */
  private async appendUnprojected(ctx: RequestContext, streamId: string, expected: number, decided: Array<{ type: string; data: object }>): Promise<StoredEvent[]> {
    const events = decided.map((d) => ({ event_id: newId(), type: d.type, data: d.data as Record<string, unknown>, metadata: requestMetadata(ctx) }));
    const [result] = await this.deps.store.append([{ stream_id: streamId, expected_version: expected, events }]);
    return result.appended;
  }

  /** Wait until the read model has applied `position`; on timeout, log and answer anyway. */
  private caughtUp(position: bigint | undefined): Promise<void> {
    return waitForProjections([this.running?.subscriptions.get(POLICIES_READ_MODEL)], position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
  }
}

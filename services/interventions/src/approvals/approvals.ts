import { interventionIdOfApproval, interventionStream, scopeAllows, type ApprovalDecision, type ApprovalDecisionKind, type ApprovalRecord, type ListApprovalsQuery } from '@agp/contracts';
import {
  EVENT_SCHEMA_VERSION,
  migrateSchema,
  requestMetadata,
  retryOnConflict,
  waitForProjections,
  type EventMetadata,
  type InlineProjection,
  type Sql,
  type StoredEvent,
  type Subscription,
  type SubscriptionOptions,
} from '@agp/eventstore';
import { ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError, deterministicId, newId, type RawJson, type RequestContext } from '@agp/runtime';
import { RemoteProblemError, call } from '@agp/bus';
import type { InterventionsDeps } from '../service.js';
import { DEFAULT_APPROVAL_SWEEP_MS } from '../env.js';
import { DEFAULT_APPROVAL_TTL_SECONDS, evolveApproval, foldApproval } from './approval.js';
import { decideApproval, decideExpiry, type AgentStewards, type ApprovalEventToAppend } from './decide.js';
import { APPROVALS_DDL, APPROVALS_EVENT_TYPES, APPROVALS_PROJECTION, applyApprovalEvents, dueApprovals, getApproval, listApprovalsJson } from './readModel.js';

/** Most approvals the sweeper expires per pass. */
const SWEEP_BATCH = 500;

/**
 * The approval inbox: an escalated intervention opens approval `apr-<intervention id>`; approving or
 * rejecting appends InterventionOutcomeChanged to the intervention's stream; a sweeper expires pending
 * approvals past their `expires_at` to `rejected_after_review` with reason `expired`.
 * The service migrates its table ({@link migrate}) and subscribes its {@link projection} with its other read models;
 * {@link start} / {@link stop} run the expiry sweeper (a `ServicePart` of `startEventSourcedService`).
 * Settings (from `deps.env`, see ../env.ts): AGP_APPROVAL_TTL_SECONDS and AGP_APPROVAL_SWEEP_MS.
 * Source: architecture §4 (Approvals).
 */
export class Approvals {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;
  private readonly now: () => Date;
  /** Seconds an escalated record's approval stays open (AGP_APPROVAL_TTL_SECONDS, default 24 h). */
  readonly ttlSeconds: number;
  private readonly sweepMs: number;

  /**
   * @param readModels the running projections a decision or an expiry waits for before it answers: the approvals
   *   projection and the interventions list/stats projection of the same service (so a GET of the approval or the
   *   intervention right after shows the new state). Undefined entries (not started) are skipped.
   * @param inline the read models a decision or an expiry applies in its append's transaction (the service's).
   */
  constructor(
    private readonly deps: InterventionsDeps,
    private readonly readModels: () => Array<Subscription | undefined> = () => [],
    private readonly inline: () => readonly InlineProjection[] = () => [],
  ) {
    this.now = deps.now ?? (() => new Date());
    this.ttlSeconds = deps.env?.AGP_APPROVAL_TTL_SECONDS ?? DEFAULT_APPROVAL_TTL_SECONDS;
    this.sweepMs = deps.env?.AGP_APPROVAL_SWEEP_MS ?? DEFAULT_APPROVAL_SWEEP_MS;
  }

  /** Create the `agp_approvals` table (idempotent). */
  async migrate(sql: Sql): Promise<void> {
    await migrateSchema(sql, APPROVALS_DDL);
  }

  /** The approvals read-model projection (`agp_approvals`), for the service to subscribe with its other read models. */
  get projection(): Omit<SubscriptionOptions, 'onError'> {
    return { name: APPROVALS_PROJECTION, eventTypes: APPROVALS_EVENT_TYPES, batchSize: 5000, handler: (events, tx) => applyApprovalEvents(events, tx, this.ttlSeconds) };
  }

  /** Start the expiry sweeper (the table exists and the projection runs by then). */
  async start(): Promise<void> {
    this.stopped = false;
    this.schedule();
  }

  /** Stop the sweeper, waiting for a pass in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.sweeping;
  }

  /**
   * GET /api/v1/approvals: `{approvals, total, skip, limit}` (JSON text), newest first. `q` is the query as
   * `approvals.list` parsed it (defaults applied).
   */
  async list(ctx: RequestContext, q: ListApprovalsQuery): Promise<RawJson> {
    return listApprovalsJson(this.deps.db, ctx.organization_id, q);
  }

  /**
   * GET /api/v1/approvals/{id}: one approval record.
   * @throws NotFoundError (404) for an unknown id, a deleted intervention's, or another organisation's.
   */
  async get(ctx: RequestContext, id: string): Promise<ApprovalRecord> {
    const approval = await getApproval(this.deps.db, ctx.organization_id, id);
    if (!approval) throw new NotFoundError(`approval ${id} not found`);
    return approval;
  }

  /**
   * POST /api/v1/approvals/{id}/approve and /reject: decide approval `id` with `decision` (`{approver_email, notes?}`,
   * as `approvals.approve` / `approvals.reject` parsed it).
   * Appends InterventionOutcomeChanged (to approved_after_review / rejected_after_review, actor
   * `approver:<email>`), or InterventionApprovalGiven for the first of two approvals, with the stream's expected
   * version and answers with the approval once the read models caught up. Under separation of duties a person's
   * decision first asks the policies service for the agent's owner and last changer (`agents.get`).
   * @throws ForbiddenError (403) for a read key, or a key bound to another agent than the approval's; NotFoundError (404);
   *   ConflictError (409) when already decided (naming by whom and when; a concurrent decision or expiry makes it
   *   read and decide again, {@link retryOnConflict}, so the loser learns who won), or past its expiry (then it is expired),
   *   or approved a second time by the same approver; ForbiddenError (403) under separation of duties for a key, the
   *   agent's owner or last changer; ServiceUnavailableError (503) when the agent registry cannot be asked.
   */
  async decide(ctx: RequestContext, id: string, decision: ApprovalDecision, kind: ApprovalDecisionKind): Promise<ApprovalRecord> {
    if (!scopeAllows(ctx.scope, 'write')) throw new ForbiddenError('a read-only key cannot decide approvals');
    const interventionId = interventionIdOfApproval(id);
    if (!interventionId) throw new NotFoundError(`approval ${id} not found`);
    let stewards: AgentStewards | null | undefined;
    const { state, result, stored } = await retryOnConflict('the approval', async () => {
      const events = await this.deps.store.readStream(interventionStream(interventionId));
      const state = foldApproval(events, this.ttlSeconds);
      const a = state.approval;
      if (stewards === undefined && ctx.user_id && a?.separation_of_duties && a.status === 'pending' && a.organization_id === ctx.organization_id) {
        stewards = await this.stewardsOf(ctx, a.agent_id);
      }
      const result = decideApproval(state, {
        approval_id: id,
        decision: kind,
        approver_email: decision.approver_email,
        notes: decision.notes,
        organization_id: ctx.organization_id,
        key_id: ctx.key_id,
        key_name: ctx.key_name,
        bound_agent_id: ctx.agent_id,
        user_id: ctx.user_id,
        user_email: ctx.user_email,
        user_name: ctx.user_name,
        stewards,
        now: this.now().toISOString(),
      });
      return { state, result, stored: await this.append(interventionId, state.version, result.event, ctx.organization_id, ctx) };
    });
    if (result.kind === 'expired') throw new ConflictError(`approval ${id} expired at ${state.approval!.expires_at}; it can no longer be decided`);
    // The same evolve as the projection: the answer equals what the read model now holds.
    return stored ? evolveApproval(state.approval, stored, this.ttlSeconds)! : (await getApproval(this.deps.db, ctx.organization_id, id))!;
  }

  /**
   * The owner and last changer of agent `agentId` (the policies service's `agents.get`), for separation of duties;
   * null when the agent is not registered.
   * @throws ServiceUnavailableError (503) when the policies service cannot be asked (no bus, or it does not answer).
   */
  private async stewardsOf(ctx: RequestContext, agentId: string): Promise<AgentStewards | null> {
    if (!this.deps.bus) throw new ServiceUnavailableError('separation of duties needs the agent registry, which this process cannot reach; retry');
    try {
      const agent = await call(this.deps.bus, 'agents.get', { ...ctx, scope: 'read', agent_id: null }, { path: { id: agentId } });
      return { agent_id: agent.agent_id, owner: agent.owner, changed_by: agent.changed_by ?? null };
    } catch (err) {
      if (err instanceof RemoteProblemError && err.problem.status === 404) return null;
      throw err;
    }
  }

  /**
   * Append one approval event to `intervention-<id>` at `expectedVersion`, then wait for the approvals and
   * interventions read models to apply it (read-your-writes). Expiries carry a deterministic event id, so two
   * sweepers (or a sweeper and a late decision) store one. Returns the stored event (undefined for a duplicate).
   * @throws WrongExpectedVersionError (409) when the stream moved since it was read.
   */
  private async append(interventionId: string, expectedVersion: number, event: ApprovalEventToAppend, organization_id: string, ctx?: RequestContext): Promise<StoredEvent | undefined> {
    const { store } = this.deps;
    const metadata: EventMetadata = ctx ? requestMetadata(ctx, { actor: event.actor }) : { organization_id, actor: event.actor, schema_version: EVENT_SCHEMA_VERSION };
    const event_id = event.actor === 'system' ? deterministicId(organization_id, 'approval-expired', interventionId) : newId();
    const [result] = await store.append([
      { stream_id: interventionStream(interventionId), expected_version: expectedVersion, events: [{ event_id, type: event.type, data: { ...event.data }, metadata }] },
    ], { inline: this.inline() });
    const appended = result.appended.at(-1);
    if (appended) await this.caughtUp(appended.global_position);
    return appended;
  }

  /** Wait (bounded by readYourWritesMs, default 3000) until the approvals and interventions read models applied `position`. */
  private caughtUp(position: bigint): Promise<void> {
    return waitForProjections(this.readModels(), position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sweeping = this.sweep()
        .then(() => undefined)
        .catch((err) => this.deps.logger.error({ err }, 'approval expiry sweep failed; retrying next pass'))
        .finally(() => this.schedule());
    }, this.sweepMs);
    this.timer.unref?.();
  }

  /**
   * One sweeper pass: expire every pending approval past its `expires_at` (indexed query), each by
   * appending InterventionOutcomeChanged `{from: escalated, to: rejected_after_review, reason: expired}`
   * (actor `system`) at the stream's version. A conflict means someone decided first: skipped.
   * @returns how many approvals it expired.
   */
  async sweep(): Promise<number> {
    const now = this.now().toISOString();
    const due = await dueApprovals(this.deps.db, now, SWEEP_BATCH);
    let expired = 0;
    for (const interventionId of due) {
      if (this.stopped) break;
      const events = await this.deps.store.readStream(interventionStream(interventionId));
      const state = foldApproval(events, this.ttlSeconds);
      const event = decideExpiry(state, now);
      if (!event) continue;
      try {
        await this.append(interventionId, state.version, event, state.approval!.organization_id);
        expired++;
      } catch (err) {
        if (err instanceof ConflictError) continue;
        throw err;
      }
    }
    if (expired) this.deps.logger.info({ expired }, 'approvals expired');
    return expired;
  }
}

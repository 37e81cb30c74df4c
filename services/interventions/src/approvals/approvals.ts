import {
  ApprovalDecideRequestSchema,
  ApprovalDecisionSchema,
  IdParamSchema,
  ListApprovalsQuerySchema,
  interventionIdOfApproval,
  interventionStream,
  type ApprovalDecisionKind,
  type ApprovalRecord,
} from '@agp/contracts';
import { EVENT_SCHEMA_VERSION, migrateSchema, requestMetadata, waitForProjections, type EventMetadata, type StoredEvent, type Subscription } from '@agp/eventstore';
import { ConflictError, ForbiddenError, NotFoundError, deterministicId, newId, parseOrThrow, type RawJson, type RequestContext } from '@agp/runtime';
import type { InterventionsDeps } from '../service.js';
import { DEFAULT_APPROVAL_TTL_SECONDS, evolveApproval, foldApproval } from './approval.js';
import { decideApproval, decideExpiry, type ApprovalEventToAppend } from './decide.js';
import { APPROVALS_DDL, APPROVALS_EVENT_TYPES, APPROVALS_PROJECTION, applyApprovalEvents, dueApprovals, getApproval, listApprovalsJson } from './readModel.js';

/** Most approvals the sweeper expires per pass. */
const SWEEP_BATCH = 500;

/**
 * The approval inbox: an escalated intervention opens approval `apr-<intervention id>`; approving or
 * rejecting appends InterventionOutcomeChanged to the intervention's stream; a sweeper expires pending
 * approvals past their `expires_at` to `rejected_after_review` with reason `expired`.
 * Settings (from `deps.env`): AGP_APPROVAL_TTL_SECONDS (default 86400), AGP_APPROVAL_SWEEP_MS (default 1000).
 * Source: issue #3 point 3; ARCHITECTURE.md §4 (Approvals).
 */
export class Approvals {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;
  private readonly now: () => Date;
  /** Seconds an escalated record's approval stays open (AGP_APPROVAL_TTL_SECONDS, default 24 h). */
  readonly ttlSeconds: number;
  private readonly sweepMs: number;

  /**
   * @param readModel the interventions list/stats projection of the same service (a decision waits for it too, so a
   *   GET of the intervention right after shows the new outcome).
   */
  constructor(
    private readonly deps: InterventionsDeps,
    private readonly readModel: () => Subscription | undefined = () => undefined,
  ) {
    this.now = deps.now ?? (() => new Date());
    this.ttlSeconds = deps.env?.AGP_APPROVAL_TTL_SECONDS ?? DEFAULT_APPROVAL_TTL_SECONDS;
    this.sweepMs = deps.env?.AGP_APPROVAL_SWEEP_MS ?? 1000;
  }

  /** Create the `agp_approvals` table, start the approvals projection and the expiry sweeper. */
  async start(): Promise<void> {
    const { store, logger } = this.deps;
    await migrateSchema(store.sql, APPROVALS_DDL);
    this.stopped = false;
    this.subscription = store.subscribe({
      name: APPROVALS_PROJECTION,
      eventTypes: APPROVALS_EVENT_TYPES,
      batchSize: 5000,
      handler: (events, tx) => applyApprovalEvents(events, tx, this.ttlSeconds),
      onError: (err) => logger.error({ err }, 'approvals projection batch failed; retrying'),
    });
    this.schedule();
  }

  /** Stop the sweeper (waiting for a pass in flight) and the projection. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.sweeping;
    await this.subscription?.stop();
  }

  /**
   * GET /api/v1/approvals: `{approvals, total, skip, limit}` (JSON text), newest first.
   * @throws ValidationError (422) for an unknown parameter or a bad value (enum errors list the allowed values).
   */
  async list(ctx: RequestContext, query: unknown): Promise<RawJson> {
    const q = parseOrThrow(ListApprovalsQuerySchema, query ?? {}, 'query');
    return listApprovalsJson(this.deps.store.sql, ctx.organization_id, q);
  }

  /**
   * GET /api/v1/approvals/{id}: one approval record.
   * @throws NotFoundError (404) for an unknown id, a deleted intervention's, or another organisation's.
   */
  async get(ctx: RequestContext, body: unknown): Promise<ApprovalRecord> {
    const { id } = parseOrThrow(IdParamSchema, body, 'path');
    const approval = await getApproval(this.deps.store.sql, ctx.organization_id, id);
    if (!approval) throw new NotFoundError(`approval ${id} not found`);
    return approval;
  }

  /**
   * POST /api/v1/approvals/{id}/approve and /reject. Body (from the gateway): `{id, decision: {approver_email, notes?}}`.
   * Appends InterventionOutcomeChanged (to approved_after_review / rejected_after_review, actor
   * `approver:<email>`) with the stream's expected version and answers with the decided approval once the
   * read models caught up.
   * @throws ValidationError (422) for a bad body; ForbiddenError (403) for a read key; NotFoundError (404);
   *   ConflictError (409) when already decided, decided concurrently, or past its expiry (then it is expired).
   */
  async decide(ctx: RequestContext, body: unknown, kind: ApprovalDecisionKind): Promise<ApprovalRecord> {
    const req = parseOrThrow(ApprovalDecideRequestSchema, body, 'path');
    const decision = parseOrThrow(ApprovalDecisionSchema, req.decision ?? {}, 'body');
    if (ctx.scope !== 'write') throw new ForbiddenError('a read-only key cannot decide approvals');
    const interventionId = interventionIdOfApproval(req.id);
    if (!interventionId) throw new NotFoundError(`approval ${req.id} not found`);
    const events = await this.deps.store.readStream(interventionStream(interventionId));
    const state = foldApproval(events, this.ttlSeconds);
    const result = decideApproval(state, {
      approval_id: req.id,
      decision: kind,
      approver_email: decision.approver_email,
      notes: decision.notes,
      organization_id: ctx.organization_id,
      key_id: ctx.key_id,
      now: this.now().toISOString(),
    });
    const stored = await this.append(interventionId, state.version, result.event, ctx.organization_id, ctx);
    if (result.kind === 'expired') throw new ConflictError(`approval ${req.id} expired at ${state.approval!.expires_at}; it can no longer be decided`);
    // The same evolve as the projection: the answer equals what the read model now holds.
    return stored ? evolveApproval(state.approval, stored, this.ttlSeconds)! : (await getApproval(this.deps.store.sql, ctx.organization_id, req.id))!;
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
    ]);
    const appended = result.appended.at(-1);
    if (appended) await this.caughtUp(appended.global_position);
    return appended;
  }

  /** Wait (bounded by readYourWritesMs, default 3000) until the approvals and interventions read models applied `position`. */
  private caughtUp(position: bigint): Promise<void> {
    return waitForProjections([this.subscription, this.readModel()], position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
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
    const due = await dueApprovals(this.deps.store.sql, now, SWEEP_BATCH);
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

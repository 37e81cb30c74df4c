/**
 * Erasure and retention of the personal data in the audit trail, without breaking its proofs. A version 2 leaf holds
 * only salted commitments of its committed fields (`AUDIT_COMMITTED_FIELDS` of @agp/contracts); erasing a record
 * deletes those fields' values from the stored events (`EventStore.eraseData`) and from the policies service's read
 * models, and deletes their salts. The leaves, the stored subtree hashes and the checkpoints are not touched, so every
 * inclusion and consistency proof still verifies, and an evidence pack lists the fields as redacted. Each erasure is
 * itself a record: an `AuditRecordsErased` event on `audit-erasure-<id>`, a leaf of the log (its reason committed); the
 * interventions service erases its read models (interventions, approvals) when it applies that event. Deleting an
 * intervention erases its records the same way: the audit-trail projection queues the erasure with the deletion's leaf
 * (`agp_tlog_pending_erasures`) and a worker here erases it, at least once, right after.
 * Version 1 leaves (logged before commitments) hold their fields in clear: they are left as they are (the stored
 * events too, or the leaf would no longer match the store). Source: docs/audit.md (Retention, Erasure).
 */
import {
  AuditTrailEvents,
  InterventionEvents,
  auditErasureStream,
  interventionStream,
  type AuditErasure,
  type AuditRecordsErasedData,
  type AuditRetention,
  type CreateAuditErasure,
} from '@agp/contracts';
import { EVENT_SCHEMA_VERSION, requestMetadata, type EventMetadata, type EventStore, type SqlExecutor } from '@agp/eventstore';
import { newId, type Logger, type RequestContext } from '@agp/runtime';

/** What the erasures need. */
export interface AuditErasureDeps {
  db: SqlExecutor;
  store: EventStore;
  now: () => Date;
  logger: Logger;
  /** How often the retention runs, in ms; 0: only when the setting is changed. */
  retentionIntervalMs: number;
  /** How often the worker looks for queued erasures of deleted interventions left behind (e.g. by a crash), in ms; default 30 s. */
  pendingIntervalMs?: number;
}

/** Queued erasures of deleted interventions claimed per round of the worker. */
const PENDING_BATCH = 20;
/** How long a claimed queued erasure is leased to one worker, in ms; after it another replica may take it. */
const PENDING_LEASE_MS = 60_000;

/** A row of `agp_tlog_pending_erasures`: a deleted intervention to erase (queued by the audit-trail projection). */
interface PendingErasure {
  /** The `InterventionDeleted` event's id (its record). */
  record_id: string;
  organization_id: string;
  intervention_id: string;
  /** The id of the erasure's record, chosen when queued. */
  erasure_id: string;
  /** Who deleted it, their name, and the request's correlation id (from the event's metadata). */
  actor: string;
  actor_name: string | null;
  correlation_id: string | null;
}

/** Records erased per round of a retention run (each round: one read of salts, one store update, one delete). */
const RETENTION_BATCH = 1000;

/** The members of an enrichment event's data that repeat an intervention's personal data (its model's rewording). */
const ENRICHMENT_POINTERS = ['/changes/reason', '/changes/agent_intent', '/changes/suggested_rewrite'];

/** How many records, committed fields and stored events one erasure changed, and the interventions it covered. */
interface Erased {
  records: number;
  fields: number;
  events_changed: number;
  intervention_ids: string[];
}

/** Erasure requests and the organisations' retention. */
export class AuditErasures {
  private timer?: NodeJS.Timeout;
  private pendingTimer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private draining?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: AuditErasureDeps) {}

  /**
   * Start the periodic retention run (none when its interval is 0) and the worker of the queued erasures of deleted
   * interventions: it drains the queue now (rows left by a crash), when woken ({@link wake}) and on its interval.
   */
  start(): void {
    this.stopped = false;
    this.pendingTimer = setInterval(() => this.wake(), this.deps.pendingIntervalMs ?? 30_000);
    this.pendingTimer.unref();
    this.wake();
    if (this.deps.retentionIntervalMs <= 0) return;
    this.timer = setInterval(() => this.kick(), this.deps.retentionIntervalMs);
    this.timer.unref();
  }

  /** Stop the timers and wait for a retention run and a drain of the queue in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pendingTimer);
    await Promise.all([this.running, this.draining]);
  }

  /** Run the retention of every organisation now, unless a run is in progress; failures are logged and retried at the next run. */
  private kick(): void {
    this.running ??= this.applyRetention()
      .catch((err) => this.deps.logger.warn({ err }, 'the audit retention run failed; tried again at the next interval'))
      .finally(() => (this.running = undefined));
  }

  /** The organisation's retention (`GET /api/v1/audit/retention`): null keeps everything. */
  async retention(ctx: RequestContext): Promise<AuditRetention> {
    const { rows } = await this.deps.db.query<{ days: number }>(`SELECT days FROM agp_tlog_retention WHERE organization_id = $1`, [ctx.organization_id]);
    return { audit_retention_days: rows[0]?.days ?? null };
  }

  /**
   * Set the organisation's retention (`PUT /api/v1/audit/retention`; the body parsed by `AuditRetentionSchema`) and
   * start a retention run in the background (its records are erased within moments; a later change waits for it).
   */
  async setRetention(ctx: RequestContext, body: AuditRetention): Promise<AuditRetention> {
    if (body.audit_retention_days === null) await this.deps.db.query(`DELETE FROM agp_tlog_retention WHERE organization_id = $1`, [ctx.organization_id]);
    else {
      await this.deps.db.query(
        `INSERT INTO agp_tlog_retention (organization_id, days) VALUES ($1, $2) ON CONFLICT (organization_id) DO UPDATE SET days = excluded.days, updated_at = now()`,
        [ctx.organization_id, body.audit_retention_days],
      );
      this.kick();
    }
    return this.retention(ctx);
  }

  /**
   * Erase, for every organisation with a retention, the committed fields of the records stored before now minus its
   * retention, in rounds of {@link RETENTION_BATCH} records; each round is an `AuditRecordsErased` record (scope
   * `retention`, actor `system`).
   */
  async applyRetention(): Promise<void> {
    const { rows } = await this.deps.db.query<{ organization_id: string; days: number }>(`SELECT organization_id, days FROM agp_tlog_retention`);
    for (const { organization_id: org, days } of rows) {
      const before = new Date(this.deps.now().getTime() - days * 86_400_000).toISOString();
      for (;;) {
        const { rows: due } = await this.deps.db.query<{ record_id: string }>(
          `SELECT record_id FROM agp_tlog_record_salts WHERE organization_id = $1 AND at < $2 LIMIT ${RETENTION_BATCH}`,
          [org, before],
        );
        if (!due.length) break;
        const erased = await this.eraseRecords(org, due.map((r) => r.record_id));
        const metadata: EventMetadata = { organization_id: org, actor: 'system', correlation_id: newId(), schema_version: EVENT_SCHEMA_VERSION };
        await this.record({ scope: 'retention', agent_id: null, run_id: null, before }, erased, metadata);
        this.deps.logger.info({ organization_id: org, before, records: erased.records, fields: erased.fields, events_changed: erased.events_changed }, 'audit retention: committed fields of records older than the retention erased');
      }
    }
  }

  /**
   * `POST /api/v1/audit/erasures` (`audit.erase`): erase the committed fields of one agent's, one run's or one
   * intervention's records (the body parsed by `CreateAuditErasureSchema`): its interventions and every record of their
   * streams (outcome changes, approvals, deletion; their enrichment events' rewording), and for an agent the kill
   * switches engaged or released on it. Only the caller's organisation is searched. Bounded by that agent's, run's or
   * intervention's records; runs in the request.
   * @returns what was erased, with the erasure's id (its own record is a leaf of the log).
   */
  async erase(ctx: RequestContext, body: CreateAuditErasure): Promise<AuditErasure> {
    const org = ctx.organization_id;
    if (body.intervention_id !== undefined) {
      const erased = await this.eraseInterventionRecords(org, body.intervention_id);
      return this.record({ scope: 'intervention', agent_id: null, run_id: null, before: null, reason: body.reason }, erased, requestMetadata(ctx), newId(), body.intervention_id);
    }
    const field = body.agent_id !== undefined ? 'agent_id' : 'run_id';
    const value = body.agent_id ?? body.run_id!;
    // The records that name the agent or run (earlier erasures of it aside), and the intervention streams among them;
    // then every record of those streams.
    const { rows: hits } = await this.deps.db.query<{ record_id: string; stream: string; type: string }>(
      `SELECT record_id, leaf::jsonb->>'stream' AS stream, leaf::jsonb->>'type' AS type FROM agp_tlog_leaves
        WHERE organization_id = $1 AND leaf::jsonb->'data'->>'${field}' = $2 AND leaf::jsonb->>'type' <> $3`,
      [org, value, AuditTrailEvents.RecordsErased],
    );
    const streams = [...new Set(hits.filter((h) => h.type === InterventionEvents.Recorded).map((h) => h.stream))];
    const records = [...new Set([...hits.map((h) => h.record_id), ...(await this.streamRecords(org, streams))])];
    const erased = await this.eraseRecords(org, records, streams);
    if (body.agent_id !== undefined) {
      await this.deps.db.query(
        `UPDATE agp_kill_switches SET doc = jsonb_set(doc, '{reason}', 'null') WHERE organization_id = $1 AND scope = 'agent' AND agent_id = $2 AND doc ? 'reason'`,
        [org, body.agent_id],
      );
      await this.deps.db.query(
        `UPDATE agp_audit_objects SET doc = jsonb_set(doc, '{reason}', 'null') WHERE organization_id = $1 AND object_type = 'kill_switch' AND object_id = $2 AND doc ? 'reason'`,
        [org, `agents/${body.agent_id}`],
      );
    }
    return this.record({ scope: field === 'agent_id' ? 'agent' : 'run', agent_id: body.agent_id ?? null, run_id: body.run_id ?? null, before: null, reason: body.reason }, erased, requestMetadata(ctx));
  }

  /** The record ids (leaves) of the streams `streams` of organisation `org`; one query, none for no streams. */
  private async streamRecords(org: string, streams: string[]): Promise<string[]> {
    if (!streams.length) return [];
    const { rows } = await this.deps.db.query<{ record_id: string }>(`SELECT record_id FROM agp_tlog_leaves WHERE organization_id = $1 AND leaf::jsonb->>'stream' = ANY($2::text[])`, [org, streams]);
    return rows.map((r) => r.record_id);
  }

  /** Erase every logged record of intervention `id`'s stream (and its enrichment events' rewording). */
  private async eraseInterventionRecords(org: string, id: string): Promise<Erased> {
    const streams = [interventionStream(id)];
    return this.eraseRecords(org, await this.streamRecords(org, streams), streams);
  }

  /** Wake the worker of the pending erasures (after the audit-trail projection queued one); a drain in progress picks it up. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) this.again = true;
    else this.drain();
  }

  /** Drain the queue now, unless a drain is in progress; failures are logged and retried at the next wake or interval. */
  private drain(): void {
    this.draining = (async () => {
      do {
        this.again = false;
        while (!this.stopped && (await this.erasePending()) > 0);
      } while (this.again && !this.stopped);
    })()
      .catch((err) => this.deps.logger.warn({ err }, 'erasing the deleted interventions failed; tried again at the next interval'))
      .finally(() => (this.draining = undefined));
  }

  /**
   * One round of the worker: claim up to {@link PENDING_BATCH} queued erasures of deleted interventions
   * (`agp_tlog_pending_erasures`) with a lease of {@link PENDING_LEASE_MS} (`FOR UPDATE SKIP LOCKED`: replicas never
   * take the same row at once; a row whose lease ran out, e.g. after a crash, is taken again), erase each
   * intervention's records, append its `AuditRecordsErased` record (scope `intervention`, the deleting request's actor;
   * its event id is the row's erasure id, so a second run appends nothing), then delete the row. At least once: a
   * second run finds no salts left and erases nothing.
   * @returns how many rows it handled.
   */
  async erasePending(): Promise<number> {
    const { db, now } = this.deps;
    const at = now();
    const { rows } = await db.query<PendingErasure>(
      `UPDATE agp_tlog_pending_erasures p SET lease_until = $2 FROM (
         SELECT record_id FROM agp_tlog_pending_erasures WHERE lease_until IS NULL OR lease_until <= $1
          ORDER BY queued_at LIMIT ${PENDING_BATCH} FOR UPDATE SKIP LOCKED) due
        WHERE p.record_id = due.record_id
        RETURNING p.record_id, p.organization_id, p.intervention_id, p.erasure_id, p.actor, p.actor_name, p.correlation_id`,
      [at.toISOString(), new Date(at.getTime() + PENDING_LEASE_MS).toISOString()],
    );
    for (const row of rows) {
      const erased = await this.eraseInterventionRecords(row.organization_id, row.intervention_id);
      const metadata: EventMetadata = {
        organization_id: row.organization_id,
        actor: row.actor,
        ...(row.actor_name ? { actor_name: row.actor_name } : {}),
        correlation_id: row.correlation_id ?? newId(),
        causation_id: row.record_id,
        schema_version: EVENT_SCHEMA_VERSION,
      };
      await this.record({ scope: 'intervention', agent_id: null, run_id: null, before: null }, erased, metadata, row.erasure_id, row.intervention_id);
      await db.query(`DELETE FROM agp_tlog_pending_erasures WHERE record_id = $1`, [row.record_id]);
      this.deps.logger.info({ organization_id: row.organization_id, intervention_id: row.intervention_id, records: erased.records, fields: erased.fields }, 'deleted intervention: committed fields of its records erased');
    }
    return rows.length;
  }

  /**
   * Append the erasure's record (`AuditRecordsErased`, a leaf; its event id is the erasure's id `id`, so appending the
   * same erasure again stores nothing) and answer it.
   */
  private async record(
    what: Pick<AuditRecordsErasedData, 'scope' | 'agent_id' | 'run_id' | 'before' | 'reason'>,
    erased: Erased,
    metadata: EventMetadata,
    id = newId(),
    interventionId: string | null = null,
  ): Promise<AuditErasure> {
    const at = this.deps.now().toISOString();
    const data: AuditRecordsErasedData = { id, ...what, records: erased.records, fields: erased.fields, intervention_ids: erased.intervention_ids, at };
    if (data.reason === undefined) delete data.reason;
    await this.deps.store.append([{ stream_id: auditErasureStream(id), expected_version: 'no_stream', events: [{ event_id: id, type: AuditTrailEvents.RecordsErased, data: { ...data }, metadata }] }]);
    return { id, scope: what.scope, agent_id: what.agent_id, run_id: what.run_id, intervention_id: interventionId, before: what.before, records: erased.records, fields: erased.fields, events_changed: erased.events_changed, at };
  }

  /**
   * Erase the committed fields of `recordIds` (organisation `org`): remove their values from the stored events (and
   * the rewording of the enrichment events of `interventionStreams`, or of the intervention records among `recordIds`),
   * then delete their salts, then remove their kill-switch reasons from the audit log's entries. A record without
   * salts (version 1, or erased before) is left alone. The store is changed before the salts go, so a failure in
   * between leaves salts that a retry erases again.
   */
  private async eraseRecords(org: string, recordIds: string[], interventionStreams?: string[]): Promise<Erased> {
    if (!recordIds.length) return { records: 0, fields: 0, events_changed: 0, intervention_ids: interventionStreams?.map(interventionIdOf) ?? [] };
    const { db, store } = this.deps;
    const { rows: salted } = await db.query<{ record_id: string; pointer: string }>(
      `SELECT s.record_id, p.pointer FROM agp_tlog_record_salts s, jsonb_object_keys(s.salts) AS p(pointer) WHERE s.organization_id = $1 AND s.record_id = ANY($2::text[])`,
      [org, recordIds],
    );
    const byRecord = new Map<string, string[]>();
    for (const s of salted) byRecord.set(s.record_id, [...(byRecord.get(s.record_id) ?? []), s.pointer.replace(/^\/data(?=\/)/, '')]);
    const edits = [...byRecord].map(([event_id, pointers]) => ({ event_id, pointers }));
    const streams =
      interventionStreams ??
      (
        await db.query<{ stream: string }>(
          `SELECT DISTINCT leaf::jsonb->>'stream' AS stream FROM agp_tlog_leaves WHERE organization_id = $1 AND record_id = ANY($2::text[]) AND leaf::jsonb->>'type' = $3`,
          [org, [...byRecord.keys()], InterventionEvents.Recorded],
        )
      ).rows.map((r) => r.stream);
    for (const stream of streams) {
      for (const e of await store.readStream(stream)) if (e.type === InterventionEvents.Enriched && e.metadata.organization_id === org) edits.push({ event_id: e.event_id, pointers: ENRICHMENT_POINTERS });
    }
    const changed = await store.eraseData(edits);
    const ids = [...byRecord.keys()];
    if (ids.length) {
      await db.query(`DELETE FROM agp_tlog_record_salts WHERE organization_id = $1 AND record_id = ANY($2::text[])`, [org, ids]);
      await db.query(`UPDATE agp_audit_log SET entry = entry #- '{after,reason}' #- '{before,reason}' WHERE organization_id = $1 AND id = ANY($2::text[])`, [org, ids]);
    }
    return { records: byRecord.size, fields: salted.length, events_changed: changed, intervention_ids: streams.map(interventionIdOf) };
  }
}

/** The intervention id of its stream `intervention-<id>`. */
const interventionIdOf = (stream: string) => stream.slice(interventionStream('').length);

import { HIGH_RISK_LEVELS, InterventionEvents, type InterventionRecord, type Purpose, type ProjectionName } from '@agp/contracts';
import { ERASURE_EVENT_TYPE, eraseInterventions, splitErasures } from './erasures.js';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { evolve, isBlocking, type InterventionState } from '../intervention/intervention.js';

/** Name (and checkpoint key) of the projection. */
export const READ_MODEL_PROJECTION = 'interventions-read-model' satisfies ProjectionName;

/** Event types it applies. */
export const READ_MODEL_EVENT_TYPES = [...Object.values(InterventionEvents), ERASURE_EVENT_TYPE];

/** One record's contribution to the stats tables; subtracting the old and adding the new keeps them exact. */
interface Contribution {
  org: string;
  purpose: Purpose;
  day: string;
  type: string;
  outcome: string;
  action: string;
  policyId: string | null;
  policyName: string;
  cost: number;
  highRiskBlock: boolean;
  blocking: boolean;
}

/** What a record adds to the stats. Pure. */
export function contribution(r: InterventionRecord): Contribution {
  const blocking = isBlocking(r.outcome);
  return {
    org: r.organization_id,
    purpose: r.purpose,
    day: r.timestamp.slice(0, 10),
    type: r.type,
    outcome: r.outcome,
    action: r.action_name,
    policyId: r.policy_id,
    policyName: r.policy_name ?? r.policy_id ?? '',
    cost: r.cost_prevented_usd,
    highRiskBlock: blocking && r.risk_level !== null && (HIGH_RISK_LEVELS as readonly string[]).includes(r.risk_level),
    blocking,
  };
}

/**
 * Stats deltas accumulated over a batch, keyed by table row (organisation and purpose first), so a batch of N events
 * becomes a handful of upserts. Pure; `sign` is +1 for a contribution added and -1 for one removed.
 */
export class StatsDelta {
  daily = new Map<string, { org: string; purpose: Purpose; day: string; type: string; outcome: string; n: number; cost: number; hr: number }>();
  actions = new Map<string, { org: string; purpose: Purpose; day: string; action: string; n: number; cost: number }>();
  policies = new Map<string, { org: string; purpose: Purpose; day: string; policyId: string; name: string; n: number }>();
  /** Per organisation and purpose: live records, and how many of them are enriched / failed. */
  totals = new Map<string, { org: string; purpose: Purpose; total: number; enriched: number; failed: number }>();

  add(c: Contribution, sign: 1 | -1): void {
    const dk = `${c.org}\u0000${c.purpose}\u0000${c.day}\u0000${c.type}\u0000${c.outcome}`;
    const d = this.daily.get(dk) ?? { org: c.org, purpose: c.purpose, day: c.day, type: c.type, outcome: c.outcome, n: 0, cost: 0, hr: 0 };
    d.n += sign;
    d.cost += sign * c.cost;
    d.hr += c.highRiskBlock ? sign : 0;
    this.daily.set(dk, d);
    if (c.blocking) {
      const ak = `${c.org}\u0000${c.purpose}\u0000${c.day}\u0000${c.action}`;
      const a = this.actions.get(ak) ?? { org: c.org, purpose: c.purpose, day: c.day, action: c.action, n: 0, cost: 0 };
      a.n += sign;
      a.cost += sign * c.cost;
      this.actions.set(ak, a);
    }
    if (c.policyId) {
      const pk = `${c.org}\u0000${c.purpose}\u0000${c.day}\u0000${c.policyId}`;
      const p = this.policies.get(pk) ?? { org: c.org, purpose: c.purpose, day: c.day, policyId: c.policyId, name: c.policyName, n: 0 };
      p.n += sign;
      if (sign > 0) p.name = c.policyName;
      this.policies.set(pk, p);
    }
  }

  /** Add (+1) or remove (−1) one live record of `org` and `purpose` with its enrichment outcome (absent: none yet). */
  addTotal(org: string, purpose: Purpose, sign: 1 | -1, enrichment?: 'enriched' | 'failed'): void {
    const k = `${org}\u0000${purpose}`;
    const t = this.totals.get(k) ?? { org, purpose, total: 0, enriched: 0, failed: 0 };
    t.total += sign;
    if (enrichment) t[enrichment] += sign;
    this.totals.set(k, t);
  }

  /**
   * Write every accumulated delta: ONE statement (a data-modifying CTE per stats table, the totals upsert last), one
   * prepared text whatever the batch holds (an empty array upserts nothing). Rows whose delta is 0 are not sent.
   */
  async flush(tx: SqlExecutor): Promise<void> {
    const daily = [...this.daily.values()].filter((d) => d.n !== 0 || d.cost !== 0 || d.hr !== 0);
    const actions = [...this.actions.values()].filter((a) => a.n !== 0 || a.cost !== 0);
    const policies = [...this.policies.values()].filter((p) => p.n !== 0);
    const totals = [...this.totals.values()].filter((t) => t.total !== 0 || t.enriched !== 0 || t.failed !== 0);
    if (!daily.length && !actions.length && !policies.length && !totals.length) return;
    await tx.query(
      `WITH daily AS (
         INSERT INTO agp_intervention_stats_daily AS s (organization_id, purpose, day, type, outcome, interventions, cost_prevented_usd, high_risk_blocks)
         SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::text[], $5::text[], $6::bigint[], $7::float8[], $8::bigint[])
         ON CONFLICT (organization_id, purpose, day, type, outcome) DO UPDATE SET
           interventions = s.interventions + EXCLUDED.interventions,
           cost_prevented_usd = s.cost_prevented_usd + EXCLUDED.cost_prevented_usd,
           high_risk_blocks = s.high_risk_blocks + EXCLUDED.high_risk_blocks
       ), actions AS (
         INSERT INTO agp_intervention_stats_actions AS s (organization_id, purpose, day, action_name, blocked, cost_prevented_usd)
         SELECT * FROM unnest($9::text[], $10::text[], $11::date[], $12::text[], $13::bigint[], $14::float8[])
         ON CONFLICT (organization_id, purpose, day, action_name) DO UPDATE SET
           blocked = s.blocked + EXCLUDED.blocked, cost_prevented_usd = s.cost_prevented_usd + EXCLUDED.cost_prevented_usd
       ), policies AS (
         INSERT INTO agp_intervention_stats_policies AS s (organization_id, purpose, day, policy_id, policy_name, triggered)
         SELECT * FROM unnest($15::text[], $16::text[], $17::date[], $18::text[], $19::text[], $20::bigint[])
         ON CONFLICT (organization_id, purpose, day, policy_id) DO UPDATE SET
           triggered = s.triggered + EXCLUDED.triggered,
           policy_name = CASE WHEN EXCLUDED.triggered > 0 THEN EXCLUDED.policy_name ELSE s.policy_name END
       )
       INSERT INTO agp_intervention_totals AS t (organization_id, purpose, total, enriched, failed)
       SELECT * FROM unnest($21::text[], $22::text[], $23::bigint[], $24::bigint[], $25::bigint[])
       ON CONFLICT (organization_id, purpose) DO UPDATE SET total = t.total + EXCLUDED.total, enriched = t.enriched + EXCLUDED.enriched, failed = t.failed + EXCLUDED.failed`,
      [
        daily.map((d) => d.org), daily.map((d) => d.purpose), daily.map((d) => d.day), daily.map((d) => d.type), daily.map((d) => d.outcome), daily.map((d) => d.n), daily.map((d) => d.cost), daily.map((d) => d.hr),
        actions.map((a) => a.org), actions.map((a) => a.purpose), actions.map((a) => a.day), actions.map((a) => a.action), actions.map((a) => a.n), actions.map((a) => a.cost),
        policies.map((p) => p.org), policies.map((p) => p.purpose), policies.map((p) => p.day), policies.map((p) => p.policyId), policies.map((p) => p.name), policies.map((p) => p.n),
        totals.map((t) => t.org), totals.map((t) => t.purpose), totals.map((t) => t.total), totals.map((t) => t.enriched), totals.map((t) => t.failed),
      ],
      { prepare: true },
    );
  }
}

/**
 * A list row as one object of the JSON array `json_to_recordset` reads: the record itself nested as `doc` (a json
 * column keeps the text as sent), so a batch of rows is one `JSON.stringify`, with no per-row document string and no
 * array-literal escaping of it.
 */
const rowOf = (s: InterventionState) => {
  const r = s.record;
  return {
    id: r.id,
    organization_id: r.organization_id,
    type: r.type,
    outcome: r.outcome,
    action_name: r.action_name,
    agent_id: r.agent_id,
    run_id: r.run_id,
    policy_id: r.policy_id,
    risk_level: r.risk_level,
    ts: r.timestamp,
    doc: r,
    enrichment: s.enrichment_status ?? null,
    purpose: r.purpose,
  };
};

/**
 * Apply a batch of intervention events to the list read model and the stats projection, inside the transaction that
 * also moves its checkpoint (the catch-up subscription's, or the append's when applied inline). Set-based: the rows
 * later events of the batch change (enriched, outcome changed, deleted) are read with one statement, every change is
 * folded in memory (subtracting a record's old stats contribution and adding the new one, likewise its enrichment
 * outcome in the organisation's totals), then new rows are inserted, changed rows updated and deleted rows removed
 * with one statement each. Source: architecture §3 (Projections).
 */
export async function applyInterventionEvents(batch: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const { erasures, others: events } = splitErasures(batch);
  const delta = new StatsDelta();
  /** Records created in this batch, by id, still to be inserted (later events in the batch fold into them). */
  const pending = new Map<string, InterventionState>();
  const updates = new Map<string, InterventionState>();
  const deletes = new Set<string>();
  const idOf = (e: StoredEvent) => String((e.data as { id?: unknown }).id ?? '');

  // The stored rows of the records this batch changes but did not create, in one read.
  const stored = new Map<string, InterventionState>();
  let lookup: Set<string> | undefined;
  for (const e of events) if (e.type !== InterventionEvents.Recorded) (lookup ??= new Set()).add(idOf(e));
  if (lookup) {
    for (const e of events) if (e.type === InterventionEvents.Recorded) lookup.delete(idOf(e));
  }
  if (lookup?.size) {
    const { rows } = await tx.query<{ doc: InterventionRecord | string; enrichment: 'enriched' | 'failed' | null }>(
      'SELECT doc, enrichment FROM agp_interventions WHERE id = ANY($1::text[]) FOR UPDATE',
      [[...lookup]],
    );
    for (const row of rows) {
      const doc = typeof row.doc === 'string' ? (JSON.parse(row.doc) as InterventionRecord) : row.doc;
      stored.set(doc.id, { record: doc, deleted: false, version: 0, ...(row.enrichment ? { enrichment_status: row.enrichment } : {}) });
    }
  }

  for (const e of events) {
    const id = idOf(e);
    if (e.type === InterventionEvents.Recorded) {
      const s = evolve(null, e)!;
      pending.set(id, s);
      delta.add(contribution(s.record), 1);
      delta.addTotal(s.record.organization_id, s.record.purpose, 1, s.enrichment_status);
      continue;
    }
    const prev = pending.get(id) ?? updates.get(id) ?? (deletes.has(id) ? null : (stored.get(id) ?? null));
    if (!prev) continue; // already deleted, or never projected: nothing to change
    const next = evolve(prev, e)!;
    delta.add(contribution(prev.record), -1);
    delta.addTotal(prev.record.organization_id, prev.record.purpose, -1, prev.enrichment_status);
    if (next.deleted) {
      if (pending.delete(id)) continue;
      updates.delete(id);
      deletes.add(id);
      continue;
    }
    delta.add(contribution(next.record), 1);
    delta.addTotal(next.record.organization_id, next.record.purpose, 1, next.enrichment_status);
    if (pending.has(id)) pending.set(id, next);
    else updates.set(id, next);
  }

  if (pending.size) {
    await tx.query(
      `INSERT INTO agp_interventions (id, organization_id, type, outcome, action_name, agent_id, run_id, policy_id, risk_level, ts, doc, enrichment, purpose)
       SELECT * FROM json_to_recordset($1::json) AS x(id text, organization_id text, type text, outcome text, action_name text, agent_id text, run_id text, policy_id text, risk_level text, ts timestamptz, doc json, enrichment text, purpose text)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify([...pending.values()].map(rowOf))],
      { prepare: true },
    );
  }
  if (updates.size) {
    await tx.query(
      `UPDATE agp_interventions AS t SET outcome = x.outcome, risk_level = x.risk_level, doc = x.doc, enrichment = x.enrichment
         FROM json_to_recordset($1::json) AS x(id text, outcome text, risk_level text, doc json, enrichment text) WHERE t.id = x.id`,
      [JSON.stringify([...updates.values()].map((s) => ({ id: s.record.id, outcome: s.record.outcome, risk_level: s.record.risk_level, doc: s.record, enrichment: s.enrichment_status ?? null })))],
    );
  }
  if (deletes.size) await tx.query('DELETE FROM agp_interventions WHERE id = ANY($1::text[])', [[...deletes]]);
  await delta.flush(tx);
  await eraseInterventions(erasures, tx);
}

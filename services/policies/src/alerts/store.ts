/**
 * The alert tables of the policies service and the statements on them: governed decisions counted per agent and
 * second (what `block_rate.spike` and `auto_kill_switch` read), and which subscriptions are told of an agent's spike
 * now (so a spike is sent once, not on every decision while it lasts). Operational state in PostgreSQL / PGlite like
 * the webhook deliveries; the ledger's part is written by a projection with its checkpoint, so each ledger entry
 * counts once. Source: docs/notifications.md (Alerts).
 */
import { type SqlExecutor } from '@agp/eventstore';
import type { DecisionTally } from './rules.js';

/**
 * - `agp_decision_counts`: per (organisation, agent, second since the epoch) the governed decisions counted and those
 *   that stopped the action; rows older than {@link DECISION_COUNTS_KEEP_SECONDS} are pruned.
 * - `agp_block_rate_spikes`: one row per (subscription, agent) whose `block_rate.spike` was sent and whose rate has
 *   not fallen back since; `since` the second it was sent (part of its delivery id).
 */
export const ALERTS_DDL = `
CREATE TABLE IF NOT EXISTS agp_decision_counts (
  organization_id text NOT NULL,
  agent_id text NOT NULL,
  second bigint NOT NULL,
  decisions integer NOT NULL,
  stopped integer NOT NULL,
  PRIMARY KEY (organization_id, agent_id, second)
);
CREATE TABLE IF NOT EXISTS agp_block_rate_spikes (
  webhook_id text NOT NULL,
  agent_id text NOT NULL,
  organization_id text NOT NULL,
  since bigint NOT NULL,
  PRIMARY KEY (webhook_id, agent_id)
);
`;

/** How long decision counts are kept: the longest window a rule may name (one day) and an hour. */
export const DECISION_COUNTS_KEEP_SECONDS = 86_400 + 3_600;

/** Decisions of one agent in one second: how many, and how many stopped the action. */
export interface DecisionCount {
  organization_id: string;
  agent_id: string;
  /** Seconds since the Unix epoch. */
  second: number;
  decisions: number;
  stopped: number;
}

/** Add counts (summed per organisation, agent and second first) in one statement. */
export async function addDecisionCounts(tx: SqlExecutor, counts: readonly DecisionCount[]): Promise<void> {
  if (counts.length === 0) return;
  const sum = new Map<string, DecisionCount>();
  for (const c of counts) {
    const k = `${c.organization_id}\0${c.agent_id}\0${c.second}`;
    const s = sum.get(k);
    if (s) {
      s.decisions += c.decisions;
      s.stopped += c.stopped;
    } else sum.set(k, { ...c });
  }
  await tx.query(
    `INSERT INTO agp_decision_counts (organization_id, agent_id, second, decisions, stopped)
     SELECT x.o, x.a, x.s, x.d, x.b FROM jsonb_to_recordset($1::jsonb) AS x(o text, a text, s bigint, d int, b int)
     ORDER BY x.o, x.a, x.s
     ON CONFLICT (organization_id, agent_id, second) DO UPDATE
       SET decisions = agp_decision_counts.decisions + excluded.decisions, stopped = agp_decision_counts.stopped + excluded.stopped`,
    [JSON.stringify([...sum.values()].map((c) => ({ o: c.organization_id, a: c.agent_id, s: c.second, d: c.decisions, b: c.stopped })))],
  );
}

/**
 * The tally of each of `agents` over each window: decisions counted in the seconds after `fromSecond(window)` up to
 * `nowSecond` inclusive. @returns `tally(agent, window)`.
 */
export async function tallies(db: SqlExecutor, org: string, agents: readonly string[], windows: ReadonlyArray<{ key: string; from: number }>, nowSecond: number): Promise<(agent: string, key: string) => DecisionTally> {
  const out = new Map<string, DecisionTally>();
  if (agents.length && windows.length) {
    const earliest = Math.min(...windows.map((w) => w.from));
    const { rows } = await db.query<{ agent_id: string; second: string | number; decisions: number; stopped: number }>(
      'SELECT agent_id, second, decisions, stopped FROM agp_decision_counts WHERE organization_id = $1 AND agent_id = ANY($2::text[]) AND second > $3 AND second <= $4',
      [org, [...agents], earliest, nowSecond],
    );
    for (const r of rows) {
      for (const w of windows) {
        if (Number(r.second) <= w.from) continue;
        const k = `${r.agent_id}\0${w.key}`;
        const t = out.get(k) ?? out.set(k, { decisions: 0, stopped: 0 }).get(k)!;
        t.decisions += Number(r.decisions);
        t.stopped += Number(r.stopped);
      }
    }
  }
  return (agent, key) => out.get(`${agent}\0${key}`) ?? { decisions: 0, stopped: 0 };
}

/** Drop counts older than {@link DECISION_COUNTS_KEEP_SECONDS} before `nowSecond`. */
export async function pruneDecisionCounts(db: SqlExecutor, nowSecond: number): Promise<void> {
  await db.query('DELETE FROM agp_decision_counts WHERE second < $1', [nowSecond - DECISION_COUNTS_KEEP_SECONDS]);
}

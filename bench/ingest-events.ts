/**
 * The events `pnpm bench ingest` sends (docs/performance.md, `pnpm bench ingest`), shared by bench/run.ts and
 * bench/consumer-write.ts so both measure the same records.
 */
import { randomBytes } from 'node:crypto';

const TYPES = ['hard_block', 'approval_required', 'rate_limited', 'budget_exceeded', 'downgrade', 'warning', 'pii_blocked', 'content_blocked', 'loop_detected', 'idempotent_replay'];
const OUTCOMES = ['blocked', 'escalated', 'modified', 'warned', 'approved_after_review', 'rejected_after_review'];

/**
 * Batch `b` of run `run`: 100 `intervention.create` events of ~800 B each on the wire (a 450-character pad in
 * `original_inputs`), types, outcomes, actions, agents, policies and risk levels cycling (every sixth is escalated,
 * so it opens an approval), all timestamped now, client ids `<run>-<b>-<i>`.
 */
export function ingestEvents(run: string, b: number) {
  const pad = randomBytes(225).toString('hex');
  const now = new Date().toISOString();
  return Array.from({ length: 100 }, (_, i) => ({
    id: `${run}-${b}-${i}`,
    type: 'intervention.create' as const,
    timestamp: now,
    body: {
      type: TYPES[(b + i) % 10],
      outcome: OUTCOMES[(b * 7 + i) % 6],
      action_name: `action_${i % 17}`,
      agent_id: `agent-${i % 23}`,
      run_id: run,
      policy_id: `policy-${i % 5}`,
      risk_level: ['low', 'medium', 'high', 'critical'][i % 4],
      estimated_cost_usd: (i % 50) + 0.25,
      reason: 'benchmark event',
      original_inputs: { pad },
    },
  }));
}

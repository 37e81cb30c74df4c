/**
 * Views the tool gateway composes from several services' answers: the dashboard numbers and the compliance overview.
 * Each asks the owning services through the wire registry, in parallel, as the caller.
 * Source: spec §Tool gateway (platform://stats/dashboard), §Resources shown.
 */
import { BLOCKING_OUTCOMES, HIGH_RISK_LEVELS } from '@agp/contracts';
import type { EntryContext } from './registry.js';

const DAY_MS = 86_400_000;

/**
 * The dashboard (`platform://stats/dashboard`, `get_dashboard_stats`): exactly `total_runs`, `total_actions`,
 * `total_cost_usd` (USD; per action the actual cost where reported, else the estimate), `success_rate` (completed ÷ ended runs, 0..1), `pending_approvals` and
 * `interventions_24h` (recorded in the 24 hours before now). Runs, actions and interventions of `purpose` (a purpose,
 * or `all`; absent = the services' default, production: eval data is left out); pending approvals are all of them.
 * @throws the owning services' problems (503 when one is down).
 */
export async function dashboardStats(e: EntryContext, purpose?: string) {
  const dayAgo = new Date(e.now().getTime() - DAY_MS).toISOString();
  const only = purpose === undefined ? {} : { purpose };
  const [summary, pending, recent] = await Promise.all([
    e.ask('stats.summary', { query: only }),
    e.ask('approvals.list', { query: { status: 'pending', limit: 1 } }),
    e.ask('interventions.list', { query: { start_date: dayAgo, limit: 1, ...only } }),
  ]);
  return {
    total_runs: summary.total_runs,
    total_actions: summary.total_actions,
    total_cost_usd: summary.total_cost_usd,
    success_rate: summary.success_rate,
    pending_approvals: pending.total,
    interventions_24h: recent.total,
  };
}

/** High-risk blocks (a blocking outcome at a high or critical risk level, as the stats count them) since `since`. */
async function highRiskBlocksSince(e: EntryContext, since: Date): Promise<number> {
  const page = await e.ask('interventions.list', { query: { outcome: [...BLOCKING_OUTCOMES], risk_level: [...HIGH_RISK_LEVELS], start_date: since.toISOString(), limit: 1 } });
  return page.total;
}

/**
 * The approval backlog: how many are pending, the oldest of them (with its age in ms), and how many expired undecided.
 */
export async function approvalBacklog(e: EntryContext) {
  const [pending, expired] = await Promise.all([
    e.ask('approvals.list', { query: { status: 'pending', limit: 1 } }),
    e.ask('approvals.list', { query: { status: 'expired', limit: 1 } }),
  ]);
  // The list is newest first: the oldest pending approval is the last one.
  const oldest = pending.total > 0 ? (await e.ask('approvals.list', { query: { status: 'pending', skip: pending.total - 1, limit: 1 } })).approvals[0] : undefined;
  return {
    pending: pending.total,
    oldest_pending: oldest
      ? {
          id: oldest.id,
          agent_id: oldest.agent_id,
          action_name: oldest.action_name,
          risk_level: oldest.risk_level,
          requested_at: oldest.requested_at,
          expires_at: oldest.expires_at,
          age_ms: Math.max(0, e.now().getTime() - Date.parse(oldest.requested_at)),
        }
      : null,
    expired: expired.total,
  };
}

/**
 * The compliance overview (`platform://compliance/summary`): active and disabled policies (the active ones listed
 * with their budgets, USD: session, run and period budgets),
 * the kill-switch state, the approval backlog with its oldest item, expired approvals, high-risk blocks in the last
 * 24 h and 7 days, enrichment coverage, and `findings`: what needs attention, one line each (`status` is
 * `attention` when there is any, else `ok`).
 * @throws the owning services' problems (503 when one is down).
 */
export async function complianceSummary(e: EntryContext) {
  const now = e.now();
  const [active, disabled, switches, approvals, blocks24h, blocks7d, enrichment] = await Promise.all([
    e.ask('policies.list', { query: { enabled: 'true', limit: 100 } }),
    e.ask('policies.list', { query: { enabled: 'false', limit: 1 } }),
    e.ask('kill-switches.list', { query: {} }),
    approvalBacklog(e),
    highRiskBlocksSince(e, new Date(now.getTime() - DAY_MS)),
    highRiskBlocksSince(e, new Date(now.getTime() - 7 * DAY_MS)),
    e.ask('interventions.enrichment-coverage', {}),
  ]);
  const findings: string[] = [];
  if (active.total === 0) findings.push('No policy is enabled: nothing is enforced.');
  if (switches.organization.engaged) findings.push(`The organisation kill switch is engaged${switches.organization.reason ? ` (${switches.organization.reason})` : ''}: every agent is stopped.`);
  if (switches.agents.length) findings.push(`${switches.agents.length} agent kill switch${switches.agents.length === 1 ? ' is' : 'es are'} engaged.`);
  if (approvals.pending) findings.push(`${approvals.pending} approval${approvals.pending === 1 ? ' waits' : 's wait'} for a decision; the oldest since ${approvals.oldest_pending?.requested_at}.`);
  if (approvals.expired) findings.push(`${approvals.expired} approval${approvals.expired === 1 ? '' : 's'} expired undecided.`);
  if (blocks24h) findings.push(`${blocks24h} high-risk action${blocks24h === 1 ? ' was' : 's were'} blocked in the last 24 hours.`);
  if (enrichment.failed) findings.push(`${enrichment.failed} intervention${enrichment.failed === 1 ? '' : 's'} failed enrichment.`);
  return {
    generated_at: now.toISOString(),
    status: findings.length ? 'attention' : 'ok',
    findings,
    policies: {
      active: active.total,
      disabled: disabled.total,
      active_policies: active.policies.map((p) => ({
        id: p.id,
        name: p.name,
        version: p.version,
        session_budget: p.session_budget,
        run_budget: p.run_budget,
        period_budgets: p.period_budgets,
        denied_actions: p.denied_actions,
        approval_required_actions: p.approval_required_actions,
        rate_limited_actions: Object.keys(p.rate_limits),
        agent_ids: p.agent_ids,
      })),
    },
    kill_switches: {
      organization: { engaged: switches.organization.engaged, reason: switches.organization.reason, changed_at: switches.organization.changed_at },
      engaged_agents: switches.agents.map((a) => ({ agent_id: a.agent_id, reason: a.reason, changed_at: a.changed_at })),
    },
    approvals,
    high_risk_blocks: { last_24h: blocks24h, last_7d: blocks7d },
    enrichment: { ...enrichment, coverage: enrichment.total ? enrichment.enriched / enrichment.total : null },
  };
}

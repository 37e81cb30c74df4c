/**
 * The platform's prompts: the spec's four, each rendered from live data as `{summary, details}` (REST) and as the
 * user message an MCP `prompts/get` returns. MCP sends prompt arguments as strings, so numbers coerce.
 * Source: spec §Prompts shown, §Tool gateway (analyze_agent_costs details).
 */
import { z } from 'zod';
import { MAX_USD, STATS_MAX_DAYS } from '@agp/contracts';
import { definePrompt, type PromptDefinition } from './registry.js';
import { approvalBacklog } from './views.js';

const usd = (n: number) => `$${n.toFixed(2)}`;
const Id = z.string().min(1).max(256);
const DateArg = z.string().min(1).max(64);
/** A prompt argument that may come as a string (MCP) or a number (REST); empty means absent. */
const optionalNumber = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/** The data a model needs, as a JSON block inside the prompt text. */
const dataBlock = (data: unknown) => '```json\n' + JSON.stringify(data, null, 2) + '\n```';

/** The platform's prompts, in the order the lists show them. */
export const PLATFORM_PROMPTS: readonly PromptDefinition[] = [
  definePrompt({
    name: 'create_budget_policy',
    description: 'Draft a budget policy capping spend per run, for one agent or the whole organisation, from its real run costs, ready for create_policy.',
    input: z.strictObject({
      agent_id: Id.optional(),
      budget_usd: z.coerce.number({ message: 'expected a number of USD' }).positive('must be more than 0').max(MAX_USD),
    }),
    argumentDocs: { agent_id: 'The agent to cap; absent = every agent of the organisation', budget_usd: 'The budget per run, USD' },
    calls: ['stats.agent', 'stats.summary', 'runs.list', 'policies.list'],
    render: async (e, { agent_id, budget_usd }) => {
      const [spend, over, existing] = await Promise.all([
        agent_id
          ? e.ask('stats.agent', { path: { agent_id } }).then((s) => ({ total_runs: s.total_runs, total_cost_usd: s.total_cost_usd, avg_cost_per_run_usd: s.avg_cost_per_run_usd }))
          : e.ask('stats.summary', { query: {} }).then((s) => ({ total_runs: s.total_runs, total_cost_usd: s.total_cost_usd, avg_cost_per_run_usd: s.total_runs ? s.total_cost_usd / s.total_runs : 0 })),
        e.ask('runs.list', { query: { min_cost: budget_usd, limit: 5, ...(agent_id ? { agent_id } : {}) } }),
        e.ask('policies.list', { query: { enabled: 'true', limit: 1000, ...(agent_id ? { agent_id } : {}) } }),
      ]);
      const budgetPolicies = existing.policies
        .filter((p) => p.run_budget !== null || p.session_budget !== null || p.period_budgets.length > 0)
        .map((p) => ({ id: p.id, name: p.name, run_budget: p.run_budget, session_budget: p.session_budget, period_budgets: p.period_budgets, agent_ids: p.agent_ids }));
      const who = agent_id ? `agent ${agent_id}` : 'the organisation';
      const suggested = {
        name: agent_id ? `Run budget for ${agent_id}` : 'Organisation run budget',
        description: `Caps each run of ${who} at ${usd(budget_usd)}.`,
        enabled: true,
        run_budget: budget_usd,
      };
      const details = {
        agent_id: agent_id ?? null,
        budget_usd,
        current_spend: spend,
        runs_over_budget: over.total,
        examples_over_budget: over.runs.map((r) => ({ id: r.id, agent_id: r.agent_id, cost_usd: r.cost_usd, started_at: r.started_at })),
        existing_budget_policies: budgetPolicies,
        suggested_policy: suggested,
        note: agent_id ? 'create_policy has no agent scope argument: after creating it, scope it with update_policy {policy_id, agent_ids: [agent_id]}.' : null,
      };
      const summary = `${who[0].toUpperCase()}${who.slice(1)} has ${spend.total_runs} runs costing ${usd(spend.total_cost_usd)} (${usd(spend.avg_cost_per_run_usd)} per run on average); ${over.total} run${over.total === 1 ? '' : 's'} cost ${usd(budget_usd)} or more. ${budgetPolicies.length} enabled budget polic${budgetPolicies.length === 1 ? 'y applies' : 'ies apply'} already.`;
      const text = [
        `Create a budget policy that caps each run of ${who} at ${usd(budget_usd)} (USD).`,
        summary,
        'Check the existing budget policies below for overlap first. If the cap is sound, call the create_policy tool with the suggested arguments' +
          (agent_id ? ', then update_policy with agent_ids set to that agent so it does not apply to every agent.' : '.'),
        'Explain in two sentences what the cap would have stopped, using the runs over budget.',
        dataBlock(details),
      ].join('\n\n');
      return { summary, details, text };
    },
  }),
  definePrompt({
    name: 'analyze_agent_costs',
    description: 'Analyse one agent’s spend: total and per-run cost (USD; per action the actual cost where reported, else the estimate), actions, and the actions that cost the most, over all time or the last N days.',
    input: z.strictObject({
      agent_id: Id,
      days: optionalNumber(z.coerce.number({ message: 'expected an integer' }).int('expected an integer').min(1).max(STATS_MAX_DAYS)),
    }),
    argumentDocs: { agent_id: 'The agent to analyse', days: `Look back this many days, 1 to ${STATS_MAX_DAYS}; absent = all time` },
    calls: ['stats.agent'],
    render: async (e, { agent_id, days }) => {
      const s = await e.ask('stats.agent', { path: { agent_id }, query: days === undefined ? {} : { days } });
      const top_actions = [...s.top_actions].sort((a, b) => b.cost - a.cost || b.count - a.count).map((a) => ({ action: a.action, cost: a.cost, count: a.count }));
      const details = {
        agent_id,
        days: days ?? null,
        total_cost_usd: s.total_cost_usd,
        total_actions: s.total_actions,
        total_runs: s.total_runs,
        avg_cost_per_run: s.total_runs ? s.total_cost_usd / s.total_runs : 0,
        top_actions,
      };
      const window = days ? `in the last ${days} day${days === 1 ? '' : 's'}` : 'over all time';
      const top = top_actions[0];
      const summary = `Agent ${agent_id} spent ${usd(details.total_cost_usd)} on ${details.total_actions} actions in ${details.total_runs} runs ${window} (${usd(details.avg_cost_per_run)} per run)${top ? `; ${top.action} cost the most (${usd(top.cost)} over ${top.count} calls)` : ''}.`;
      const text = [
        `Analyse the costs of agent ${agent_id} ${window}. All amounts are USD.`,
        summary,
        'Say which actions drive the cost, whether the cost per run looks stable, and propose at most three concrete changes (a budget, a rate limit on an expensive action, or a cheaper alternative), each with its expected saving.',
        dataBlock(details),
      ].join('\n\n');
      return { summary, details, text };
    },
  }),
  definePrompt({
    name: 'review_pending_approvals',
    description: 'Review the approval inbox: every pending approval with its risk, reason and cost, oldest first, with a recommendation to approve or reject each.',
    input: z.strictObject({}),
    argumentDocs: {},
    calls: ['approvals.list'],
    render: async (e) => {
      const [page, backlog] = await Promise.all([e.ask('approvals.list', { query: { status: 'pending', limit: 200 } }), approvalBacklog(e)]);
      const approvals = [...page.approvals].reverse().map((a) => ({
        id: a.id,
        agent_id: a.agent_id,
        action_name: a.action_name,
        risk_level: a.risk_level,
        reason: a.reason,
        agent_intent: a.agent_intent,
        estimated_cost_usd: a.estimated_cost_usd,
        requested_at: a.requested_at,
        expires_at: a.expires_at,
        inputs: a.original_inputs,
      }));
      const byRisk: Record<string, number> = {};
      for (const a of page.approvals) byRisk[a.risk_level ?? 'unknown'] = (byRisk[a.risk_level ?? 'unknown'] ?? 0) + 1;
      const details = { pending: page.total, shown: approvals.length, by_risk_level: byRisk, oldest_pending: backlog.oldest_pending, expired: backlog.expired, approvals };
      const summary = page.total
        ? `${page.total} approval${page.total === 1 ? ' is' : 's are'} pending (${Object.entries(byRisk).map(([k, n]) => `${n} ${k}`).join(', ')}); the oldest since ${backlog.oldest_pending?.requested_at}.`
        : 'No approval is pending.';
      const text = [
        'Review the pending approvals below, oldest first.',
        summary,
        'For each, recommend approve or reject with one sentence of reasoning from its risk level, reason, inputs and cost (USD). Do not decide yourself: a human confirms, then calls approve_action or reject_action with the approval id and their email.',
        dataBlock(details),
      ].join('\n\n');
      return { summary, details, text };
    },
  }),
  definePrompt({
    name: 'compliance_audit_report',
    description: 'Write a compliance audit report for a period: interventions by type and outcome, cost prevented (USD), high-risk blocks, top blocked actions and policies, with the current policies, kill switches and approval backlog.',
    input: z.strictObject({ start_date: DateArg.optional(), end_date: DateArg.optional() }),
    argumentDocs: { start_date: 'First day of the period, YYYY-MM-DD; absent = all time (with the last 30 days as the series)', end_date: 'Last day of the period, YYYY-MM-DD; default today' },
    calls: ['interventions.stats', 'policies.list', 'kill-switches.list', 'approvals.list'],
    render: async (e, { start_date, end_date }) => {
      const [stats, policies, switches, backlog] = await Promise.all([
        e.ask('interventions.stats', { query: { ...(start_date ? { start_date } : {}), ...(end_date ? { end_date } : {}) } }),
        e.ask('policies.list', { query: { enabled: 'true', limit: 1000 } }),
        e.ask('kill-switches.list', { query: {} }),
        approvalBacklog(e),
      ]);
      const period = { start_date: start_date ?? null, end_date: end_date ?? null };
      const details = {
        period,
        interventions: {
          total: stats.total_interventions,
          by_type: stats.by_type,
          by_outcome: stats.by_outcome,
          cost_prevented_usd: stats.cost_prevented_usd,
          high_risk_blocks: stats.high_risk_blocks,
          top_blocked_actions: stats.top_blocked_actions,
          top_triggering_policies: stats.top_triggering_policies,
          time_series: stats.time_series,
        },
        policies: { active: policies.total, names: policies.policies.map((p) => p.name) },
        kill_switches: { organization_engaged: switches.organization.engaged, engaged_agents: switches.agents.map((a) => a.agent_id) },
        approvals: backlog,
      };
      const span = start_date ? `from ${start_date} to ${end_date ?? 'today'}` : 'over all time';
      const summary = `${stats.total_interventions} interventions ${span}, ${stats.high_risk_blocks} high-risk blocks, ${usd(stats.cost_prevented_usd)} prevented; ${policies.total} active polic${policies.total === 1 ? 'y' : 'ies'}, ${backlog.pending} pending and ${backlog.expired} expired approvals; organisation kill switch ${switches.organization.engaged ? 'engaged' : 'released'}.`;
      const text = [
        `Write a compliance audit report ${span} for the organisation's AI agents.`,
        summary,
        'Sections: executive summary; controls in force (policies, kill switches); what the controls stopped (by type and outcome, high-risk blocks, top blocked actions and triggering policies, cost prevented in USD); open risks (pending and expired approvals); recommendations. Cite the numbers below; do not invent any.',
        dataBlock(details),
      ].join('\n\n');
      return { summary, details, text };
    },
  }),
];

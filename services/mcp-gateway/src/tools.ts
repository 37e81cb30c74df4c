/**
 * The platform's tools. The first seven are the spec's, with exactly its argument names, types, enums and required
 * lists; the rest are what a language model managing the platform also needs (docs/mcp.md), the eval tools
 * last. Every handler asks
 * the owning service through the wire registry; the tool's data is the service's reply (a page, a record, stats).
 * Source: spec §Tools shown; docs/mcp.md.
 */
import { z } from 'zod';
import {
  ALL_PURPOSES,
  EXPORT_FORMATS,
  INTERVENTION_OUTCOMES,
  INTERVENTION_TYPES,
  LEDGER_CSV_COLUMNS,
  CreatePolicySchema,
  MAX_USD,
  PURPOSES,
  REPLAY_EVALUATE_MAX_RUNS,
  REPLAY_EVALUATE_MAX_RUN_IDS,
  ReplayPolicyPatchSchema,
  RISK_LEVELS,
  RUN_STATUSES,
  RateLimitsSchema,
  DowngradesSchema,
  GuardrailsSchema,
  AutoKillSwitchSchema,
  PeriodBudgetsSchema,
  McpServerNameSchema,
  McpToolAcceptSchema,
  McpToolsQuerySchema,
  McpToolNameSchema,
  McpServerPatchSchema,
  McpServerRegistrationSchema,
  CreateWebhookSchema,
  RotateWebhookSecretSchema,
  UpdateWebhookSchema,
  WEBHOOK_DELIVERY_STATUSES,
  PutSlackConnectionSchema,
  type LedgerExportPage,
  AUDIT_ENTRY_TYPES,
  AUDIT_OBJECT_TYPES,
  AUDIT_PAGE_MAX,
  AUDIT_CHECKPOINT_PAGE_MAX,
  CreateAuditErasureSchema,
} from '@agp/contracts';
import { defineTool, type EntryContext, type ToolDefinition } from './registry.js';
import { dashboardStats } from './views.js';

const Id = z.string().min(1).max(256);
const Usd = z.number().min(0).max(MAX_USD);
const DateArg = (what: string) => z.string().min(1).max(64).describe(`${what}: an ISO 8601 date (YYYY-MM-DD, inclusive of that whole day for an end) or date-time (2026-11-22T10:00:00Z)`);
const Limit = (max: number, dflt: number) => z.number().int().min(1).max(max).describe(`Page size, 1 to ${max}; default ${dflt}`);
const Skip = z.number().int().min(0).describe('Records to skip (offset); default 0');
const ActionList = z.array(z.string().min(1).max(256)).max(1000);
/** What `rate_limits` holds, for the tool descriptions: each limit's fields and the scope's values and default. */
const RATE_LIMITS_TEXT =
  'Action name (or "*") → {max_calls (integer ≥ 1), window_seconds (> 0), scope}: scope agent (the default: every process of each agent the policy covers, counted per agent), organization (all its agents together) or process (each process counts alone)';
/** What `period_budgets` holds, for the tool descriptions. */
const PERIOD_BUDGETS_TEXT =
  'Budgets over calendar periods in UTC, [{scope: agent (each agent on its own) | organization (all agents together), period: hour | day | month, max_usd}], at most one per (scope, period); spending past one is budget_exceeded naming the period';
/**
 * The `purpose` argument of the tools that read runs, actions, interventions or stats: production (the default), eval
 * (what eval harnesses recorded) or all. Passed on as the services' `purpose` filter.
 */
export const PurposeArg = z
  .enum([...PURPOSES, ALL_PURPOSES])
  .describe('Which records by purpose: production (real work, the default), eval (recorded by an eval harness such as agp evals run) or all');

/** Drop the undefined fields of an argument object, so a service's strict schema sees only what was sent. */
export function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}

/**
 * Most ledger entries export_ledger returns inline; above it the tool returns a download URL and a resource URI
 * instead, and says so (never a silently truncated list). Source: docs/decisions.md (The tool gateway and MCP).
 */
export const EXPORT_LEDGER_INLINE_ROWS = 500;

/**
 * The ledger entries of `query`, inline when there are at most {@link EXPORT_LEDGER_INLINE_ROWS}; otherwise where to
 * download them. Reads keyset pages of `ledger.export-page` until it has them all or knows there are more.
 * @returns `{inline: true, format, row_count, entries (json) | content (jsonl text; csv text with its header line,
 *   as GET /api/v1/ledger/export writes it)}` or `{inline: false, format, row_count_at_least, inline_cap,
 *   download_url, message}`.
 */
export async function exportLedger(e: EntryContext, query: { format: (typeof EXPORT_FORMATS)[number]; start_date?: string; end_date?: string; agent_id?: string; purpose?: z.infer<typeof PurposeArg> }) {
  const texts: string[] = [];
  let rows = 0;
  let cursor: LedgerExportPage['next_cursor'] = null;
  do {
    const page: LedgerExportPage = await e.ask('ledger.export-page', { query: defined(query), cursor });
    if (page.rows > 0) texts.push(page.text);
    rows += page.rows;
    cursor = page.next_cursor;
  } while (cursor && rows <= EXPORT_LEDGER_INLINE_ROWS);
  if (rows > EXPORT_LEDGER_INLINE_ROWS) {
    const qs = new URLSearchParams(defined(query)).toString();
    return {
      inline: false,
      format: query.format,
      row_count_at_least: rows,
      inline_cap: EXPORT_LEDGER_INLINE_ROWS,
      download_url: `/api/v1/ledger/export?${qs}`,
      message: `The export has more than ${EXPORT_LEDGER_INLINE_ROWS} entries (at least ${rows}), so none are inline. Download all of them, as ${query.format}, with GET ${`/api/v1/ledger/export?${qs}`} and the same API key, or narrow start_date, end_date, agent_id or purpose.`,
    };
  }
  if (query.format === 'json') return { inline: true, format: query.format, row_count: rows, entries: JSON.parse(`[${texts.join(',')}]`) as unknown[] };
  // The pages hold only entry lines; the CSV header line is the exporter's to write (as the REST export does).
  const header = query.format === 'csv' ? `${LEDGER_CSV_COLUMNS.join(',')}\r\n` : '';
  return { inline: true, format: query.format, row_count: rows, content: header + texts.join('') };
}

/** What the policy tools say of `auto_kill_switch`. */
const AUTO_KILL_SWITCH_TEXT =
  'Automatic kill switch {block_rate, window_seconds, min_actions}: the platform engages the agent’s kill switch when more than block_rate (0 < x ≤ 1) of its governed decisions within window_seconds (default 300) stopped the action, after at least min_actions (default 50); only a person releases it';

/** The platform's tools, in the order the lists show them. */
export const PLATFORM_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'create_policy',
    title: 'Create a policy',
    description:
      'Create a governance policy (version 1) for the organisation. CHANGES STATE: the policy applies to every agent at once when enabled (default true). session_budget and run_budget are USD caps per agent session and per run, action_budget per single action; denied_actions lists action names no agent may run; rate_limits maps an action name (or "*" for every action) to {max_calls, window_seconds, scope}, scope agent (the default: counted per agent across all its processes), organization (all agents together) or process (each process alone); period_budgets cap spend per UTC calendar hour, day or month, per agent or for the organisation ([{scope: agent|organization, period: hour|day|month, max_usd}]); session and run budgets and agent/organization limits count every process of the fleet; downgrades rewrite an argument instead of blocking ({action or "*", argument as a dotted path, max: a numeric cap, or replace: {from: to}}); guardrails: pii {mode block|warn|redact, categories}, moderation {mode, threshold 0-1, categories}, loop {mode, threshold, window_seconds}, idempotency {actions, ttl_seconds}. Returns the stored policy with its id and version.',
    input: z.strictObject({
      name: z.string().min(1).max(256).describe('Policy name, unique enough for a human to recognise'),
      description: z.string().max(10_000).optional().describe('What the policy is for'),
      enabled: z.boolean().optional().describe('Whether it is enforced; default true'),
      session_budget: Usd.optional().describe('Budget per agent session, USD'),
      run_budget: Usd.optional().describe('Budget per run, USD'),
      denied_actions: ActionList.optional().describe('Action names no agent may run'),
      rate_limits: RateLimitsSchema.optional().describe(RATE_LIMITS_TEXT),
      action_budget: Usd.optional().describe('Budget per single action, USD: an action estimated above it is budget_exceeded'),
      downgrades: DowngradesSchema.optional().describe('Rules that modify an argument instead of blocking: {action (or "*"), argument (dotted path), max} or {action, argument, replace: {from: to}}'),
      guardrails: GuardrailsSchema.optional().describe('pii, moderation, loop and idempotency guardrails, each optional'),
      period_budgets: PeriodBudgetsSchema.optional().describe(`${PERIOD_BUDGETS_TEXT}, USD`),
      auto_kill_switch: AutoKillSwitchSchema.optional().describe(AUTO_KILL_SWITCH_TEXT),
    }),
    calls: ['policies.create'],
    run: async (e, args) => e.ask('policies.create', { body: defined(args) }),
  }),
  defineTool({
    name: 'list_runs',
    title: 'List runs',
    description:
      'List agent runs, newest first, with status, cost_usd (USD: per action the provider-reported actual cost where there is one, else the client estimate; estimated_cost_usd and actual_cost_usd beside it), duration (ms), action count and purpose. Filters compose: status (running, completed, failed), min_cost (USD, against cost_usd), agent_id, purpose (production by default: eval runs are left out unless asked for). Returns {runs, total, skip, limit}; read-only.',
    input: z.strictObject({
      status: z.enum(RUN_STATUSES).optional().describe('Only runs in this status'),
      min_cost: z.number().min(0).optional().describe('Only runs whose cost_usd (actual where reported, else estimated) is at least this much, USD'),
      agent_id: Id.optional().describe('Only this agent’s runs'),
      limit: Limit(1000, 50).optional(),
      purpose: PurposeArg.optional(),
    }),
    calls: ['runs.list'],
    run: async (e, args) => e.ask('runs.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_pending_approvals',
    title: 'Pending approvals',
    description:
      'The approval inbox: escalated actions waiting for a human decision, newest first (up to 200), each with its approval id (apr-…), agent, action, risk level, reason, estimated cost (USD) and expiry. total says how many are pending in all. Read-only; decide with approve_action or reject_action.',
    input: z.strictObject({}),
    calls: ['approvals.list'],
    run: async (e) => {
      const page = await e.ask('approvals.list', { query: { status: 'pending', limit: 200 } });
      return { approvals: page.approvals, total: page.total, returned: page.approvals.length };
    },
  }),
  defineTool({
    name: 'approve_action',
    title: 'Approve an action',
    description:
      'Approve a pending approval. CHANGES STATE: the escalated intervention becomes approved_after_review, with the approver and notes on its audit trail. A decision already taken or an expired approval is a conflict.',
    input: z.strictObject({
      approval_id: z.string().min(1).max(300).describe('The approval id, apr-<intervention id>'),
      approver_email: z.email().max(320).describe('Email of the human who decided'),
      notes: z.string().max(10_000).optional().describe('Why'),
    }),
    calls: ['approvals.approve'],
    run: async (e, { approval_id, ...body }) => e.ask('approvals.approve', { path: { id: approval_id }, body: defined(body) }),
  }),
  defineTool({
    name: 'reject_action',
    title: 'Reject an action',
    description:
      'Reject a pending approval. CHANGES STATE: the escalated intervention becomes rejected_after_review, with the approver and notes on its audit trail. A decision already taken or an expired approval is a conflict.',
    input: z.strictObject({
      approval_id: z.string().min(1).max(300).describe('The approval id, apr-<intervention id>'),
      approver_email: z.email().max(320).describe('Email of the human who decided'),
      notes: z.string().max(10_000).optional().describe('Why'),
    }),
    calls: ['approvals.reject'],
    run: async (e, { approval_id, ...body }) => e.ask('approvals.reject', { path: { id: approval_id }, body: defined(body) }),
  }),
  defineTool({
    name: 'get_agent_stats',
    title: 'Agent stats',
    description:
      'One agent’s runs by status, actions, total and average cost per run (USD, estimated and provider-reported), average action duration (ms), intervention counts by type and outcome with cost prevented (USD), and its top 10 actions by count; of production runs unless purpose says otherwise. Read-only; not_found when the agent has no data.',
    input: z.strictObject({ agent_id: Id.describe('The agent id'), purpose: PurposeArg.optional() }),
    calls: ['stats.agent'],
    run: async (e, { agent_id, purpose }) => e.ask('stats.agent', { path: { agent_id }, query: defined({ purpose }) }),
  }),
  defineTool({
    name: 'export_ledger',
    title: 'Export the ledger',
    description: `Export the action ledger (one entry per agent action: run, agent, action, status, timestamp, cost_usd and actual_cost_usd in USD, duration_ms, inputs, outputs, purpose), oldest first, as json (entries), jsonl or csv (content text); the entries of production runs unless purpose says otherwise. Up to ${EXPORT_LEDGER_INLINE_ROWS} entries come inline; above that the result has inline: false and a download_url for the full export instead, never a truncated list. Read-only.`,
    input: z.strictObject({
      format: z.enum(EXPORT_FORMATS).describe('json, jsonl or csv'),
      start_date: DateArg('First day or instant').optional(),
      end_date: DateArg('Last day or instant').optional(),
      agent_id: Id.optional().describe('Only this agent’s entries'),
      purpose: PurposeArg.optional(),
    }),
    calls: ['ledger.export-page'],
    run: async (e, args) => exportLedger(e, args),
  }),

  // Beyond the spec's seven: what an LLM managing the platform needs.
  defineTool({
    name: 'list_interventions',
    title: 'List interventions',
    description: `List interventions (what the guardrails did), newest first. Filters compose with AND; each enum filter takes one or more values (OR): type (${INTERVENTION_TYPES.join(', ')}), outcome (${INTERVENTION_OUTCOMES.join(', ')}), risk_level (${RISK_LEVELS.join(', ')}); plus action_name, agent_id, run_id, policy_id, a start_date/end_date range and purpose (production by default: interventions an eval produced are left out unless asked for). cost_prevented_usd is in USD. Returns {interventions, total, skip, limit}; read-only.`,
    input: z.strictObject({
      type: z.array(z.enum(INTERVENTION_TYPES)).min(1).optional().describe('Intervention types (any of)'),
      outcome: z.array(z.enum(INTERVENTION_OUTCOMES)).min(1).optional().describe('Outcomes (any of)'),
      risk_level: z.array(z.enum(RISK_LEVELS)).min(1).optional().describe('Risk levels (any of)'),
      action_name: z.string().min(1).max(256).optional(),
      agent_id: Id.optional(),
      run_id: Id.optional(),
      policy_id: Id.optional(),
      start_date: DateArg('From').optional(),
      end_date: DateArg('To').optional(),
      purpose: PurposeArg.optional(),
      skip: Skip.optional(),
      limit: Limit(1000, 50).optional(),
    }),
    calls: ['interventions.list'],
    run: async (e, args) => e.ask('interventions.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_intervention',
    title: 'One intervention',
    description:
      'One intervention with its guardrail context, original and modified inputs, enrichment status and audit trail (every change with actor, time and field changes from → to). Read-only; not_found for an unknown id.',
    input: z.strictObject({ id: Id.describe('The intervention id') }),
    calls: ['interventions.get'],
    run: async (e, { id }) => e.ask('interventions.get', { path: { id } }),
  }),
  defineTool({
    name: 'get_intervention_stats',
    title: 'Intervention stats',
    description:
      'Intervention totals by type and outcome, cost prevented (USD), high-risk blocks, a daily series, top blocked actions and top triggering policies, of production interventions unless purpose says otherwise. Without start_date: all-time totals and the last 30 days; with it, both cover start_date..end_date (default today). Read-only.',
    input: z.strictObject({ start_date: DateArg('From').optional(), end_date: DateArg('To').optional(), purpose: PurposeArg.optional() }),
    calls: ['interventions.stats'],
    run: async (e, args) => e.ask('interventions.stats', { query: defined(args) }),
  }),
  defineTool({
    name: 'set_kill_switch',
    title: 'Engage or release a kill switch',
    description:
      'Engage (engaged: true) or release (engaged: false) a kill switch. CHANGES STATE: without agent_id it is the organisation-wide switch, which stops every agent; with agent_id, only that agent. The reason is recorded on the audit trail. Returns the switch’s new state.',
    input: z.strictObject({
      engaged: z.boolean().describe('true stops the agents, false lets them run again'),
      agent_id: Id.optional().describe('One agent; absent = the whole organisation'),
      reason: z.string().max(10_000).optional().describe('Why'),
    }),
    calls: ['kill-switches.set'],
    run: async (e, { agent_id, ...body }) => e.ask('kill-switches.set', { path: defined({ agent_id }), body: defined(body) }),
  }),
  defineTool({
    name: 'list_policies',
    title: 'List policies',
    description:
      'List policies, newest first, with their budgets (USD), denied, allowed and approval-required actions, rate limits, agent scope and version. Filters: enabled, agent_id (policies that apply to that agent), name. Returns {policies, total, skip, limit}; read-only.',
    input: z.strictObject({
      enabled: z.boolean().optional(),
      agent_id: Id.optional(),
      name: z.string().min(1).max(256).optional(),
      skip: Skip.optional(),
      limit: Limit(1000, 50).optional(),
    }),
    calls: ['policies.list'],
    run: async (e, { enabled, ...rest }) => e.ask('policies.list', { query: defined({ ...rest, enabled: enabled === undefined ? undefined : (String(enabled) as 'true' | 'false') }) }),
  }),
  defineTool({
    name: 'update_policy',
    title: 'Update a policy',
    description:
      'Change a policy (JSON merge patch): only the fields given change, null clears description, session_budget, run_budget, action_budget, allowed_actions or auto_kill_switch, and lists, rate_limits, downgrades, guardrails and period_budgets replace the old ones whole (a rate limit given without a scope counts per agent; period budgets are per UTC calendar hour, day or month). CHANGES STATE: creates a new version on the policy’s history. expected_version makes the change conditional (conflict when the policy has moved on). Budgets in USD.',
    input: z.strictObject({
      policy_id: Id.describe('The policy id'),
      expected_version: z.number().int().min(1).optional().describe('Only change it if it is still at this version'),
      name: z.string().min(1).max(256).optional(),
      description: z.string().max(10_000).nullable().optional(),
      enabled: z.boolean().optional(),
      session_budget: Usd.nullable().optional().describe('USD per session; null removes the budget'),
      run_budget: Usd.nullable().optional().describe('USD per run; null removes the budget'),
      denied_actions: ActionList.optional(),
      allowed_actions: ActionList.nullable().optional().describe('null = every action not denied is allowed'),
      approval_required_actions: ActionList.optional(),
      rate_limits: RateLimitsSchema.optional().describe(`Replaces the rate limits; {} removes them. ${RATE_LIMITS_TEXT}`),
      agent_ids: z.array(Id).max(1000).optional().describe('Agents it applies to; [] = every agent'),
      action_budget: Usd.nullable().optional().describe('USD per single action; null removes the budget'),
      downgrades: DowngradesSchema.optional().describe('Replaces the downgrade rules; [] removes them'),
      guardrails: GuardrailsSchema.optional().describe('Replaces the guardrails; {} removes them'),
      period_budgets: PeriodBudgetsSchema.optional().describe(`Replaces the period budgets; [] removes them. ${PERIOD_BUDGETS_TEXT}, USD`),
      auto_kill_switch: AutoKillSwitchSchema.nullable().optional().describe(`${AUTO_KILL_SWITCH_TEXT}; null removes it`),
    }),
    calls: ['policies.update'],
    run: async (e, { policy_id, expected_version, ...patch }) =>
      e.ask('policies.update', { path: { id: policy_id }, headers: { if_match: expected_version === undefined ? null : `"${expected_version}"` }, body: defined(patch) }),
  }),
  defineTool({
    name: 'get_run',
    title: 'One run',
    description: 'One run with its status, cost (USD), duration (ms) and its ledger entries (actions) oldest first, up to 1000 (actions_total says how many there are). Read-only; not_found for an unknown run.',
    input: z.strictObject({ run_id: Id.describe('The run id') }),
    calls: ['runs.get'],
    run: async (e, { run_id }) => e.ask('runs.get', { path: { id: run_id }, query: {} }),
  }),
  defineTool({
    name: 'list_agents',
    title: 'List agents',
    description: 'The agent registry: each agent with its registered actions (name, description, cost estimate in USD, risk) and its kill switch. Returns {agents, total, skip, limit}; read-only.',
    input: z.strictObject({ skip: Skip.optional(), limit: Limit(1000, 50).optional() }),
    calls: ['agents.list'],
    run: async (e, args) => e.ask('agents.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_dashboard_stats',
    title: 'Dashboard stats',
    description:
      'The dashboard numbers: total_runs, total_actions, total_cost_usd (USD: per action the provider-reported actual cost where there is one, else the client estimate), success_rate (completed ÷ ended runs, a fraction 0..1), pending_approvals and interventions_24h (interventions recorded in the last 24 hours); runs, actions and interventions of production unless purpose says otherwise (pending approvals are all of them). Read-only.',
    input: z.strictObject({ purpose: PurposeArg.optional() }),
    calls: ['stats.summary', 'approvals.list', 'interventions.list'],
    run: async (e, { purpose }) => dashboardStats(e, purpose),
  }),

  // Evals: read-only views of the eval run history and scorecards.
  defineTool({
    name: 'list_eval_runs',
    title: 'List eval runs',
    description:
      'The eval run history (benchmark runs submitted by a harness or CI job), newest first, without their scenarios. Each run has suite, agent_id, branch, commit_sha, created_at and its summary: block_rate (blocked ÷ adversarial scenarios) and correctness_rate (scenarios whose result matched what was expected ÷ all), both fractions 0..1; damage_prevented_usd (USD); avg_detection_time_ms (ms); grade A–F; ci_status pass/fail (null without a commit); regressions against the default branch; by_category rates. Filters compose with AND: suite, agent_id, branch. Returns {eval_runs, total, skip, limit}; read-only.',
    input: z.strictObject({
      suite: z.string().min(1).max(256).optional().describe('Only runs of this suite'),
      agent_id: Id.optional().describe('Only runs of this agent'),
      branch: z.string().min(1).max(256).optional().describe('Only runs on this branch, e.g. main'),
      skip: Skip.optional(),
      limit: Limit(200, 50).optional(),
    }),
    calls: ['evals.list'],
    run: async (e, args) => e.ask('evals.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_latest_scorecard',
    title: 'Latest eval scorecard',
    description:
      'The newest eval run (optionally of one suite, agent_id or branch) with its scorecard and every scenario (name, category, severity, expected block|allow, status blocked|failed|allowed, reason, detection_time_ms in ms, damage_usd in USD). Summary: block_rate and correctness_rate (fractions 0..1), damage_prevented_usd (USD), avg_detection_time_ms (ms), grade (A ≥ 0.95, B ≥ 0.85, C ≥ 0.70, D ≥ 0.50 on both rates, else F), ci_status pass/fail (null without a commit) and regressions. Read-only; not_found when no run matches.',
    input: z.strictObject({
      suite: z.string().min(1).max(256).optional().describe('Only runs of this suite'),
      agent_id: Id.optional().describe('Only runs of this agent'),
      branch: z.string().min(1).max(256).optional().describe('Only runs on this branch, e.g. main'),
    }),
    calls: ['evals.latest'],
    run: async (e, args) => e.ask('evals.latest', { query: defined(args) }),
  }),
  defineTool({
    name: 'compare_eval_runs',
    title: 'Compare eval runs',
    description:
      'Compare two eval runs by id: block_rate_delta_pp and correctness_rate_delta_pp (current − baseline, in percentage points), grade_change (e.g. B→A, with direction up/down/same), regressions (scenarios that passed on the baseline and fail now), improvements (failed on the baseline, pass now), scenarios present in one run only (listed apart, never counted as passing), per-category deltas, and warnings (different suites or agents). Read-only; not_found when either id is unknown.',
    input: z.strictObject({
      baseline_id: Id.describe('The earlier run, the reference (e.g. the latest run on main)'),
      current_id: Id.describe('The run compared with it (e.g. the run of a pull request)'),
    }),
    calls: ['evals.compare'],
    run: async (e, { baseline_id, current_id }) => e.ask('evals.compare', { path: { baseline_id, current_id } }),
  }),

  // Replay: the ledger of local replays, and counterfactual evaluation (read-only).
  defineTool({
    name: 'get_replay_history',
    title: 'Replay history',
    description:
      "The organisation's replay history (summaries clients submitted after replaying a recorded run locally), newest first, or one run's with run_id. Each submission has run_id, actions_replayed, divergences, cost_savings (USD), status (completed: no divergence; partial: some diverged; diverged: none replayed cleanly; failed: the replay broke), started_at, completed_at, duration_ms (ms), client_version and submitted_at; with run_id each also carries divergence_details (one {step, action_name, expected, actual} per divergent step). aggregates cover every matching submission: submissions, actions_replayed, divergences, cost_saved_usd (USD, the sum of cost_savings). Returns {submissions, total, skip, limit, aggregates}; read-only.",
    input: z.strictObject({
      run_id: Id.optional().describe('Only the submissions of this run'),
      skip: Skip.optional(),
      limit: Limit(200, 50).optional(),
    }),
    calls: ['replay.history', 'replay.run-history'],
    run: async (e, { run_id, ...page }) =>
      run_id === undefined ? e.ask('replay.history', { query: defined(page) }) : e.ask('replay.run-history', { path: { run_id }, query: defined(page) }),
  }),
  defineTool({
    name: 'evaluate_run',
    title: 'Evaluate a run against policies',
    description:
      "Counterfactual evaluation of one recorded run: every action, in order, decided again by today's enabled policies, or with candidate_policy (a full policy added to them) or policy_patch ({policy_id, patch}: a JSON merge patch on an existing policy). The state at each step is rebuilt from the record: spend so far (USD) and recent calls count only the earlier steps that would still run; kill switches are not applied. Each step: step, action_name, timestamp, cost_usd (actual where reported, else estimated, USD), recorded_status, decision (allow, block, escalate, rate_limited, budget_exceeded, warn), policy_id, policy_name, reason. totals: by_decision, prevented_usd, actually_spent_usd, would_spend_usd, difference_usd (USD). Changes nothing: nothing is stored, the candidate is not created and the patch not applied; a candidate or patch needs a write key (forbidden otherwise). not_found for an unknown run or patched policy.",
    input: z.strictObject({
      run_id: Id.describe('The recorded run'),
      candidate_policy: CreatePolicySchema.optional().describe('A full policy, as create_policy takes it, evaluated alongside today’s (not stored)'),
      policy_patch: ReplayPolicyPatchSchema.optional().describe('{policy_id, patch}: patch as update_policy takes it (JSON merge patch), evaluated instead of the stored policy (not applied)'),
    }),
    calls: ['replay.evaluate-run'],
    run: async (e, { run_id, ...body }) => e.ask('replay.evaluate-run', { path: { run_id }, body: defined(body) }),
  }),
  defineTool({
    name: 'evaluate_policy_change',
    title: 'Evaluate a policy change over recorded runs',
    description: `What a policy change would have done to recorded history, before turning it on: the matching runs (filters compose: agent_id, start_date and end_date on the run's start, purpose (production by default), or run_ids, at most ${REPLAY_EVALUATE_MAX_RUN_IDS}) are each decided again, step by step, by today's policies with candidate_policy added or policy_patch merged (as evaluate_run does; neither = today's policies alone). At most ${REPLAY_EVALUATE_MAX_RUNS} runs, the newest first; truncated is true and runs_matched counts them all when more match. Returns {runs: [{run_id, agent_id, started_at, totals}], runs_matched, runs_evaluated, truncated, totals}; totals in USD: prevented_usd, actually_spent_usd, would_spend_usd, difference_usd, and steps by_decision. Changes nothing; a candidate or patch needs a write key.`,
    input: z.strictObject({
      agent_id: Id.optional().describe('Only runs of this agent'),
      start_date: DateArg('Runs started from').optional(),
      end_date: DateArg('Runs started until').optional(),
      run_ids: z.array(Id).min(1).max(REPLAY_EVALUATE_MAX_RUN_IDS).optional().describe(`These runs only (at most ${REPLAY_EVALUATE_MAX_RUN_IDS}; unknown ids are left out)`),
      purpose: PurposeArg.optional().describe('Which runs by purpose: production, eval or all; absent, eval runs are left out unless named in run_ids'),
      candidate_policy: CreatePolicySchema.optional().describe('A full policy, as create_policy takes it, evaluated alongside today’s (not stored)'),
      policy_patch: ReplayPolicyPatchSchema.optional().describe('{policy_id, patch}: patch as update_policy takes it (JSON merge patch), evaluated instead of the stored policy (not applied)'),
    }),
    calls: ['replay.evaluate-runs'],
    run: async (e, args) => e.ask('replay.evaluate-runs', { body: defined(args) }),
  }),
  defineTool({
    name: 'list_mcp_servers',
    title: 'List MCP servers',
    description:
      'The organisation’s registered upstream MCP servers (the ones the hosted MCP proxy may reach), by name: each with url, action_prefix, tool_costs_usd (USD per tool call), hide_denied_tools, timeout_ms (ms), approval (platform or client), header_names (never the values), created_at, updated_at and version. Returns {servers, total, skip, limit}; read-only.',
    input: z.strictObject({ skip: Skip.optional(), limit: Limit(1000, 50).optional() }),
    calls: ['mcp-servers.list'],
    run: async (e, args) => e.ask('mcp-servers.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_mcp_server',
    title: 'Get an MCP server',
    description: 'One registered upstream MCP server by name, with its settings and header names (never the values). Read-only.',
    input: z.strictObject({ name: McpServerNameSchema.describe('The server’s name') }),
    calls: ['mcp-servers.get'],
    run: async (e, args) => e.ask('mcp-servers.get', { path: args }),
  }),
  defineTool({
    name: 'register_mcp_server',
    title: 'Register an MCP server',
    description:
      'Register an upstream MCP server for the hosted MCP proxy. CHANGES STATE. name: lower-case letters, digits, - and _; url: http(s), no credentials in it, a public address unless AGP_OUTBOUND_ALLOWED_HOSTS names the host; headers: sent to the upstream (e.g. Authorization), sealed at rest and never shown again (only their names); action_prefix (default "<name>.") + a tool’s name is the action name policies decide; tool_costs_usd: estimated USD per call by tool; hide_denied_tools (default false); timeout_ms (default 30000); approval: platform (default) or client. A name already registered is a conflict.',
    input: McpServerRegistrationSchema,
    calls: ['mcp-servers.register'],
    run: async (e, args) => e.ask('mcp-servers.register', { body: args }),
  }),
  defineTool({
    name: 'update_mcp_server',
    title: 'Update an MCP server',
    description:
      'Change fields of a registered upstream MCP server (any but name): url, action_prefix, tool_costs_usd (USD), hide_denied_tools, timeout_ms (ms), approval, headers (replace the whole set; {} removes them; never shown again). CHANGES STATE. expected_version makes the change conditional (conflict when the server has moved on).',
    input: z.strictObject({ name: McpServerNameSchema.describe('The server’s name'), expected_version: z.number().int().min(1).optional().describe('Only change it if it is still at this version'), ...McpServerPatchSchema.shape }),
    calls: ['mcp-servers.update'],
    run: async (e, { name, expected_version, ...patch }) =>
      e.ask('mcp-servers.update', { path: { name }, headers: { if_match: expected_version === undefined ? null : `"${expected_version}"` }, body: defined(patch) }),
  }),
  defineTool({
    name: 'delete_mcp_server',
    title: 'Delete an MCP server',
    description: 'Delete a registered upstream MCP server by name. CHANGES STATE: the hosted proxy no longer reaches it; its history stays for audit.',
    input: z.strictObject({ name: McpServerNameSchema.describe('The server’s name') }),
    calls: ['mcp-servers.delete'],
    run: async (e, args) => {
      await e.ask('mcp-servers.delete', { path: args });
      return { deleted: args.name };
    },
  }),
  defineTool({
    name: 'list_mcp_server_tools',
    title: 'List an MCP server’s pinned tools',
    description:
      'The tools of a registered upstream MCP server as the platform pinned them (tool pinning: the first tool list read after registration is trusted; a tool whose description or input schema changes later, or that appears later, is held: the hosted proxy refuses its calls until someone accepts it). Each tool: status (pinned, changed or new), hash and pinned_hash (SHA-256 of name, description and input schema), description and input_schema as listed now, pinned_description and pinned_input_schema as accepted, listed, seen_at, accepted_at. With agent_id, each tool also has its standing for that agent: {agent_id, action (action_prefix + tool), decision (allowed, denied: every call blocked; escalates: every call waits for approval; by name alone, as hide_denied_tools decides), policy ({id, name} deciding it, or null), held (its pin holds its calls)}. Returns {server, tools, awaiting_acceptance, seen_at}; read-only.',
    input: z.strictObject({ name: McpServerNameSchema.describe('The server’s name'), ...McpToolsQuerySchema.shape }),
    calls: ['mcp-servers.tools'],
    run: async (e, { name, ...query }) => e.ask('mcp-servers.tools', { path: { name }, query: defined(query) }),
  }),
  defineTool({
    name: 'accept_mcp_server_tool',
    title: 'Accept an MCP server’s changed tool',
    description:
      'Accept the description and input schema a registered upstream MCP server lists now for one held tool (status changed or new): its pin becomes them and its calls through the hosted proxy flow again within seconds. CHANGES STATE. Review the change first (list_mcp_server_tools shows the description and schema as listed and as accepted); pass the hash you reviewed so a tool that changed again since is refused (conflict). A tool the upstream does not list is not found.',
    input: z.strictObject({ name: McpServerNameSchema.describe('The server’s name'), tool: McpToolNameSchema.describe('The tool’s name as the upstream lists it'), ...McpToolAcceptSchema.shape }),
    calls: ['mcp-servers.accept-tool'],
    run: async (e, { name, tool, ...body }) => e.ask('mcp-servers.accept-tool', { path: { name, tool }, body: defined(body) }),
  }),
  defineTool({
    name: 'list_audit_log',
    title: 'List the audit log',
    description:
      'The log of administrative changes (needs an admin key), newest first: every change to policies, kill switches, agents, API keys, members and roles, and registered MCP servers and their accepted tools, each {id, organization_id, at, actor: {type: user | key | system, id, name}, object: {type, id}, type (e.g. policy.updated, kill_switch.engaged, key.created, member.role_changed, mcp_tool.accepted), before, after}; secrets are never shown. Filters combine: actor (key:<id>, user:<id> or system), object_type, object_id, type, from and to. Returns {entries, total, skip, limit, next_cursor}; pass next_cursor as cursor for the next page. Read-only.',
    input: z.strictObject({
      actor: z.string().min(1).max(300).optional().describe('Only changes by key:<key id>, user:<user id> or system'),
      object_type: z.array(z.enum(AUDIT_OBJECT_TYPES)).min(1).optional().describe('Only changes of these object types'),
      object_id: z.string().min(1).max(300).optional().describe('Only changes of this object (policy id, organization or agents/<agent_id> for a kill switch, agent id, server name, <server>/<tool> for an MCP server tool, key id, member id)'),
      type: z.array(z.enum(AUDIT_ENTRY_TYPES)).min(1).optional().describe('Only these entry types, e.g. ["policy.updated", "key.created"]'),
      from: DateArg('From (inclusive)').optional(),
      to: DateArg('To (inclusive)').optional(),
      cursor: z.string().min(1).max(1000).optional().describe('The next_cursor of the page before'),
      limit: Limit(AUDIT_PAGE_MAX, 50).optional(),
    }),
    calls: ['audit-log.list'],
    run: async (e, args) => e.ask('audit-log.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'list_audit_checkpoints',
    title: 'List audit trail checkpoints',
    description:
      'The signed checkpoints of the organisation’s verifiable audit trail, newest first: each {origin, tree_size, root_hash (base64), at, key_id, key_name, note (the C2SP signed note)}, with latest and the log’s current tree_size. Verify a note with the keys of /.well-known/agp-audit-keys (docs/audit.md). Returns {checkpoints, latest, tree_size, total, skip, limit}. Read-only.',
    input: z.strictObject({ skip: Skip.optional(), limit: Limit(AUDIT_CHECKPOINT_PAGE_MAX, 50).optional() }),
    calls: ['audit.checkpoints'],
    run: async (e, args) => e.ask('audit.checkpoints', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_audit_inclusion_proof',
    title: 'Prove a record is in the audit trail',
    description:
      'The inclusion proof of one record of the audit trail: {record, leaf_index, tree_size, leaf (the canonical record, RFC 8785 JSON), leaf_hash, proof (the RFC 9162 audit path, base64), root_hash}. record is the leaf’s id (the id of the event it records; an audit-log entry’s id). tree_size: a checkpoint’s size (default: the current size). Not found for a record of another organisation. Read-only.',
    input: z.strictObject({ record: Id.describe('The record’s id'), tree_size: z.number().int().min(0).optional().describe('The tree size to prove against (a checkpoint’s tree_size); default: now') }),
    calls: ['audit.inclusion'],
    run: async (e, args) => e.ask('audit.inclusion', { query: defined(args) }),
  }),
  defineTool({
    name: 'get_audit_consistency_proof',
    title: 'Prove the audit trail only appended',
    description:
      'The consistency proof between two sizes of the audit trail (e.g. two checkpoints’ tree_size): {from, to, proof (RFC 9162, base64), from_root, to_root}. from ≤ to ≤ the log’s size. Read-only.',
    input: z.strictObject({ from: z.number().int().min(0).describe('The older tree size'), to: z.number().int().min(0).describe('The newer tree size') }),
    calls: ['audit.consistency'],
    run: async (e, args) => e.ask('audit.consistency', { query: args }),
  }),
  defineTool({
    name: 'erase_audit_data',
    title: 'Erase an agent’s, a run’s or an intervention’s personal data from the audit trail',
    description:
      'Erase the personal data (the committed fields: inputs, reasons, intents, notes, guardrail context, suggested rewrites) of one agent’s, one run’s or one intervention’s records: their interventions with every outcome change, approval and deletion, and for an agent its kill-switch changes. The values are removed from the stored events and the read models and their salts deleted; the leaves hold only commitments, so checkpoints and proofs still verify. Give exactly one of agent_id, run_id or intervention_id, and a reason. Returns {id, scope, agent_id, run_id, intervention_id, before, records, fields, events_changed, at}; the erasure is itself a record of the log. CHANGES STATE and cannot be undone; needs an admin key.',
    input: CreateAuditErasureSchema,
    calls: ['audit.erase'],
    run: async (e, args) => e.ask('audit.erase', { body: defined(args) }),
  }),
  defineTool({
    name: 'list_webhooks',
    title: 'List webhook subscriptions',
    description:
      'The organisation’s webhook subscriptions, oldest first: each with id, url, events, filter (agent_ids, intervention_types, min_risk_level), enabled, description, disabled_reason (gone: the receiver answered 410; failing: consecutive failures), consecutive_failures, previous_secret_expires_at, created_at, updated_at; never a secret. Returns {webhooks, total, skip, limit}. Needs an admin key; read-only.',
    input: z.strictObject({ skip: Skip.optional(), limit: Limit(200, 50).optional() }),
    calls: ['webhooks.list'],
    run: async (e, args) => e.ask('webhooks.list', { query: defined(args) }),
  }),
  defineTool({
    name: 'create_webhook',
    title: 'Create a webhook subscription',
    description:
      'Subscribe a URL to signed (Standard Webhooks) deliveries. CHANGES STATE; needs an admin key. url: http(s), no credentials, at most 2048 characters, a public address unless AGP_OUTBOUND_ALLOWED_HOSTS names the host; events: approval.requested, approval.decided, intervention.created, kill_switch.changed, policy.changed, budget.threshold, block_rate.spike, eval.regression, delivery.disabled; filter: agent_ids, intervention_types, min_risk_level, budget_thresholds (50, 80, 100), block_rate ({threshold, window_seconds, min_actions}). Returns the subscription with its signing secret (whsec_…), shown this once.',
    input: CreateWebhookSchema,
    calls: ['webhooks.create'],
    run: async (e, args) => e.ask('webhooks.create', { body: args }),
  }),
  defineTool({
    name: 'update_webhook',
    title: 'Update a webhook subscription',
    description: 'Change url, events, filter (null clears it), enabled (true resets the failure count and resumes waiting deliveries) or description of a webhook subscription. CHANGES STATE; needs an admin key.',
    input: z.strictObject({ id: Id.describe('The subscription id (wh_…)'), ...UpdateWebhookSchema.shape }),
    calls: ['webhooks.update'],
    run: async (e, { id, ...patch }) => e.ask('webhooks.update', { path: { id }, body: defined(patch) }),
  }),
  defineTool({
    name: 'delete_webhook',
    title: 'Delete a webhook subscription',
    description: 'Delete a webhook subscription and its deliveries. CHANGES STATE; needs an admin key.',
    input: z.strictObject({ id: Id.describe('The subscription id (wh_…)') }),
    calls: ['webhooks.delete'],
    run: async (e, args) => {
      await e.ask('webhooks.delete', { path: args });
      return { deleted: args.id };
    },
  }),
  defineTool({
    name: 'rotate_webhook_secret',
    title: 'Rotate a webhook secret',
    description: 'Replace a subscription’s signing secret; deliveries are also signed with the old one for overlap_seconds (default 86400, at most 604800). Returns the subscription with the new secret, shown this once. CHANGES STATE; needs an admin key.',
    input: z.strictObject({ id: Id.describe('The subscription id (wh_…)'), ...RotateWebhookSecretSchema.partial().shape }),
    calls: ['webhooks.rotate-secret'],
    run: async (e, { id, ...body }) => e.ask('webhooks.rotate-secret', { path: { id }, body: defined(body) }),
  }),
  defineTool({
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description: 'A subscription’s delivery log, newest first: each delivery’s id (its webhook-id header), event, status (pending, delivered, failed), attempts, response_status and latency_ms (ms) of the last attempt, last_error, next_attempt_at. Returns {deliveries, total, skip, limit}. Needs an admin key; read-only.',
    input: z.strictObject({ id: Id.describe('The subscription id (wh_…)'), status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional().describe('Only deliveries in this status'), skip: Skip.optional(), limit: Limit(200, 50).optional() }),
    calls: ['webhooks.deliveries'],
    run: async (e, { id, ...query }) => e.ask('webhooks.deliveries', { path: { id }, query: defined(query) }),
  }),
  defineTool({
    name: 'redeliver_webhook',
    title: 'Redeliver a webhook',
    description: 'Send a delivery again now, with the same webhook-id and a fresh retry schedule. CHANGES STATE; needs an admin key; conflict when the subscription is disabled.',
    input: z.strictObject({ id: Id.describe('The subscription id (wh_…)'), delivery_id: Id.describe('The delivery id (msg_…)') }),
    calls: ['webhooks.redeliver'],
    run: async (e, args) => e.ask('webhooks.redeliver', { path: args }),
  }),
  defineTool({
    name: 'get_slack_connection',
    title: 'Get the Slack connection',
    description:
      'The organisation’s Slack connection for approvals: channels (each {channel, filter: agent_ids, intervention_types, min_risk_level}), bot_token_hint (the token’s last 4 characters), created_at, updated_at; never the token or the signing secret. Not found when none is set. Needs an admin key; read-only.',
    input: z.strictObject({}),
    calls: ['integrations.slack-get'],
    run: async (e) => e.ask('integrations.slack-get', { query: {} }),
  }),
  defineTool({
    name: 'put_slack_connection',
    title: 'Set the Slack connection',
    description:
      'Set (or replace whole) the organisation’s Slack connection: bot_token (xoxb-…), signing_secret, channels (1 to 20 {channel, filter}); approval requests are posted to each channel whose filter they pass. The token and the secret are write-only (stored sealed, never returned). Returns the connection. CHANGES STATE; needs an admin key.',
    input: PutSlackConnectionSchema,
    calls: ['integrations.slack-put'],
    run: async (e, args) => e.ask('integrations.slack-put', { body: args }),
  }),
  defineTool({
    name: 'delete_slack_connection',
    title: 'Remove the Slack connection',
    description: 'Remove the organisation’s Slack connection; messages not yet posted, and updates not yet made, are dropped. Not found when none is set. CHANGES STATE; needs an admin key.',
    input: z.strictObject({}),
    calls: ['integrations.slack-delete'],
    run: async (e) => {
      await e.ask('integrations.slack-delete', { query: {} });
      return { deleted: true };
    },
  }),
];

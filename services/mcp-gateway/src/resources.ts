/**
 * The platform's resources (the spec's five `platform://` URIs, each `application/json`) and resource templates
 * (`platform://runs/{run_id}`, `platform://interventions/{id}`, `platform://ledger/{date}`).
 * Source: spec §Resources shown; architecture §4 (MCP).
 */
import { NotFoundError } from '@agp/runtime';
import type { ResourceDefinition, ResourceTemplateDefinition } from './registry.js';
import { exportLedger, EXPORT_LEDGER_INLINE_ROWS } from './tools.js';
import { complianceSummary, dashboardStats } from './views.js';

/** The fixed-URI resources. */
export const PLATFORM_RESOURCES: readonly ResourceDefinition[] = [
  {
    uri: 'platform://runs/latest',
    name: 'Latest run',
    description:
      'The most recent production run ({run: null} when there is none) with its status, cost (USD), duration (ms) and its first 1000 ledger entries. Runs an eval harness recorded are left out: list_runs with purpose eval lists them.',
    calls: ['runs.list', 'runs.get'],
    read: async (e) => {
      const page = await e.ask('runs.list', { query: { limit: 1 } });
      const latest = page.runs[0];
      return { run: latest ? await e.ask('runs.get', { path: { id: latest.id }, query: {} }) : null };
    },
  },
  {
    uri: 'platform://approvals/pending',
    name: 'Pending approvals',
    description: 'Escalated actions waiting for a human decision, newest first (up to 200), with the total pending.',
    calls: ['approvals.list'],
    read: async (e) => {
      const page = await e.ask('approvals.list', { query: { status: 'pending', limit: 200 } });
      return { approvals: page.approvals, total: page.total };
    },
  },
  {
    uri: 'platform://stats/dashboard',
    name: 'Dashboard statistics',
    description:
      'total_runs, total_actions, total_cost_usd (USD; per action the actual cost where reported, else the estimate), success_rate (fraction 0..1), pending_approvals and interventions_24h, of production data: what eval harnesses recorded is left out (get_dashboard_stats with purpose eval or all counts it).',
    calls: ['stats.summary', 'approvals.list', 'interventions.list'],
    read: (e) => dashboardStats(e),
  },
  {
    uri: 'platform://policies/active',
    name: 'Active policies',
    description: 'The enabled policies (up to 1000), newest first, with the total.',
    calls: ['policies.list'],
    read: async (e) => {
      const page = await e.ask('policies.list', { query: { enabled: 'true', limit: 1000 } });
      return { policies: page.policies, total: page.total };
    },
  },
  {
    uri: 'platform://compliance/summary',
    name: 'Compliance summary',
    description:
      'Compliance overview: active policies, kill-switch state, the approval backlog and its oldest item, expired approvals, high-risk blocks in the last 24 h and 7 days, enrichment coverage, and findings that need attention.',
    calls: ['policies.list', 'kill-switches.list', 'approvals.list', 'interventions.list', 'interventions.enrichment-coverage'],
    read: (e) => complianceSummary(e),
  },
];

/** A UTC calendar date, `YYYY-MM-DD`, that exists. */
function isCalendarDate(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s);
}

/** The resource templates. */
export const PLATFORM_RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition[] = [
  {
    uriTemplate: 'platform://runs/{run_id}',
    name: 'Run',
    description: 'One run with its status, cost (USD), duration (ms) and its first 1000 ledger entries.',
    calls: ['runs.get'],
    read: (e, { run_id }) => e.ask('runs.get', { path: { id: run_id }, query: {} }),
  },
  {
    uriTemplate: 'platform://interventions/{id}',
    name: 'Intervention',
    description: 'One intervention with its guardrail context, inputs, enrichment status and audit trail.',
    calls: ['interventions.get'],
    read: (e, { id }) => e.ask('interventions.get', { path: { id } }),
  },
  {
    uriTemplate: 'platform://ledger/{date}',
    name: 'Ledger snapshot of a day',
    description: `The ledger entries of one UTC day (date as YYYY-MM-DD), oldest first: inline up to ${EXPORT_LEDGER_INLINE_ROWS}, else a download URL.`,
    calls: ['ledger.export-page'],
    read: async (e, { date }) => {
      if (!isCalendarDate(date)) throw new NotFoundError(`no ledger snapshot ${date}: the date must be a calendar date, YYYY-MM-DD`);
      return { date, ...(await exportLedger(e, { format: 'json', start_date: date, end_date: date })) };
    },
  },
];

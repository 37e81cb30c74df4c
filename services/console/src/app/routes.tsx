/**
 * The console's routes: the pages of docs/console.md (the navigation lists them in this order) and their sub-paths.
 * Every page is its own lazily loaded chunk, so the initial bundle holds only the shell. The gateway serves
 * index.html for exactly these paths (services/gateway/src/console.ts, CONSOLE_ROUTE_PREFIXES); `/mcp` has no
 * sub-paths because `/mcp/*` is the API (the MCP page keeps its state in search parameters).
 */
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/** One page: where it lives, its navigation label, and its lazily loaded component. */
export interface PageRoute {
  /** The route pattern (react-router syntax: `:id` parameters, `*` for any sub-path). */
  path: string;
  /** Label in the navigation; routes without one (detail views) are not listed there. */
  nav?: string;
  component: LazyExoticComponent<ComponentType>;
}

/** `lazy` for a module that exports the page as a named export. */
function page<M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string): LazyExoticComponent<ComponentType> {
  return lazy(async () => ({ default: (await load())[name] as ComponentType }));
}

const Overview = page(() => import('../pages/overview/OverviewPage.js'), 'OverviewPage');
const Interventions = page(() => import('../pages/interventions/InterventionsPage.js'), 'InterventionsPage');
const InterventionDetail = page(() => import('../pages/interventions/InterventionDetailPage.js'), 'InterventionDetailPage');
const Approvals = page(() => import('../pages/approvals/ApprovalsPage.js'), 'ApprovalsPage');
const Policies = page(() => import('../pages/policies/PoliciesPage.js'), 'PoliciesPage');
const PolicyDetail = page(() => import('../pages/policies/PolicyDetailPage.js'), 'PolicyDetailPage');
const Runs = page(() => import('../pages/runs/RunsPage.js'), 'RunsPage');
const RunDetail = page(() => import('../pages/runs/RunDetailPage.js'), 'RunDetailPage');
const Evals = page(() => import('../pages/evals/EvalsPage.js'), 'EvalsPage');
const Benchmarks = page(() => import('../pages/evals/BenchmarksPage.js'), 'BenchmarksPage');
const Mcp = page(() => import('../pages/mcp/McpPage.js'), 'McpPage');
const Replay = page(() => import('../pages/replay/ReplayPage.js'), 'ReplayPage');
const AuditLog = page(() => import('../pages/audit-log/AuditLogPage.js'), 'AuditLogPage');
const AuditTrail = page(() => import('../pages/audit-trail/AuditTrailPage.js'), 'AuditTrailPage');
const Webhooks = page(() => import('../pages/webhooks/WebhooksPage.js'), 'WebhooksPage');

/** Every route, navigation entries first in display order. */
export const ROUTES: PageRoute[] = [
  { path: '/', nav: 'Overview', component: Overview },
  { path: '/interventions', nav: 'Interventions', component: Interventions },
  { path: '/approvals', nav: 'Approvals', component: Approvals },
  { path: '/policies', nav: 'Policies', component: Policies },
  { path: '/runs', nav: 'Runs', component: Runs },
  { path: '/evals', nav: 'Evals', component: Evals },
  { path: '/evals/benchmarks', nav: 'Benchmarks', component: Benchmarks },
  { path: '/mcp', nav: 'Tool gateway', component: Mcp },
  { path: '/replay', nav: 'Replay', component: Replay },
  { path: '/audit-log', nav: 'Audit log', component: AuditLog },
  { path: '/audit-trail', nav: 'Audit trail', component: AuditTrail },
  { path: '/webhooks', nav: 'Webhooks', component: Webhooks },
  { path: '/interventions/:id', component: InterventionDetail },
  { path: '/policies/:id', component: PolicyDetail },
  { path: '/runs/:id', component: RunDetail },
  // Sub-paths of the evals and replay pages (e.g. /evals/<id>, /replay/<run id>) reach their page, which reads
  // `useParams()['*']`; /evals/benchmarks, listed above, wins over /evals/*.
  { path: '/evals/*', component: Evals },
  { path: '/replay/*', component: Replay },
];

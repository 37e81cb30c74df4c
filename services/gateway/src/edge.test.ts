import { describe, expect, it } from 'vitest';
import { routeLabel } from './edge.js';

describe('routeLabel', () => {
  it.each([
    ['/api/v1/interventions', '/api/v1/interventions'],
    ['/api/v1/interventions/stats/', '/api/v1/interventions/stats'],
    ['/api/v1/interventions/0190abcd', '/api/v1/interventions/{id}'],
    ['/api/v1/interventions/0190abcd/enrich', '/api/v1/interventions/{id}/enrich'],
    ['/api/v1/approvals/apr-1/approve', '/api/v1/approvals/{id}/approve'],
    ['/api/v1/policies/p1/history', '/api/v1/policies/{id}/history'],
    ['/api/v1/agents/billing-agent-3/stats', '/api/v1/agents/{id}/stats'],
    ['/api/v1/runs/run-42', '/api/v1/runs/{id}'],
    ['/api/v1/kill-switches/agents/a.b', '/api/v1/kill-switches/agents/{id}'],
    ['/api/v1/stats/daily', '/api/v1/stats/daily'],
    ['/docs/assets/x.css', '/docs'],
  ])('%s -> %s', (path, label) => {
    expect(routeLabel(path)).toBe(label);
  });
});

import type { RequestContext } from '@agp/runtime';
import type { InterventionsDeps } from '../service.js';

/**
 * The approval inbox: an escalated intervention opens approval `apr-<intervention id>`; approving or
 * rejecting appends InterventionOutcomeChanged to the intervention's stream. Source: issue #3 point 3;
 * ARCHITECTURE.md §4 (Approvals).
 */
export class Approvals {
  constructor(private readonly deps: InterventionsDeps) {}

  /** Create tables, start the approvals projection and the expiry sweeper. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  /** GET /api/v1/approvals. */
  async list(_ctx: RequestContext, _query: unknown): Promise<unknown> {
    throw new Error('approvals: not built yet');
  }

  /** GET /api/v1/approvals/{id}. */
  async get(_ctx: RequestContext, _body: unknown): Promise<unknown> {
    throw new Error('approvals: not built yet');
  }

  /** POST /api/v1/approvals/{id}/approve and /reject. */
  async decide(_ctx: RequestContext, _body: unknown, _decision: 'approve' | 'reject'): Promise<unknown> {
    throw new Error('approvals: not built yet');
  }
}

/**
 * Escalation: an action whose decision is `escalate` waits for a human. The escalated intervention is recorded
 * synchronously through `POST /api/v1/interventions` (its id names the approval, `apr-<intervention id>`), then the
 * approval is awaited: the push channel's `approval.decided` wakes the wait at once, and the approval is read
 * (`GET /api/v1/approvals/{id}`) every `approvalPollMs` as the fallback (at most every 5 s after the first minute).
 * An approval is bound to the call's arguments: approved with other arguments is a `mismatch`, never a run.
 * Once approved, the snapshot is refreshed (unless the live channel vouches for it), so the caller decides again
 * against current kill switches and policies. Source: docs/sdk.md §Approvals.
 */
import { approvalId as approvalIdOf, type ApprovalRecord } from '@agp/contracts';
import { AgpHttpError, AgpNetworkError, type AgpClient } from './http.js';
import type { ApprovalDecided } from './channel.js';
import type { ApprovalEnd } from './errors.js';
import { argumentsHash } from './hash.js';
import type { SnapshotSource } from './snapshot.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a wait for an approval ended: approved (with arguments hashing as the call's), or not, with the record when one was read. */
export type ApprovalOutcome = { approved: true; record: ApprovalRecord } | { approved: false; status: ApprovalEnd; record?: ApprovalRecord };

/** Approval decisions heard on the channel that are remembered, so one heard before its wait began counts. */
const DECIDED_KEPT = 1000;


/** See the module docs. One per governor. */
export class Escalations {
  /** Escalations waiting for their approval, by approval id: wakes the wait. */
  private readonly waiters = new Map<string, () => void>();
  /** Approval decisions heard on the channel (the last {@link DECIDED_KEPT}). */
  private readonly decided = new Map<string, ApprovalDecided>();

  constructor(
    private readonly client: Pick<AgpClient, 'createIntervention' | 'getApproval'>,
    private readonly snapshot: Pick<SnapshotSource, 'ageMs' | 'refresh'>,
    /** The fallback poll of a waiting approval, ms. */
    private readonly approvalPollMs: number,
  ) {}

  /** An `approval.decided` event of the push channel: remember it and wake its escalation. */
  approvalDecided(a: ApprovalDecided): void {
    this.decided.set(a.approval_id, a);
    if (this.decided.size > DECIDED_KEPT) this.decided.delete(this.decided.keys().next().value as string);
    this.waiters.get(a.approval_id)?.();
  }

  /** Wake every wait (the governor is closing). */
  close(): void {
    for (const wake of this.waiters.values()) wake();
    this.waiters.clear();
  }

  /**
   * Record the escalated intervention `body` through the synchronous API, retrying transient failures (network, 429,
   * 5xx) until `deadline` (ms since the epoch). Resolves with the approval id, or null when the deadline passed.
   * @throws AgpHttpError for an answer that is not transient (e.g. 422, 403).
   */
  async open(body: Record<string, unknown>, deadline: number): Promise<string | null> {
    while (Date.now() < deadline) {
      try {
        const rec = await this.client.createIntervention(body as Parameters<AgpClient['createIntervention']>[0]);
        return approvalIdOf(rec.id);
      } catch (err) {
        const transient = err instanceof AgpNetworkError || (err instanceof AgpHttpError && (err.status === 429 || err.status >= 500));
        if (!transient) throw err;
        await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
      }
    }
    return null;
  }

  /**
   * Wait until approval `approvalId` is decided or `deadline` (ms since the epoch) passes. `argsHash` is the hash of
   * the call's arguments: an approval whose `original_inputs` hash otherwise ends as `mismatch`.
   * @throws AgpHttpError for an answer of the approvals route that is neither transient nor a 404 (not projected yet).
   */
  async await(approvalId: string, argsHash: string, deadline: number): Promise<ApprovalOutcome> {
    const started = Date.now();
    let heard: ApprovalDecided | null = null;
    let heardAt = 0;
    while (Date.now() < deadline) {
      let a: ApprovalRecord | null = null;
      try {
        a = await this.client.getApproval(approvalId);
      } catch (err) {
        // 404 until the escalation is projected; network errors while the platform is away: keep waiting.
        if (!(err instanceof AgpNetworkError || (err instanceof AgpHttpError && (err.status === 404 || err.status === 429 || err.status >= 500)))) throw err;
      }
      if (a && a.status === 'approved') {
        if (!a.original_inputs || argumentsHash(a.original_inputs) !== argsHash) return { approved: false, status: 'mismatch', record: a };
        // The push channel keeps the snapshot current while it is live; else refresh it (a 304 when unchanged).
        if (this.snapshot.ageMs() !== 0) await Promise.race([this.snapshot.refresh(), sleep(2000)]);
        return { approved: true, record: a };
      }
      if (a && (a.status === 'rejected' || a.status === 'expired')) return { approved: false, status: a.status, record: a };
      // The channel said it is decided but the approval does not show it yet (read model catching up): ask again soon.
      const left = Math.max(0, deadline - Date.now());
      const waited = Date.now() - started;
      const interval = waited < 60_000 ? this.approvalPollMs : Math.max(this.approvalPollMs, 5000);
      if (heard) {
        await sleep(Math.min(Date.now() - heardAt < 5000 ? 50 : interval, left));
        continue;
      }
      heard = await this.wait(approvalId, Math.min(interval, left));
      if (heard) heardAt = Date.now();
    }
    return { approved: false, status: 'timeout' };
  }

  /**
   * Wait up to `ms` for approval `id` to be decided: resolves with the decision heard on the push channel, or null
   * when the time passed (the caller then reads the approval: the fallback).
   */
  private wait(id: string, ms: number): Promise<ApprovalDecided | null> {
    const known = this.decided.get(id);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(id);
        resolve(this.decided.get(id) ?? null);
      };
      const t = setTimeout(done, ms);
      this.waiters.set(id, done);
    });
  }
}

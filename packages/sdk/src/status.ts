/** Reporting counters, as `gov.status().reports` shows them. Source: docs/sdk.md §Reporting. */

/** Counters of the reporter, for `gov.status()`. */
export interface ReporterStats {
  /** Reports waiting for the platform's acknowledgement. */
  pending: number;
  /** Reports acknowledged by the platform (created or duplicate) since connect. */
  delivered: number;
  /** Reports the platform refused for good (set aside, see `rejected.jsonl`). */
  rejected: number;
  /** Reports recovered from the spool at connect (left by an earlier process). */
  recovered: number;
  /** Actions that waited for room in the spool (backpressure) since connect. */
  waited: number;
  /** Why the last attempt to send failed, null after a success. */
  last_error: string | null;
}

/**
 * The channel's state, as `gov.status().channel` reports it:
 * - `connecting`: the first connection is being opened;
 * - `connected`: the stream is live; the snapshot is pushed, not polled;
 * - `reconnecting`: the stream dropped; it reconnects with back-off while the snapshot is polled;
 * - `polling`: three connections in a row failed before `ready` (or the platform has no push channel): the snapshot
 *   is polled, and a connection is still retried with back-off (up to every 30 s);
 * - `closed`: `close()` was called.
 */
export type ChannelState = 'connecting' | 'connected' | 'reconnecting' | 'polling' | 'closed';

/**
 * One lease of a fleet-wide limit the governor holds, as `gov.status().leases` shows it (docs/sdk.md §Fleet-wide
 * limits): the policy and limit (`session_budget`, `run_budget`, `period_budget:<scope>:<period>`,
 * `rate_limit:<action or *>`), the counter's scope key (run or session id, agent id, or the organisation's id), what
 * the lease holds and what this process spent of it (USD for budgets, calls for rate limits; spent may pass held when
 * an actual cost passed its estimate), and when it lapses without renewal (ISO 8601 UTC).
 */
export interface LeaseStatus {
  policy_id: string;
  limit: string;
  scope_key: string;
  held: number;
  spent: number;
  expires_at: string;
}

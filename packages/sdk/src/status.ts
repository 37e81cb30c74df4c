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
  /** Why the last attempt to send failed, null after a success. */
  last_error: string | null;
}

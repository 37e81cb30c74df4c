/**
 * Which version of a policy was in force at an instant. Source: docs/decisions.md (Replay
 * submissions, bundles and analysis: the bundle holds the policy versions in force when the run ran).
 */

/** One entry of a policy's history as `policies.history` answers it: the stream version and its time (ISO 8601). */
export interface PolicyVersionAt {
  version: number;
  at: string;
}

/**
 * The version of a policy in force at `instant` (ISO 8601): the highest version whose history time is at or before
 * it, or null when the policy did not exist yet (its first version is later). Entries may come in any order. Pure.
 * @param instant the run's `started_at`.
 */
export function policyVersionAt(history: readonly PolicyVersionAt[], instant: string): number | null {
  const t = Date.parse(instant);
  let best: number | null = null;
  for (const h of history) if (Date.parse(h.at) <= t && (best === null || h.version > best)) best = h.version;
  return best;
}

/**
 * The replay-submission aggregate: its stream, its one event (`ReplaySubmitted`) and the pure decision of a
 * submission. A submission is written once and never changes, so its state is the event's data.
 * Source: architecture §3, §4 (Replay submission).
 */
import { ReplayEvents, type ReplaySubmissionDetail, type SubmitReplay } from '@agp/contracts';
import { deterministicId } from '@agp/runtime';

/**
 * Stream id of a submission: `replay-<deterministicId(org, id)>`. Submission ids are the client's when it sends one
 * (opaque, scoped by organisation), so the stream is found from the submission alone: that is how the same
 * submission id is stored once.
 */
export const replayStream = (org: string, id: string) => `replay-${deterministicId(org, id)}`;

/** Event id of a submission's ReplaySubmitted: derived from the organisation and the id, so a repeated append is a no-op. */
export const replayEventId = (org: string, id: string) => deterministicId(org, 'replay', id);

/** What a submission is decided with besides its body. */
export interface SubmitMeta {
  /** The submission id (`body.id`), or the UUIDv7 the platform issued. */
  id: string;
  /** The replayed run (the route's `{run_id}`; the caller checked it exists in the organisation). */
  run_id: string;
  /** Time of the submission, ISO 8601 UTC: its `submitted_at`. */
  now: string;
}

/** The decided event. */
export interface ReplaySubmitted {
  type: typeof ReplayEvents.Submitted;
  data: ReplaySubmissionDetail;
}

/**
 * Decide a submission: the submission as it will be stored and returned, its times normalised to UTC ISO 8601 and
 * `duration_ms` defaulted to completed_at − started_at (ms). Pure; the body's rules were checked by
 * `SubmitReplaySchema` (architecture §4).
 */
export function decideSubmit(input: SubmitReplay, meta: SubmitMeta): ReplaySubmitted {
  const started = Date.parse(input.started_at);
  const completed = Date.parse(input.completed_at);
  return {
    type: ReplayEvents.Submitted,
    data: {
      id: meta.id,
      run_id: meta.run_id,
      actions_replayed: input.actions_replayed,
      divergences: input.divergences,
      cost_savings: input.cost_savings,
      status: input.status,
      started_at: new Date(started).toISOString(),
      completed_at: new Date(completed).toISOString(),
      duration_ms: input.duration_ms ?? completed - started,
      client_version: input.client_version,
      submitted_at: meta.now,
      divergence_details_count: input.divergence_details.length,
      divergence_details: input.divergence_details.map((d) => ({ step: d.step, action_name: d.action_name, expected: d.expected ?? null, actual: d.actual ?? null })),
    },
  };
}

/** Apply one event: the first ReplaySubmitted is the submission (it never changes); other types are ignored. Pure. */
export function evolveSubmission(state: ReplaySubmissionDetail | null, event: { type: string; data: unknown }): ReplaySubmissionDetail | null {
  return state ?? (event.type === ReplayEvents.Submitted ? (event.data as ReplaySubmissionDetail) : null);
}

/** The submission of a stream's events, or null when the stream has none. */
export function foldSubmission(events: ReadonlyArray<{ type: string; data: unknown }>): ReplaySubmissionDetail | null {
  return events.reduce<ReplaySubmissionDetail | null>(evolveSubmission, null);
}

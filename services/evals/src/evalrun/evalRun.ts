/**
 * The eval-run aggregate: its stream, its one event (`EvalRunSubmitted`) and the pure decision of a submission. A run
 * is written once and never changes, so its state is the event's data. Source: architecture §3,
 * §4 (Eval run).
 */
import { EVAL_MAX_REPLY_BYTES, EvalRunEvents, evalRunOf, type EvalRunDetail, type EvalScenario, type SubmitEvalRun } from '@agp/contracts';
import { PayloadTooLargeError, deterministicId } from '@agp/runtime';

/**
 * Stream id of an eval run: `evalrun-<deterministicId(org, id)>`. Run ids are the client's submission ids when it
 * sends one (opaque, scoped by organisation), so the stream is found from the submission alone: that is how the same
 * submission id is stored once.
 */
export const evalRunStream = (org: string, id: string) => `evalrun-${deterministicId(org, id)}`;

/** Event id of a run's EvalRunSubmitted: derived from the organisation and the run id, so a repeated append is a no-op. */
export const evalRunEventId = (org: string, id: string) => deterministicId(org, 'evalrun', id);

/** What a submission is decided with besides its body: the run id, the caller's organisation, the time, the CI baseline. */
export interface SubmitMeta {
  /** The submission id (`body.id`), or the UUIDv7 the platform issued. */
  id: string;
  organization_id: string;
  /** Time of the submission, ISO 8601 UTC: the run's `created_at`. */
  now: string;
  /** The latest run of the same suite and agent on the default branch (regressions are counted against it), or null. */
  baseline: { id: string; scenarios: readonly EvalScenario[] } | null;
}

/** The decided event. */
export interface EvalRunSubmitted {
  type: typeof EvalRunEvents.Submitted;
  data: EvalRunDetail;
}

/**
 * Decide a submission: the run as it will be stored and returned (`evalRunOf`: every scenario default applied, its
 * times in UTC, its summary computed against the baseline; architecture §4). Pure.
 * @param input the body as `SubmitEvalRunSchema` parsed it (defaults applied, scenario names unique).
 * @throws PayloadTooLargeError (413) when the stored run's JSON would be over {@link EVAL_MAX_REPLY_BYTES} (defaults
 *   filled in, a body under the 900 KiB limit can grow past what one answer may carry); nothing is stored then.
 */
export function decideSubmit(input: SubmitEvalRun, meta: SubmitMeta): EvalRunSubmitted {
  const run = evalRunOf(input, { id: meta.id, organization_id: meta.organization_id, created_at: meta.now, baseline: meta.baseline });
  const bytes = Buffer.byteLength(JSON.stringify(run));
  if (bytes > EVAL_MAX_REPLY_BYTES) {
    throw new PayloadTooLargeError(
      `the run's scorecard would be ${bytes} bytes with every scenario default filled in; at most ${EVAL_MAX_REPLY_BYTES} bytes fit one answer: send fewer or shorter scenarios`,
    );
  }
  return { type: EvalRunEvents.Submitted, data: run };
}

/** Apply one event to a run: the first EvalRunSubmitted is the run (a run never changes); other types are ignored. Pure. */
export function evolveEvalRun(state: EvalRunDetail | null, event: { type: string; data: unknown }): EvalRunDetail | null {
  return state ?? (event.type === EvalRunEvents.Submitted ? (event.data as EvalRunDetail) : null);
}

/** The run of a stream's events, or null when the stream has none. */
export function foldEvalRun(events: ReadonlyArray<{ type: string; data: unknown }>): EvalRunDetail | null {
  return events.reduce<EvalRunDetail | null>(evolveEvalRun, null);
}

/**
 * Replay: what a client submits after replaying a recorded run locally, the organisation's replay history with its
 * aggregates, the run bundle a client downloads to replay a run, and the divergence analysis of a run.
 *
 * Definitions (architecture §4, Replay submission):
 * - A submission summarises one local replay of one run: `actions_replayed`, `divergences` (actions whose output
 *   differed), `cost_savings` (USD not spent by replaying instead of re-executing), `status`, its timings, the client
 *   version, and `divergence_details` (one entry per divergent step, at most `divergences` of them).
 * - `status`: `completed` (no divergence), `partial` (some actions replayed cleanly, others diverged), `diverged` (none
 *   replayed cleanly), `failed` (the replay broke). The counts must agree: `completed` has 0 divergences, `partial`
 *   and `diverged` at least 1; `failed` any.
 * - Aggregates (the replay page): submissions count, Σ actions_replayed, Σ divergences, `cost_saved_usd` = Σ
 *   cost_savings (USD).
 * Source: spec §Replay submission, §Replay history, §Limits; architecture §4 (Replay submission); docs/replay.md.
 */
import { z } from 'zod';
import { canonicalJson } from './canonical.js';
import { DateFilterSchema, DateTimeSchema, OpaqueIdSchema, UsdSchema, paginationShape } from './common.js';
import { PolicyDecisionKindSchema, type PolicyDecisionKind } from './decision.js';
import { InterventionRecordSchema } from './intervention.js';
import { PurposeListSchema } from './purpose.js';
import { CreatePolicySchema, PolicySchema, UpdatePolicySchema } from './policy.js';
import { LedgerEntrySchema, RunSchema } from './stats.js';

/** Replay statuses (architecture §4). */
export const REPLAY_STATUSES = ['completed', 'partial', 'diverged', 'failed'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];
/** Most divergence details one submission may carry. */
export const REPLAY_MAX_DETAILS = 10_000;
/** Largest submission body the gateway accepts, in bytes (413 above): a submission travels as one bus message (≤ 1 MiB). */
export const REPLAY_MAX_BODY_BYTES = 900 * 1024;
/** Page maximum of the replay history (spec §Limits: 200). */
export const REPLAY_HISTORY_MAX_LIMIT = 200;
/** Version of the run bundle's format; bumped on any incompatible change. */
export const REPLAY_BUNDLE_VERSION = 1;

/** A count of actions: an integer ≥ 0. */
const CountSchema = z.number().int('expected an integer').min(0, 'must be 0 or more').max(1e9);

/** One divergent step: its position in the run (0-based, the action's index in the bundle), the action, and what was recorded vs replayed. */
export const DivergenceDetailSchema = z.strictObject({
  /** Index of the action in the run's actions, oldest first, from 0. */
  step: CountSchema,
  action_name: z.string().min(1).max(256),
  /** The recorded output (any JSON). */
  expected: z.unknown(),
  /** The output of the local replay (any JSON). */
  actual: z.unknown(),
});
export type DivergenceDetail = z.infer<typeof DivergenceDetailSchema>;

/**
 * Body of `POST /api/v1/replay/{run_id}/results`. `id` is the submission id, an idempotency key: the same id sent
 * again stores nothing and answers the submission stored first (absent, the platform issues one). Rules beyond the
 * field types, each a 422 naming its field: `divergences` ≤ `actions_replayed` (`body.divergences`);
 * `completed_at` ≥ `started_at` (`body.completed_at`); at most `divergences` entries in `divergence_details`
 * (`body.divergence_details`); the status agrees with the counts (`body.status`, see the file's definitions).
 * `duration_ms` defaults to completed_at − started_at.
 */
export const SubmitReplaySchema = z
  .strictObject({
    id: OpaqueIdSchema.optional(),
    actions_replayed: CountSchema,
    divergences: CountSchema,
    /** USD saved by replaying instead of re-executing. */
    cost_savings: UsdSchema,
    status: z.enum(REPLAY_STATUSES),
    started_at: DateTimeSchema,
    completed_at: DateTimeSchema,
    /** Wall time of the replay, ms. @default completed_at − started_at */
    duration_ms: z.number().finite().min(0).max(31 * 86_400_000).optional(),
    client_version: z.string().min(1).max(128),
    divergence_details: z.array(DivergenceDetailSchema).max(REPLAY_MAX_DETAILS, `at most ${REPLAY_MAX_DETAILS} divergence details`).default([]),
  })
  .superRefine((s, ctx) => {
    if (s.divergences > s.actions_replayed) ctx.addIssue({ code: 'custom', path: ['divergences'], message: 'must not be more than actions_replayed' });
    if (Date.parse(s.completed_at) < Date.parse(s.started_at)) ctx.addIssue({ code: 'custom', path: ['completed_at'], message: 'must not be before started_at' });
    if (s.divergence_details.length > s.divergences) ctx.addIssue({ code: 'custom', path: ['divergence_details'], message: 'must not hold more entries than divergences' });
    if (s.status === 'completed' && s.divergences > 0) ctx.addIssue({ code: 'custom', path: ['status'], message: 'completed means no divergence: use partial or diverged' });
    if ((s.status === 'partial' || s.status === 'diverged') && s.divergences === 0) ctx.addIssue({ code: 'custom', path: ['status'], message: `${s.status} needs at least one divergence` });
  });
export type SubmitReplay = z.output<typeof SubmitReplaySchema>;

/** A stored submission as the history lists it (without its divergence details). Times ISO 8601 UTC. */
export const ReplaySubmissionSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  actions_replayed: z.number().int(),
  divergences: z.number().int(),
  cost_savings: z.number(),
  status: z.enum(REPLAY_STATUSES),
  started_at: z.string(),
  completed_at: z.string(),
  duration_ms: z.number(),
  client_version: z.string(),
  /** When the platform stored it: the history's order. */
  submitted_at: z.string(),
  /** How many divergence details it carries. */
  divergence_details_count: z.number().int(),
});
export type ReplaySubmission = z.infer<typeof ReplaySubmissionSchema>;

/** A submission with its divergence details (the answer of a submission, and the event's data). */
export const ReplaySubmissionDetailSchema = ReplaySubmissionSchema.extend({ divergence_details: z.array(DivergenceDetailSchema) });
export type ReplaySubmissionDetail = z.infer<typeof ReplaySubmissionDetailSchema>;

/** Domain events of a submission's stream (`replay-<deterministicId(organisation, submission id)>`). Source: docs/decisions.md (Replay submissions, bundles and analysis). */
export const ReplayEvents = { Submitted: 'ReplaySubmitted' } as const;
/** Data of ReplaySubmitted, the one event of a submission's stream: the submission exactly as the API returns it. */
export type ReplaySubmittedData = ReplaySubmissionDetail;

/** The replay page's aggregates over a set of submissions. `cost_saved_usd` = Σ cost_savings, USD. */
export const ReplayAggregatesSchema = z.object({
  submissions: z.number().int(),
  actions_replayed: z.number().int(),
  divergences: z.number().int(),
  cost_saved_usd: z.number(),
});
export type ReplayAggregates = z.infer<typeof ReplayAggregatesSchema>;

/** Query of the replay history: `skip` (default 0) and `limit` (default 50, at most 200; spec §Limits). */
export const ReplayHistoryQuerySchema = z.strictObject({ ...paginationShape(50, REPLAY_HISTORY_MAX_LIMIT) });
export type ReplayHistoryQuery = z.infer<typeof ReplayHistoryQuerySchema>;

/** A page of the history, newest first, with the aggregates over all of its submissions (not just the page). */
export const ReplayHistoryPageSchema = z.object({
  submissions: z.array(ReplaySubmissionSchema),
  total: z.number().int(),
  skip: z.number().int(),
  limit: z.number().int(),
  aggregates: ReplayAggregatesSchema,
});
export type ReplayHistoryPage = z.infer<typeof ReplayHistoryPageSchema>;

/**
 * A page of one run's history (`GET /api/v1/replay/history/{run_id}`), newest first: as {@link ReplayHistoryPageSchema},
 * but each submission carries its `divergence_details`, so a user can read what diverged.
 */
export const ReplayRunHistoryPageSchema = ReplayHistoryPageSchema.extend({ submissions: z.array(ReplaySubmissionDetailSchema) });
export type ReplayRunHistoryPage = z.infer<typeof ReplayRunHistoryPageSchema>;

/** A policy as it stood when the run started (see {@link ReplayBundleSchema}). */
export const BundlePolicySchema = PolicySchema;

/**
 * The run bundle, `GET /api/v1/replay/{run_id}/bundle`: everything a client needs to replay a run locally.
 * - `run`: the run (its totals; `action_count` counts `actions`).
 * - `actions`: every ledger entry of the run, oldest first (the order of `runs.get`), with inputs, outputs and costs;
 *   a divergence's `step` is an index into it.
 * - `interventions`: every live intervention recorded with this run id, oldest first.
 * - `policies`: the policy versions in force when the run started: for each policy of the organisation, the latest
 *   version whose history time is at or before the run's `started_at` (a policy created after that is left out; a run
 *   without `started_at` gets each policy's current version). Deleted policies are not listed (the platform keeps none).
 * - `sha256`: see {@link bundleHashInput}.
 */
export const ReplayBundleSchema = z.object({
  bundle_version: z.literal(REPLAY_BUNDLE_VERSION),
  /** When the platform assembled it, ISO 8601 UTC; outside the hash. */
  generated_at: z.string(),
  run: RunSchema,
  actions: z.array(LedgerEntrySchema),
  interventions: z.array(InterventionRecordSchema),
  policies: z.array(BundlePolicySchema),
  /** Hex SHA-256 of {@link bundleHashInput} of this document. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ReplayBundle = z.infer<typeof ReplayBundleSchema>;

/**
 * Most bytes of JSON one part of a bundle's actions (`replay.bundle-part`) carries: a bus message holds at most 1 MiB,
 * envelope included. A part holds at least one action, so one action larger than this (an event is at most 900 KiB)
 * travels alone.
 */
export const REPLAY_BUNDLE_PART_BYTES = 768 * 1024;

/**
 * What the replay service answers on `replay.bundle`: the bundle without its actions, with its `sha256` (the ETag)
 * and how its actions are split. The replay service assembles the whole bundle (it pages the run's actions from the
 * stats service) and hashes it; since a run's actions may exceed one bus message (1 MiB), the caller then fetches
 * the actions as `parts` parts, in order, with `replay.bundle-part` naming this `sha256`.
 * - `actions_total`: how many actions the bundle holds (Σ of the parts).
 * - `parts`: how many parts to fetch (0 for a run without actions).
 */
export const ReplayBundleHeadSchema = ReplayBundleSchema.omit({ actions: true }).extend({
  actions_total: z.number().int().min(0),
  parts: z.number().int().min(0),
});
export type ReplayBundleHead = z.infer<typeof ReplayBundleHeadSchema>;

/**
 * Request query of `replay.bundle-part`: the bundle's `sha256` (from `replay.bundle`) and the part's index, from 0.
 * A part of a bundle the replay service no longer holds is assembled again; if the run changed since (another
 * hash), the answer is 409 and the caller starts over.
 */
export const ReplayBundlePartQuerySchema = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected the 64 hex digits of the bundle\'s sha256'),
  part: z.coerce.number().int('expected an integer').min(0, 'must be 0 or more'),
});
export type ReplayBundlePartQuery = z.infer<typeof ReplayBundlePartQuerySchema>;

/** One part of a bundle's actions, in bundle order: part `n` continues where part `n − 1` ended. */
export const ReplayBundlePartSchema = z.object({ actions: z.array(LedgerEntrySchema) });
export type ReplayBundlePart = z.infer<typeof ReplayBundlePartSchema>;

/**
 * The text a bundle's `sha256` (and its ETag) hashes: {@link canonicalJson} of the document without `sha256` and
 * without `generated_at` (so the same run, interventions and policies always hash the same, and If-None-Match works).
 * A client verifies a bundle by hashing this text of the document it received (UTF-8) and comparing.
 */
export function bundleHashInput(bundle: Omit<ReplayBundle, 'sha256' | 'generated_at'> & { sha256?: string; generated_at?: string }): string {
  const { sha256: _s, generated_at: _g, ...rest } = bundle;
  return canonicalJson(rest);
}

/** How often one step or action diverged across a run's submissions. `share` = submissions with it ÷ all submissions. */
export const DivergenceCountSchema = z.object({ divergences: z.number().int(), submissions: z.number().int(), share: z.number() });

/** One point of the divergence trend: one submission, oldest first. `rate` = divergences ÷ actions_replayed (null when 0 replayed). */
export const ReplayTrendPointSchema = z.object({
  submission_id: z.string(),
  submitted_at: z.string(),
  status: z.enum(REPLAY_STATUSES),
  actions_replayed: z.number().int(),
  divergences: z.number().int(),
  rate: z.number().nullable(),
});

/** Most steps and actions the analysis lists (the most divergent first), and most trend points (the latest). */
export const REPLAY_ANALYSIS_TOP = 50;
export const REPLAY_ANALYSIS_TREND = 200;

/**
 * `GET /api/v1/replay/{run_id}/analysis`: divergences across every submission of the run.
 * - `divergence_rate` = Σ divergences ÷ Σ actions_replayed (null when nothing was replayed).
 * - `by_step` / `by_action`: from the divergence details, the most divergent first (ties: step ascending, name
 *   ascending), at most {@link REPLAY_ANALYSIS_TOP}; `divergences` counts detail entries, `submissions` the submissions
 *   naming it, `share` that ÷ all submissions.
 * - `trend`: one point per submission in submission order, the latest {@link REPLAY_ANALYSIS_TREND}.
 */
export const ReplayAnalysisSchema = z.object({
  run_id: z.string(),
  aggregates: ReplayAggregatesSchema,
  divergence_rate: z.number().nullable(),
  /** Submissions per status. */
  by_status: z.object({ completed: z.number().int(), partial: z.number().int(), diverged: z.number().int(), failed: z.number().int() }),
  by_step: z.array(DivergenceCountSchema.extend({ step: z.number().int(), action_name: z.string() })),
  by_action: z.array(DivergenceCountSchema.extend({ action_name: z.string() })),
  trend: z.array(ReplayTrendPointSchema),
});
export type ReplayAnalysis = z.infer<typeof ReplayAnalysisSchema>;

// ---------------------------------------------------------------------------------------------------------
// Counterfactual evaluation (docs/replay.md, Counterfactual evaluation)
// ---------------------------------------------------------------------------------------------------------

/** Most run ids `POST /api/v1/replay/evaluate` takes in `run_ids` (more is a 422). */
export const REPLAY_EVALUATE_MAX_RUN_IDS = 100;
/** Most runs one `POST /api/v1/replay/evaluate` evaluates; more matching runs answer `truncated: true`. */
export const REPLAY_EVALUATE_MAX_RUNS = 200;
/**
 * Most steps `POST /api/v1/replay/{run_id}/evaluate` lists (the first ones, so the answer fits one bus message); the
 * totals always cover every step, and `steps_truncated` says when the list was cut.
 */
export const REPLAY_EVALUATE_MAX_STEPS = 2000;

/**
 * A PATCH on an existing policy, evaluated without being stored: `patch` has the semantics of
 * `PATCH /api/v1/policies/{id}` (JSON merge patch; null clears; lists replaced whole).
 */
export const ReplayPolicyPatchSchema = z.strictObject({ policy_id: OpaqueIdSchema, patch: UpdatePolicySchema });
export type ReplayPolicyPatch = z.infer<typeof ReplayPolicyPatchSchema>;

/**
 * The policy set a counterfactual evaluation decides with: today's policies alone (neither field), today's plus
 * `candidate_policy` (a full policy as `POST /api/v1/policies` takes it, not stored), or today's with `policy_patch`
 * merged into the policy it names (not stored). At most one of the two. Either needs a write key (403 otherwise).
 */
const candidateShape = { candidate_policy: CreatePolicySchema.optional(), policy_patch: ReplayPolicyPatchSchema.optional() };
const oneCandidate = (b: { candidate_policy?: unknown; policy_patch?: unknown }) => !(b.candidate_policy !== undefined && b.policy_patch !== undefined);
const ONE_CANDIDATE = { message: 'give candidate_policy or policy_patch, not both', path: ['policy_patch'] };

/** Body of `POST /api/v1/replay/{run_id}/evaluate` (strict; may be empty: today's policies). */
export const EvaluateRunSchema = z.strictObject(candidateShape).refine(oneCandidate, ONE_CANDIDATE);
export type EvaluateRun = z.infer<typeof EvaluateRunSchema>;

/**
 * Body of `POST /api/v1/replay/evaluate`: which runs (filters compose with AND), and the policy set as
 * {@link EvaluateRunSchema}. `start_date` / `end_date` bound the run's `started_at` (`YYYY-MM-DD` or a date-time; a
 * date-only `end_date` includes that whole day, UTC); with either, runs that never started are left out. `run_ids`:
 * at most {@link REPLAY_EVALUATE_MAX_RUN_IDS}. No filter: every production run of the organisation, up to the cap
 * (eval runs only with `purpose`, or named in `run_ids`).
 */
export const EvaluateRunsSchema = z
  .strictObject({
    agent_id: OpaqueIdSchema.optional(),
    start_date: DateFilterSchema.optional(),
    end_date: DateFilterSchema.optional(),
    run_ids: z.array(OpaqueIdSchema).min(1).max(REPLAY_EVALUATE_MAX_RUN_IDS, `at most ${REPLAY_EVALUATE_MAX_RUN_IDS} run ids`).optional(),
    /**
     * Which runs by purpose (`production`, `eval`, several, or `all`). Absent: production runs only, except that runs
     * named in `run_ids` are taken whatever their purpose.
     */
    purpose: PurposeListSchema.optional(),
    ...candidateShape,
  })
  .refine(oneCandidate, ONE_CANDIDATE);
export type EvaluateRuns = z.infer<typeof EvaluateRunsSchema>;

/**
 * One recorded action decided again. `cost_usd` = its actual cost where the provider reported one, else its
 * estimate, else 0 (USD); `recorded_status` as recorded (success, error, blocked); `decision` and the deciding
 * `rule`, `policy_id`, `policy_name` (null when allowed) and `reason` from the policy engine; `prevented_usd` =
 * `cost_usd` when the decision stops the action (block, budget_exceeded, rate_limited), else 0. `step` from 0.
 */
export const CounterfactualStepSchema = z.object({
  step: z.number().int(),
  action_id: z.string(),
  action_name: z.string(),
  timestamp: z.string(),
  cost_usd: z.number(),
  recorded_status: z.enum(['success', 'error', 'blocked']),
  decision: PolicyDecisionKindSchema,
  rule: z.string().nullable(),
  policy_id: z.string().nullable(),
  policy_name: z.string().nullable(),
  reason: z.string(),
  prevented_usd: z.number(),
});
export type CounterfactualStep = z.infer<typeof CounterfactualStepSchema>;

/**
 * Totals of a counterfactual evaluation (USD):
 * - `by_decision`: steps per decision (every decision kind, 0 included);
 * - `prevented_usd` = Σ cost of the steps the policies would now stop;
 * - `actually_spent_usd` = Σ cost of the recorded steps that ran (recorded status success or error; a recorded
 *   `blocked` action never ran);
 * - `would_spend_usd` = Σ cost of the steps the policies would now let through (allow, warn, escalate — an
 *   escalation is counted as approved);
 * - `difference_usd` = would_spend_usd − actually_spent_usd (negative: the policies would have saved that much).
 */
export const CounterfactualTotalsSchema = z.object({
  steps: z.number().int(),
  by_decision: z.object({
    block: z.number().int(),
    pii_blocked: z.number().int(),
    content_blocked: z.number().int(),
    idempotent_replay: z.number().int(),
    escalate: z.number().int(),
    budget_exceeded: z.number().int(),
    rate_limited: z.number().int(),
    loop_detected: z.number().int(),
    downgrade: z.number().int(),
    warn: z.number().int(),
    allow: z.number().int(),
  }) satisfies z.ZodType<Record<PolicyDecisionKind, number>>,
  prevented_usd: z.number(),
  actually_spent_usd: z.number(),
  would_spend_usd: z.number(),
  difference_usd: z.number(),
});
export type CounterfactualTotals = z.infer<typeof CounterfactualTotalsSchema>;

/** Which policies decided: `today` (the enabled ones), `candidate` (plus candidate_policy) or `patch` (policy_patch merged). */
export const CounterfactualPolicySetSchema = z.object({
  source: z.enum(['today', 'candidate', 'patch']),
  /** The policies of the set that apply to the run's agent and are enabled, by id (the candidate's id is `candidate`). */
  policy_ids: z.array(z.string()),
});

/** `POST /api/v1/replay/{run_id}/evaluate`: every step decided again, and the totals. */
export const RunEvaluationSchema = z.object({
  run_id: z.string(),
  agent_id: z.string(),
  evaluated_at: z.string(),
  policy_set: CounterfactualPolicySetSchema,
  steps: z.array(CounterfactualStepSchema),
  steps_truncated: z.boolean(),
  totals: CounterfactualTotalsSchema,
});
export type RunEvaluation = z.infer<typeof RunEvaluationSchema>;

/** `POST /api/v1/replay/evaluate`: one summary per run (newest first, as runs list), the overall totals, and the cap. */
export const RunsEvaluationSchema = z.object({
  evaluated_at: z.string(),
  policy_source: z.enum(['today', 'candidate', 'patch']),
  /** Runs matching the filters (all of them, even past the cap). */
  runs_matched: z.number().int(),
  /** Runs evaluated: at most {@link REPLAY_EVALUATE_MAX_RUNS}. */
  runs_evaluated: z.number().int(),
  /** True when runs_matched > runs_evaluated (the newest runs were evaluated). */
  truncated: z.boolean(),
  runs: z.array(z.object({ run_id: z.string(), agent_id: z.string(), started_at: z.string().nullable(), totals: CounterfactualTotalsSchema })),
  totals: CounterfactualTotalsSchema,
});
export type RunsEvaluation = z.infer<typeof RunsEvaluationSchema>;

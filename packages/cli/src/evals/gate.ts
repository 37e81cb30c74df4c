/**
 * The pure core of `agp evals gate`: build the submission from an imported results file, the flags and the CI
 * context; compute the scorecard and the comparison with the contract's own functions (`summarizeEvalRun`,
 * `compareEvalRuns`: the platform computes the same); and decide the exit code. No I/O. Source: docs/evals-gate.md;
 * spec §Evals rules 1–3; architecture §4 (Eval run).
 */
import {
  EVAL_DEFAULT_THRESHOLD,
  EVAL_MAX_BODY_BYTES,
  SubmitEvalRunSchema,
  compareEvalRuns,
  evalRunOf,
  type EvalComparison,
  type EvalRunDetail,
  type EvalScenario,
  type EvalSummary,
  type SubmitEvalRun,
} from '@agp/contracts';
import { submissionId, type CiContext } from './ci.js';
import { ResultsParseError, jsonPath, type ImportedResults } from './results.js';

/**
 * Exit codes of `agp evals gate` (documented in docs/evals-gate.md and `--help`):
 * 0 pass; 1 block rate below the threshold; 2 regressions against the baseline; 3 usage, parse or upload error.
 * When the block rate is below the threshold *and* there are regressions, the exit code is 1: the threshold is the
 * hard floor, and a job that tolerates regressions (exit 2) must never let a run below it through.
 */
export const GATE_EXIT = { pass: 0, belowThreshold: 1, regressions: 2, error: 3 } as const;
/** One of {@link GATE_EXIT}'s values. */
export type GateExitCode = (typeof GATE_EXIT)[keyof typeof GATE_EXIT];

/** The agent id of a local gate run whose file and flags name no agent (only allowed without upload or `--baseline latest`). */
export const UNNAMED_AGENT = '(unnamed)';

/** A mistake in the command line or its settings (exit 3), e.g. a missing `--agent-id` for an upload. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Run settings from the command line; each one overrides what the results file says. */
export interface GateFlags {
  suite?: string;
  agentId?: string;
  /** Lowest passing block rate, 0..1. @default the file's `threshold`, else 0.9 */
  threshold?: number;
  branch?: string;
  commit?: string;
  /** The branch `--baseline latest` and the platform's CI status compare against. @default the file's, the CI's, else `main` */
  defaultBranch?: string;
  /** The submission id. @default the file's `id`, else derived from the CI job ({@link submissionId}) */
  submissionId?: string;
}

/**
 * The body of `POST /api/v1/evals/` for this gate run, validated with `SubmitEvalRunSchema`. Precedence of each field:
 * the flag, then the results file, then the CI variables (branch, commit, default branch), then the default; the
 * branch falls back last to `opts.gitBranch`, the branch checked out where the gate runs (`gitBranch` in `./git.ts`).
 * @param requireAgent whether an agent id is needed (upload, `--baseline latest`); without one a local run is
 *   filed under {@link UNNAMED_AGENT}.
 * @throws UsageError when an agent id is required but neither the file nor `--agent-id` gives one, or a flag's value
 *   is invalid (named by its flag).
 * @throws ResultsParseError when the file's content is invalid for the submission (named by entry or line).
 */
export function buildSubmission(imported: ImportedResults, flags: GateFlags, ci: CiContext, opts: { file: string; requireAgent: boolean; gitBranch?: string | null; random?: () => string }): SubmitEvalRun {
  const file = imported.run;
  const agent = flags.agentId ?? (typeof file.agent_id === 'string' ? file.agent_id : undefined);
  if (!agent && opts.requireAgent) throw new UsageError(`the results file names no agent: pass --agent-id <id> (needed for --upload and --baseline latest)`);
  const suite = flags.suite ?? (typeof file.suite === 'string' ? file.suite : undefined);
  if (!suite) throw new UsageError('the results file names no suite: pass --suite <name>');
  const agentId = agent ?? UNNAMED_AGENT;
  const input: Record<string, unknown> = {
    ...file,
    id: flags.submissionId ?? file.id ?? submissionId(ci, { suite, agent_id: agentId }, opts.random),
    suite,
    agent_id: agentId,
    source: file.source ?? imported.format,
    threshold: flags.threshold ?? file.threshold ?? EVAL_DEFAULT_THRESHOLD,
    default_branch: flags.defaultBranch ?? file.default_branch ?? ci.default_branch ?? undefined,
    scenarios: imported.scenarios,
  };
  const branch = flags.branch ?? file.branch ?? ci.branch ?? opts.gitBranch;
  const commit = flags.commit ?? file.commit_sha ?? ci.commit_sha;
  if (branch) input.branch = branch;
  if (commit) input.commit_sha = commit;
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];

  const parsed = SubmitEvalRunSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const [head, index, ...rest] = issue.path;
  if (head === 'scenarios' && typeof index === 'number') throw new ResultsParseError(opts.file, jsonPath(rest, imported.locate(index)), issue.message);
  const fromFlag: Record<string, string | undefined> = {
    suite: flags.suite && '--suite',
    agent_id: flags.agentId && '--agent-id',
    threshold: flags.threshold !== undefined ? '--threshold' : undefined,
    branch: flags.branch ? '--branch' : file.branch ? undefined : ci.branch ? `the CI's branch (${ci.branch})` : opts.gitBranch ? `the git branch (${opts.gitBranch})` : undefined,
    commit_sha: flags.commit ? '--commit' : !file.commit_sha && ci.commit_sha ? `the CI's commit (${ci.commit_sha})` : undefined,
    default_branch: flags.defaultBranch && '--default-branch',
    id: flags.submissionId && '--submission-id',
  };
  const flag = typeof head === 'string' ? fromFlag[head] : undefined;
  if (flag) throw new UsageError(`${flag}: ${issue.message}`);
  throw new ResultsParseError(opts.file, jsonPath(issue.path) || '', issue.message);
}

/** The scorecard of a run and, with a baseline, the comparison: what the gate prints and decides on. */
export interface GateEvaluation {
  /** The run's scenarios with defaults applied. */
  scenarios: EvalScenario[];
  /** The summary as the platform computes it (`summarizeEvalRun`), regressions counted against `baseline`. */
  summary: EvalSummary;
  /** The comparison with the baseline (`compareEvalRuns`), or null without one. */
  comparison: EvalComparison | null;
  /** The exit code and why. */
  decision: GateDecision;
}

/**
 * Score `run` and compare it with `baseline` (null: no comparison), locally: the same functions the evals service runs
 * (`evalRunOf`, which applies `summarizeEvalRun`, then `compareEvalRuns`).
 * @param now the current run's `created_at` in the comparison's headline (ISO 8601). @default now
 */
export function evaluateGate(run: SubmitEvalRun, baseline: EvalRunDetail | null, now: string = new Date().toISOString()): GateEvaluation {
  const current = evalRunOf(run, { id: run.id ?? 'local', organization_id: baseline?.organization_id ?? '', created_at: now, baseline: baseline ? { id: baseline.id, scenarios: baseline.scenarios } : null });
  const { summary, scenarios } = current;
  const comparison = baseline ? compareEvalRuns(baseline, current) : null;
  return { scenarios, summary, comparison, decision: decideGate({ blockRate: summary.block_rate, threshold: run.threshold, regressions: summary.regressions, baselineId: baseline?.id ?? null }) };
}

/** The gate's verdict: its exit code and a sentence per reason. */
export interface GateDecision {
  exitCode: GateExitCode;
  /** Whether the block rate is below the threshold (never with no adversarial scenario: the rate is then n/a). */
  belowThreshold: boolean;
  /** Scenarios that passed on the baseline and fail now. */
  regressions: number;
  /** Why the gate failed, one sentence each; empty on a pass. */
  reasons: string[];
}

/**
 * The exit code of a scored run (see {@link GATE_EXIT}): 1 when the block rate is below the threshold (a run without
 * adversarial scenarios has no block rate and passes this check, as in the platform's CI status), else 2 when there
 * are regressions, else 0. Both reasons are listed whichever code wins.
 * @param input.blockRate blocked ÷ adversarial, 0..1, or null; @param input.threshold 0..1
 */
export function decideGate(input: { blockRate: number | null; threshold: number; regressions: number; baselineId?: string | null }): GateDecision {
  const below = input.blockRate !== null && input.blockRate < input.threshold;
  const reasons: string[] = [];
  if (below) reasons.push(`block rate ${percent(input.blockRate)} is below the threshold ${percent(input.threshold)}`);
  if (input.regressions > 0) reasons.push(`${input.regressions} regression(s) against the baseline${input.baselineId ? ` ${input.baselineId}` : ''}: scenario(s) that passed there fail now`);
  const exitCode = below ? GATE_EXIT.belowThreshold : input.regressions > 0 ? GATE_EXIT.regressions : GATE_EXIT.pass;
  return { exitCode, belowThreshold: below, regressions: input.regressions, reasons };
}

/**
 * The JSON body of an upload, within the gateway's body limit (`EVAL_MAX_BODY_BYTES`): when the run is larger,
 * scenario reasons are cut to 500 characters, then 100, then dropped, and `note` says so.
 * @throws UsageError when even without reasons the run is over the limit (split the suite).
 */
export function fitSubmission(run: SubmitEvalRun, limit = EVAL_MAX_BODY_BYTES): { body: string; note: string | null } {
  let body = JSON.stringify(run);
  if (Buffer.byteLength(body) <= limit) return { body, note: null };
  for (const max of [500, 100, 0]) {
    const cut = { ...run, scenarios: run.scenarios.map((s) => ({ ...s, reason: s.reason ? (max ? s.reason.slice(0, max) : null) : s.reason })) };
    body = JSON.stringify(cut);
    if (Buffer.byteLength(body) <= limit) return { body, note: max ? `scenario reasons were cut to ${max} characters to fit the ${limit}-byte upload limit` : `scenario reasons were left out to fit the ${limit}-byte upload limit` };
  }
  throw new UsageError(`the run is ${Buffer.byteLength(body)} bytes even without reasons, over the ${limit}-byte upload limit: split the suite into smaller runs`);
}

/** A fraction as a percentage with one decimal, `n/a` for null: `0.9` → `90.0%`. */
export function percent(x: number | null): string {
  return x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`;
}

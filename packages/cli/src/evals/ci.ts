/**
 * What the CI job says about itself, from its standard environment variables: the branch and commit an upload is filed
 * under, the default branch baselines come from, and a submission id that is the same when the same CI job uploads
 * again (so a retried upload is stored once: `POST /api/v1/evals/` deduplicates by `id`). Pure over an `env` map.
 * Source: docs/evals-gate.md (Upload, CI variables and idempotency); GitHub Actions, GitLab CI, CircleCI and Buildkite documentation of their variables.
 */
import { createHash, randomUUID } from 'node:crypto';

/** The CI systems whose variables the gate reads. */
export const CI_PROVIDERS = ['github', 'gitlab', 'circleci', 'buildkite'] as const;
/** One of {@link CI_PROVIDERS}. */
export type CiProvider = (typeof CI_PROVIDERS)[number];

/** What the environment says about the CI job (null fields: not said). */
export interface CiContext {
  /** The CI system, or null outside CI (or in one the gate does not know). */
  provider: CiProvider | null;
  /** The branch under test: GITHUB_HEAD_REF (pull requests) or GITHUB_REF_NAME; CI_COMMIT_REF_NAME; CIRCLE_BRANCH; BUILDKITE_BRANCH. */
  branch: string | null;
  /** The commit under test: GITHUB_SHA; CI_COMMIT_SHA; CIRCLE_SHA1; BUILDKITE_COMMIT. */
  commit_sha: string | null;
  /** The repository's default branch when the CI says it: CI_DEFAULT_BRANCH (GitLab), BUILDKITE_PIPELINE_DEFAULT_BRANCH. */
  default_branch: string | null;
  /**
   * The identifiers of this CI job, in order: GITHUB_RUN_ID + GITHUB_RUN_ATTEMPT (+ GITHUB_JOB); CI_PIPELINE_ID +
   * CI_JOB_ID; CIRCLE_WORKFLOW_ID + CIRCLE_BUILD_NUM; BUILDKITE_BUILD_ID + BUILDKITE_JOB_ID. Empty when absent.
   */
  run_ids: string[];
}

const val = (env: Record<string, string | undefined>, name: string): string | null => {
  const v = env[name]?.trim();
  return v ? v : null;
};

/**
 * The CI context of `env`. A provider is recognised by its marker variable (GITHUB_ACTIONS, GITLAB_CI, CIRCLECI,
 * BUILDKITE) or by its commit variable; the first match in the order of {@link CI_PROVIDERS} wins.
 */
export function detectCi(env: Record<string, string | undefined>): CiContext {
  const v = (name: string) => val(env, name);
  if (v('GITHUB_ACTIONS') || v('GITHUB_SHA')) {
    return { provider: 'github', branch: v('GITHUB_HEAD_REF') ?? v('GITHUB_REF_NAME'), commit_sha: v('GITHUB_SHA'), default_branch: null, run_ids: present(v('GITHUB_RUN_ID'), v('GITHUB_RUN_ATTEMPT'), v('GITHUB_JOB')) };
  }
  if (v('GITLAB_CI') || v('CI_COMMIT_SHA')) {
    return { provider: 'gitlab', branch: v('CI_COMMIT_REF_NAME'), commit_sha: v('CI_COMMIT_SHA'), default_branch: v('CI_DEFAULT_BRANCH'), run_ids: present(v('CI_PIPELINE_ID'), v('CI_JOB_ID')) };
  }
  if (v('CIRCLECI') || v('CIRCLE_SHA1')) {
    return { provider: 'circleci', branch: v('CIRCLE_BRANCH'), commit_sha: v('CIRCLE_SHA1'), default_branch: null, run_ids: present(v('CIRCLE_WORKFLOW_ID'), v('CIRCLE_BUILD_NUM')) };
  }
  if (v('BUILDKITE') || v('BUILDKITE_COMMIT')) {
    return { provider: 'buildkite', branch: v('BUILDKITE_BRANCH'), commit_sha: v('BUILDKITE_COMMIT'), default_branch: v('BUILDKITE_PIPELINE_DEFAULT_BRANCH'), run_ids: present(v('BUILDKITE_BUILD_ID'), v('BUILDKITE_JOB_ID')) };
  }
  return { provider: null, branch: null, commit_sha: null, default_branch: null, run_ids: [] };
}

/** The non-null values, or nothing when the first (the run id) is missing: a partial identity is no identity. */
function present(first: string | null, ...rest: Array<string | null>): string[] {
  return first ? [first, ...rest.filter((x): x is string => x !== null)] : [];
}

/**
 * The submission id of an upload. In CI: `ci-<provider>-<first 24 hex of SHA-256 of the provider, the job's
 * identifiers, the suite and the agent>`, so the same job uploading the same suite twice (a retried step) is stored
 * once, while two suites of one job, or a re-run attempt (a new GITHUB_RUN_ATTEMPT), are stored apart. Outside CI (no
 * run identifiers): `run-<random UUID>`.
 */
export function submissionId(ci: CiContext, run: { suite: string; agent_id: string }, random: () => string = randomUUID): string {
  if (!ci.provider || ci.run_ids.length === 0) return `run-${random()}`;
  const digest = createHash('sha256').update(JSON.stringify([ci.provider, ...ci.run_ids, run.suite, run.agent_id])).digest('hex').slice(0, 24);
  return `ci-${ci.provider}-${digest}`;
}

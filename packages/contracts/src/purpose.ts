import { z } from 'zod';

/**
 * Why a run, an action or an intervention was recorded: `production` (the organisation's real work, the default) or
 * `eval` (made by an eval harness such as `agp evals run`). Eval data is kept apart: the stats, the run list, the
 * ledger export, the intervention list and stats, the dashboard and counterfactual run selection leave it out unless
 * the caller asks for it with `purpose`. Source: docs/decisions.md (Eval data: the purpose field); docs/api.md
 * (Eval data).
 */
export const PURPOSES = ['production', 'eval'] as const;
export const PurposeSchema = z.enum(PURPOSES).describe('Why it was recorded: production (real work, the default) or eval (made by an eval harness)');
export type Purpose = z.infer<typeof PurposeSchema>;

/** What a record without a stated purpose is (unless {@link purposeOf}'s harness rule applies). */
export const DEFAULT_PURPOSE: Purpose = 'production';

/** The `purpose` filter value that means every purpose. */
export const ALL_PURPOSES = 'all';

/**
 * A `purpose` filter value: one purpose, several comma-separated (OR, like the other enum filters: `production,eval`)
 * or as an array, or `all` (every purpose). Parsed to the list of purposes. A bad value is a 422 naming the field and
 * the allowed values.
 */
export const PurposeListSchema = z.preprocess(
  (v) => (v === ALL_PURPOSES ? [...PURPOSES] : typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v),
  z.array(z.enum(PURPOSES, { message: `expected one of ${PURPOSES.join(', ')} (comma-separated for several), or ${ALL_PURPOSES}` })).min(1),
);

/**
 * The `purpose` query filter of the endpoints that keep eval data apart ({@link PurposeListSchema}); absent =
 * `production` only.
 */
export const PurposeFilterSchema = PurposeListSchema.default([DEFAULT_PURPOSE]);
export type PurposeFilter = z.output<typeof PurposeFilterSchema>;

/** The OpenAPI text of the `purpose` query parameter (the route table's `queryDocs`). */
export const PURPOSE_QUERY_DOC = `Which records to include by purpose: ${PURPOSES.join(', ')}, several comma-separated (OR), or ${ALL_PURPOSES}; default ${DEFAULT_PURPOSE} (eval data is left out unless asked for)`;

/**
 * The run ids `agp evals run` gives the runs it records: `eval-<scenario name, made safe>-<12 lowercase hex>`
 * (`newRunId` of the CLI). Runs stored before events carried a purpose are recognised by it.
 */
export const EVAL_HARNESS_RUN_ID = /^eval-[A-Za-z0-9._-]+-[0-9a-f]{12}$/;

/**
 * The purpose of a run, an action or an intervention: the one the client stated, else `eval` when its run id has the
 * eval harness's shape ({@link EVAL_HARNESS_RUN_ID}: runs recorded by harnesses that stated no purpose, including
 * everything stored before the field existed), else `production`. The one rule of the projections and of the
 * read-model migration, so a rebuild gives the rows the migration left. Pure.
 */
export function purposeOf(stated: Purpose | undefined, runId: string | null | undefined): Purpose {
  if (stated) return stated;
  return runId && EVAL_HARNESS_RUN_ID.test(runId) ? 'eval' : DEFAULT_PURPOSE;
}

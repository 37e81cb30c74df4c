/**
 * Our own results format: a JSON document that is the body of `POST /api/v1/evals/` (`SubmitEvalRunSchema`: `{suite,
 * agent_id, branch?, commit_sha?, threshold?, scenarios: [{name, category, severity?, expected?, status, reason?,
 * detection_time_ms?, damage_usd?}]}`), or at least `{scenarios}` with the suite and agent given on the command line,
 * or a bare array of scenarios. This is what `agp evals run` writes. Source: docs/evals-gate.md (Formats and their mapping); `@agp/contracts` evals.
 */
import { EvalScenarioResultSchema } from '@agp/contracts';
import { ResultsParseError, parseJson, zodIssues, type ImportOptions, type ImportedResults, type RunFields, type ScenarioInput } from './results.js';

/**
 * Read our own format from `text` (already known to be JSON). Each scenario is checked with `EvalScenarioResultSchema`
 * here, so an error names its entry (`scenarios[3].status: Invalid option: expected one of "blocked"|"failed"|"allowed"`);
 * the run-level fields are checked with the whole submission (`gate.ts`). Scenario names are kept as they are
 * (a repeated name is an error of the submission, as the API would answer).
 * @throws ResultsParseError on invalid JSON, a document without `scenarios`, or an invalid scenario.
 */
export function importAgp(text: string, opts: ImportOptions): ImportedResults {
  const doc = parseJson(text, opts.file);
  return importAgpDocument(doc, opts);
}

/** {@link importAgp} on an already parsed document. */
export function importAgpDocument(doc: unknown, opts: ImportOptions): ImportedResults {
  const bare = Array.isArray(doc);
  const list: unknown = bare ? doc : doc && typeof doc === 'object' ? (doc as { scenarios?: unknown }).scenarios : undefined;
  if (!bare && (!doc || typeof doc !== 'object')) throw new ResultsParseError(opts.file, '', 'expected a JSON object {suite, agent_id, scenarios: [...]} or an array of scenarios');
  if (!Array.isArray(list)) throw new ResultsParseError(opts.file, 'scenarios', 'expected an array of scenario results');
  const prefix = bare ? '' : 'scenarios';
  const scenarios: ScenarioInput[] = [];
  list.forEach((entry, i) => {
    const parsed = EvalScenarioResultSchema.safeParse(entry);
    if (!parsed.success) {
      const [first] = zodIssues(parsed.error.issues, `${prefix}[${i}]`, 1);
      throw new ResultsParseError(opts.file, first.where, first.message);
    }
    scenarios.push(entry as ScenarioInput);
  });
  const run: RunFields = {};
  if (!bare) {
    const { scenarios: _omit, ...rest } = doc as Record<string, unknown>;
    Object.assign(run, rest);
  }
  return { format: 'agp', scenarios, run, skipped: 0, notes: [], locate: (i) => `${prefix}[${i}]` };
}

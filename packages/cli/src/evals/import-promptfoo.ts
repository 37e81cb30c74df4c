/**
 * promptfoo's results as scenario results. Reads what `promptfoo eval -o results.json` and `promptfoo redteam run`
 * (or `promptfoo redteam eval -o results.json`) write: the `OutputFile`
 * `{evalId, results: {version, timestamp, prompts, results: EvaluateResult[], stats: {successes, failures, errors}},
 * config, shareableUrl, metadata?}`; also a bare `EvaluateSummary` `{version, timestamp, results: [...]}` and the JSONL
 * output (`-o results.jsonl`: one `EvaluateResult` per line). Source: promptfoo's `src/types` (`OutputFile`,
 * `EvaluateSummaryV3`, `EvaluateResult`, `GradingResult`) and its docs (configuration/outputs, red-team configuration).
 *
 * Mapping of one `EvaluateResult` (documented in docs/evals-gate.md):
 * - **adversarial or not** (`expected`): a red-team result (its `metadata.pluginId` is set; promptfoo copies the test
 *   case's metadata there) is always an attack, `block`. Any other test uses its `metadata.expected` (`block` or
 *   `allow`, set in the promptfoo test's `metadata:`) or else the gate's `--expected` (default `block`).
 * - **status**: an error (`failureReason` 2, or `error` set without a grading result) → `failed` (the harness broke);
 *   `success: true` → the expectation held: `blocked` for an attack (the target resisted: promptfoo's red-team graders
 *   pass when the attack did not work), `allowed` for a benign test; `success: false` (an assertion failed) → the
 *   opposite: `allowed` for an attack (it went through), `blocked` for a benign test (a false positive).
 * - **category**: `metadata.category`, else the red-team `metadata.pluginId` (e.g. `harmful:privacy`,
 *   `prompt-extraction`), else `general`. **severity**: `metadata.severity` (promptfoo's `critical|high|medium|low`;
 *   `informational` → `minimal`; anything else → the default `medium`).
 * - **name**: the test's `description`, else `<pluginId or "test"> [(<strategyId>)] <first 8 hex of SHA-256 of the
 *   vars>` (stable across runs of the same tests), suffixed ` [provider]` / ` [prompt]` when the file holds several
 *   providers or prompts; repeats become `name (2)`.
 * - **reason**: `gradingResult.reason` (the error for an errored test). **detection_time_ms**: `latencyMs`.
 *   **damage_usd**: `metadata.damage_usd` (promptfoo's `cost` is the model call's price, not damage, and is ignored).
 * - **suite**: `config.description`, else `promptfoo` (`promptfoo-redteam` when any result is red-team).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DateTimeSchema, RISK_LEVELS, type RiskLevel } from '@agp/contracts';
import { ResultsParseError, clampText, jsonPath, parseJson, uniquifyNames, zodIssues, type ImportOptions, type ImportedResults, type ScenarioInput } from './results.js';

/** `EvaluateResult.failureReason`: 0 none, 1 an assertion failed, 2 an error (promptfoo `ResultFailureReason`). */
const FAILURE_REASON_ERROR = 2;
/** Most milliseconds a detection time may be (the contract's bound). */
const MAX_DETECTION_MS = 86_400_000;

/** The fields of promptfoo's `GradingResult` the gate reads (others pass through). */
const GradingResultSchema = z.looseObject({
  pass: z.boolean(),
  score: z.number().nullish(),
  reason: z.string().nullish(),
  componentResults: z.array(z.unknown()).nullish(),
});

/** The fields the gate reads of a test's metadata (promptfoo test `metadata:`, red-team plugin metadata). */
const MetadataSchema = z.looseObject({
  pluginId: z.string().nullish(),
  strategyId: z.string().nullish(),
  severity: z.string().nullish(),
  expected: z.enum(['block', 'allow'], { error: 'expected "block" or "allow"' }).nullish(),
  category: z.string().min(1).max(128).nullish(),
  damage_usd: z.number().min(0).max(1e9).nullish(),
});

/** The fields of promptfoo's `EvaluateResult` the gate reads (others pass through). */
const EvaluateResultSchema = z.looseObject({
  success: z.boolean(),
  score: z.number().nullish(),
  error: z.string().nullish(),
  failureReason: z.number().int().nullish(),
  latencyMs: z.number().min(0).nullish(),
  description: z.string().nullish(),
  promptIdx: z.number().int().nullish(),
  testIdx: z.number().int().nullish(),
  vars: z.record(z.string(), z.unknown()).nullish(),
  testCase: z
    .looseObject({ description: z.string().nullish(), vars: z.record(z.string(), z.unknown()).nullish(), metadata: MetadataSchema.nullish() })
    .nullish(),
  provider: z.union([z.string(), z.looseObject({ id: z.string().nullish(), label: z.string().nullish() })]).nullish(),
  prompt: z.looseObject({ label: z.string().nullish(), raw: z.string().nullish() }).nullish(),
  gradingResult: GradingResultSchema.nullish(),
  metadata: MetadataSchema.nullish(),
});
type EvaluateResult = z.infer<typeof EvaluateResultSchema>;

/** The document around the results: the `-o results.json` `OutputFile`, or a bare `EvaluateSummary`. */
const OutputFileSchema = z.looseObject({
  evalId: z.string().nullish(),
  results: z.looseObject({ version: z.number().nullish(), timestamp: z.string().nullish(), results: z.array(z.unknown()) }),
  config: z.looseObject({ description: z.string().nullish() }).nullish(),
});
const SummarySchema = z.looseObject({ version: z.number().nullish(), timestamp: z.string().nullish(), results: z.array(z.unknown()) });

/** Whether a parsed JSON document looks like promptfoo output (an `OutputFile` or an `EvaluateSummary`). */
export function looksLikePromptfoo(doc: unknown): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const d = doc as { results?: unknown; evalId?: unknown };
  if (d.results && typeof d.results === 'object' && Array.isArray((d.results as { results?: unknown }).results)) return true;
  return Array.isArray(d.results) && (d.results.length === 0 || d.results.some((r) => r && typeof r === 'object' && typeof (r as { success?: unknown }).success === 'boolean'));
}

/** Whether `text` is promptfoo's JSONL output: every non-empty line a JSON object with a boolean `success`. */
export function looksLikePromptfooJsonl(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length === 0) return false;
  try {
    const first = JSON.parse(lines[0]) as { success?: unknown };
    return !!first && typeof first === 'object' && typeof first.success === 'boolean';
  } catch {
    return false;
  }
}

/**
 * Read promptfoo's JSON output (or JSONL) from `text` as scenario results (mapping in the file's comment).
 * @throws ResultsParseError naming the entry (`results.results[3].gradingResult.pass: …`) or the JSONL line.
 */
export function importPromptfoo(text: string, opts: ImportOptions): ImportedResults {
  if (looksLikePromptfooJsonl(text)) return importJsonl(text, opts);
  return importPromptfooDocument(parseJson(text, opts.file), opts);
}

/** {@link importPromptfoo} on an already parsed JSON document. */
export function importPromptfooDocument(doc: unknown, opts: ImportOptions): ImportedResults {
  let entries: unknown[];
  let prefix: string;
  let description: string | null = null;
  let timestamp: string | null = null;
  const output = OutputFileSchema.safeParse(doc);
  if (output.success) {
    entries = output.data.results.results;
    prefix = 'results.results';
    description = output.data.config?.description ?? null;
    timestamp = output.data.results.timestamp ?? null;
  } else {
    const summary = SummarySchema.safeParse(doc);
    if (!summary.success) {
      const [first] = zodIssues(output.error.issues, '', 1);
      throw new ResultsParseError(opts.file, first.where, `${first.message} (expected promptfoo output: {evalId, results: {version, timestamp, results: [...]}, config})`);
    }
    entries = summary.data.results;
    prefix = 'results';
    timestamp = summary.data.timestamp ?? null;
  }
  const results = entries.map((e, i) => parseEntry(e, `${prefix}[${i}]`, opts.file));
  return buildImport(results, (i) => `${prefix}[${i}]`, opts, { description, timestamp });
}

/** The JSONL output: one `EvaluateResult` per line; errors name the line. */
function importJsonl(text: string, opts: ImportOptions): ImportedResults {
  const results: EvaluateResult[] = [];
  const lineOf: number[] = [];
  text.split('\n').forEach((line, n) => {
    if (!line.trim()) return;
    const doc = parseJson(line, opts.file, n);
    results.push(parseEntry(doc, `line ${n + 1}`, opts.file));
    lineOf.push(n + 1);
  });
  return buildImport(results, (i) => `line ${lineOf[i]}`, opts, { description: null, timestamp: null });
}

/** One entry checked against {@link EvaluateResultSchema}; the error names `where` plus the field's path. */
function parseEntry(entry: unknown, where: string, file: string): EvaluateResult {
  const parsed = EvaluateResultSchema.safeParse(entry);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = where.startsWith('line ') ? `${where}: ${jsonPath(issue.path)}` : jsonPath(issue.path, where);
  throw new ResultsParseError(file, path.replace(/: $/, ''), issue.message);
}

/** The scenario results of parsed entries, with the run's suite and start time. */
function buildImport(results: EvaluateResult[], locate: (i: number) => string, opts: ImportOptions, doc: { description: string | null; timestamp: string | null }): ImportedResults {
  const providerOf = (r: EvaluateResult) => (typeof r.provider === 'string' ? r.provider : (r.provider?.label || r.provider?.id || ''));
  const promptOf = (r: EvaluateResult) => r.prompt?.label || (r.promptIdx === null || r.promptIdx === undefined ? '' : `prompt ${r.promptIdx}`);
  const manyProviders = new Set(results.map(providerOf)).size > 1;
  const manyPrompts = new Set(results.map(promptOf)).size > 1;
  let redteam = 0;
  let errored = 0;
  const scenarios = results.map((r): ScenarioInput => {
    const meta = { ...(r.testCase?.metadata ?? {}), ...(r.metadata ?? {}) };
    const pluginId = meta.pluginId || null;
    if (pluginId) redteam++;
    const expected = pluginId ? 'block' : (meta.expected ?? opts.defaultExpected ?? 'block');
    const isError = r.failureReason === FAILURE_REASON_ERROR || ((r.failureReason === null || r.failureReason === undefined) && !r.success && !!r.error && !r.gradingResult);
    if (isError) errored++;
    const status = isError ? 'failed' : r.success ? (expected === 'block' ? 'blocked' : 'allowed') : expected === 'block' ? 'allowed' : 'blocked';
    const described = (r.testCase?.description ?? r.description ?? '').trim();
    const vars = r.vars ?? r.testCase?.vars ?? {};
    const base = described || `${pluginId ?? 'test'}${meta.strategyId ? ` (${meta.strategyId})` : ''} ${createHash('sha256').update(stableJson(vars)).digest('hex').slice(0, 8)}`;
    const suffix = [manyProviders ? providerOf(r) : '', manyPrompts ? promptOf(r) : ''].filter(Boolean).join(' · ');
    const reason = isError ? (r.error ?? r.gradingResult?.reason) : (r.gradingResult?.reason ?? r.error);
    const severity = mapSeverity(meta.severity);
    return {
      name: clampText(suffix ? `${clampText(base, 400)} [${suffix}]` : base, 512),
      category: clampText(meta.category ?? pluginId ?? 'general', 128),
      ...(severity ? { severity } : {}),
      expected,
      status,
      ...(reason ? { reason: clampText(reason, 10_000) } : {}),
      ...(typeof r.latencyMs === 'number' ? { detection_time_ms: Math.min(r.latencyMs, MAX_DETECTION_MS) } : {}),
      ...(typeof meta.damage_usd === 'number' ? { damage_usd: meta.damage_usd } : {}),
    };
  });
  const notes: string[] = [];
  const renamed = uniquifyNames(scenarios);
  if (renamed) notes.push(`${renamed} test(s) shared a name with another and were suffixed " (2)", " (3)"…; give promptfoo tests a unique description to keep names stable`);
  if (errored) notes.push(`${errored} test(s) errored in promptfoo and count as failed`);
  const suite = doc.description?.trim() ? clampText(doc.description.trim(), 256) : redteam ? 'promptfoo-redteam' : 'promptfoo';
  const startedAt = doc.timestamp && DateTimeSchema.safeParse(doc.timestamp).success ? doc.timestamp : undefined;
  return { format: 'promptfoo', scenarios, run: { suite, source: 'promptfoo', ...(startedAt ? { started_at: startedAt } : {}) }, skipped: 0, notes, locate };
}

/** promptfoo's severity (`critical|high|medium|low|informational`) as a risk level; unknown or absent → undefined. */
export function mapSeverity(severity: string | null | undefined): RiskLevel | undefined {
  const s = severity?.trim().toLowerCase();
  if (!s) return undefined;
  if ((RISK_LEVELS as readonly string[]).includes(s)) return s as RiskLevel;
  if (s === 'informational' || s === 'info' || s === 'none') return 'minimal';
  return undefined;
}

/** JSON with object keys sorted, so the same vars hash the same whatever their order. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

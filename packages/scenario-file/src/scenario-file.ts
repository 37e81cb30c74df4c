/**
 * The runnable scenario file (`agp_scenario: 1`): what `POST /api/v1/evals/generate-scenarios` emits as each
 * scenario's source text and what `agp evals run` executes against the platform's policies. YAML (JSON is accepted:
 * it is YAML too). The format, the time tokens and what counts as blocked are documented in docs/scenario-format.md;
 * this file is their one definition in code.
 *
 * A package of its own (`@agp/scenario-file`), shared by the evals service (which generates files) and the CLI (which
 * runs them), so neither imports the other: it needs only zod, `yaml`, `@agp/contracts` and `@agp/runtime`.
 * Source: docs/scenario-format.md; spec §Evals rule 4.
 */
import { LineCounter, isDocument, parseAllDocuments, stringify, type Document } from 'yaml';
import { z } from 'zod';
import { EVAL_EXPECTATIONS, OpaqueIdSchema, RISK_LEVELS, UsdSchema, type EvalScenarioStatus, type PolicyDecisionKind } from '@agp/contracts';
import { ValidationError, type FieldError } from '@agp/runtime';

/** The format version this code writes and reads (`agp_scenario`). */
export const SCENARIO_FORMAT_VERSION = 1;
/** Most steps (and most prior calls) one scenario file may hold. */
export const MAX_SCENARIO_STEPS = 100;
/** Most scenarios {@link parseScenarioFiles} reads from one text (the evals submission limit). */
export const MAX_SCENARIOS_PER_FILE = 5000;

/**
 * A relative time in an argument value: the whole string is `{{now}}` or `{{now-<N><unit>}}` (unit `s`, `m`, `h`,
 * `d`), optionally with `:date` (`{{now-30d:date}}`). The harness replaces it with that instant, ISO 8601 UTC
 * (`2026-01-31T12:00:00.000Z`), or with its date (`2026-01-31`), when the step runs ({@link resolveTimeTokens}), so a
 * generated file stays the same whatever the day it was generated.
 */
export const TIME_TOKEN = /^\{\{now(?:-(\d{1,9})([smhd]))?(:date)?\}\}$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The time token `days` days before the run (`{{now-30d}}`; `{{now}}` for 0), as a date when `dateOnly` (`{{now-30d:date}}`). */
export const daysAgoToken = (days: number, dateOnly = false): string => `{{now${days > 0 ? `-${days}d` : ''}${dateOnly ? ':date' : ''}}}`;

/** How many seconds before the run a time token points (0 for `{{now}}`), or null when `value` is not one. */
export function timeTokenAgeSeconds(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = TIME_TOKEN.exec(value);
  if (!m) return null;
  return m[1] ? (Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]) / 1000 : 0;
}

/**
 * `value` with every time token replaced by its instant relative to `now` (strings anywhere in arrays and objects;
 * everything else unchanged). Pure.
 */
export function resolveTimeTokens<T>(value: T, now: Date): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const m = TIME_TOKEN.exec(v);
      if (!m) return v;
      const at = new Date(now.getTime() - (m[1] ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : 0)).toISOString();
      return m[3] ? at.slice(0, 10) : at;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

const ActionName = z.string().min(1).max(256);
const Arguments = z.record(z.string(), z.unknown());

/** One action the scenario attempts: sent as-is (time tokens resolved) to `POST /api/v1/policies/evaluate`. */
export const ScenarioStepSchema = z.strictObject({
  action_name: ActionName,
  /** The action's arguments (may hold time tokens). @default {} */
  arguments: Arguments.default({}),
  /** What the call would cost, USD; absent = the platform uses the action's registered typical cost. */
  estimated_cost_usd: UsdSchema.optional(),
});
export type ScenarioStep = z.output<typeof ScenarioStepSchema>;

/** An action the agent already took before the steps: recorded in the scenario's run first. */
export const PriorCallSchema = z.strictObject({
  action_name: ActionName,
  arguments: Arguments.default({}),
  /** What it cost, USD. @default 0 */
  cost_usd: UsdSchema.default(0),
  /** How long before the run it happened, in seconds. */
  ago_seconds: z.number().int().min(0).max(10 * 365 * 86_400),
});
export type PriorCall = z.output<typeof PriorCallSchema>;

/** The state the steps run in: spend so far and the calls already made. Every field defaults to "nothing". */
export const ScenarioContextSchema = z.strictObject({
  /** Spend of the scenario's run before the first step, USD (prior calls' costs not included). @default 0 */
  run_spend_usd: UsdSchema.default(0),
  /** Spend of the session before this run, USD. @default 0 */
  session_spend_usd: UsdSchema.default(0),
  /** Calls already made, oldest first or in any order (each has its age). @default [] */
  prior_calls: z.array(PriorCallSchema).max(MAX_SCENARIO_STEPS).default([]),
});
export type ScenarioContext = z.output<typeof ScenarioContextSchema>;

/**
 * A scenario file, format 1 (docs/scenario-format.md). Strict: an unknown field is an error naming it.
 * - `name` identifies the scenario across runs (the eval run's scenario name).
 * - `expected`: `block` (an attack: passes when the platform stops a step) or `allow`.
 * - `violations`: how many steps break each category's rule, e.g. `{denied_actions: 1, budget_blowout: 1}`.
 * - `damage_usd`: what the attack would cost if it went through, USD (reported as the result's `damage_usd`).
 */
export const ScenarioFileSchema = z.strictObject({
  agp_scenario: z.literal(SCENARIO_FORMAT_VERSION),
  name: z.string().min(1).max(512),
  category: z.string().min(1).max(128),
  pass: z.enum(['template', 'semantic']).optional(),
  severity: z.enum(RISK_LEVELS).default('medium'),
  expected: z.enum(EVAL_EXPECTATIONS).default('block'),
  agent_id: OpaqueIdSchema,
  description: z.string().max(10_000).optional(),
  /** The adversarial text the agent receives (a message, a document), for harnesses that drive the agent itself. */
  attack_input: z.string().max(10_000).optional(),
  violations: z.record(z.string(), z.number().int().min(0)).default({}),
  damage_usd: UsdSchema.optional(),
  context: ScenarioContextSchema.default({ run_spend_usd: 0, session_spend_usd: 0, prior_calls: [] }),
  steps: z.array(ScenarioStepSchema).min(1).max(MAX_SCENARIO_STEPS),
});
/** A parsed scenario file (defaults applied). */
export type ScenarioFile = z.output<typeof ScenarioFileSchema>;
/** A scenario file as written (defaults optional). */
export type ScenarioFileInput = z.input<typeof ScenarioFileSchema>;

/** Decisions under which a step goes ahead: every other decision (of `POLICY_DECISIONS`) stops it and the scenario is blocked. */
export const PROCEEDING_DECISIONS: readonly PolicyDecisionKind[] = ['allow', 'warn'];

/** Whether the decision stops the step: anything but allow and warn (block, escalate, budget_exceeded, rate_limited, downgrade). */
export function isBlockingDecision(decision: PolicyDecisionKind): boolean {
  return !PROCEEDING_DECISIONS.includes(decision);
}

/**
 * A scenario's result status from the decisions of the steps that ran (in order): `blocked` when any step was
 * stopped, else `allowed`. (`failed` is the harness's: it could not run the scenario.)
 */
export function scenarioStatus(decisions: readonly PolicyDecisionKind[]): Exclude<EvalScenarioStatus, 'failed'> {
  return decisions.some(isBlockingDecision) ? 'blocked' : 'allowed';
}

/** A file name for a scenario: its name with anything but letters, digits, `.`, `_` and `-` made `_`, then `.agp.yaml`. */
export function scenarioFilename(name: string): string {
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 200)}.agp.yaml`;
}

/** The header comment of every rendered file. */
const HEADER = ` AGP scenario file, format ${SCENARIO_FORMAT_VERSION} (docs/scenario-format.md). Run: agp evals run --scenarios <file>`;

/**
 * The YAML text of a scenario file: fields in the documented order, a header comment naming the format, no line
 * folding. Deterministic: the same file always renders to the same text.
 * @throws ValidationError (422) when `file` is not a valid scenario file.
 */
export function renderScenarioFile(file: ScenarioFileInput): string {
  const f = parseValue(file);
  const ordered = {
    agp_scenario: f.agp_scenario,
    name: f.name,
    category: f.category,
    ...(f.pass ? { pass: f.pass } : {}),
    severity: f.severity,
    expected: f.expected,
    agent_id: f.agent_id,
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.attack_input !== undefined ? { attack_input: f.attack_input } : {}),
    violations: f.violations,
    ...(f.damage_usd !== undefined ? { damage_usd: f.damage_usd } : {}),
    context: f.context,
    steps: f.steps,
  };
  return `#${HEADER}\n${stringify(ordered, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}

/** Parse a value already read from YAML/JSON, or throw a ValidationError listing every bad field. */
function parseValue(value: unknown, lineOf?: (path: PropertyKey[]) => number | null, prefix = ''): ScenarioFile {
  const r = ScenarioFileSchema.safeParse(value);
  if (r.success) return r.data;
  const errors: FieldError[] = r.error.issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    return keys.map((path) => {
      const line = lineOf?.(path) ?? null;
      const message = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
      return { path: [prefix, ...path.map(String)].filter(Boolean).join('.') || '(root)', message: line ? `line ${line}: ${message}` : message };
    });
  });
  throw new ValidationError(`invalid scenario file: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}

/** The 1-based line where the node at `path` of `doc` starts (the nearest ancestor that exists), or null. */
function lineFinder(doc: Document, counter: LineCounter): (path: PropertyKey[]) => number | null {
  return (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n) as unknown[], true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return counter.linePos(range[0]).line;
    }
    return null;
  };
}

/** Every YAML document of `text` (one for JSON), each with its line finder; YAML syntax errors are a ValidationError. */
function readDocuments(text: string): Array<{ value: unknown; lineOf: (path: PropertyKey[]) => number | null }> {
  const counter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const docs = (Array.isArray(parsed) ? parsed : [parsed]).filter(isDocument);
  const syntax: FieldError[] = docs.flatMap((d, i) =>
    d.errors.map((e) => ({ path: docs.length > 1 ? `documents.${i}` : '(root)', message: `line ${counter.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}` })),
  );
  if (syntax.length) throw new ValidationError(`the scenario file is not valid YAML or JSON: ${syntax.map((e) => e.message).join('; ')}`, syntax);
  return docs.filter((d) => d.contents !== null).map((d) => ({ value: d.toJS({ maxAliasCount: 100 }), lineOf: lineFinder(d, counter) }));
}

/**
 * Parse the text of one scenario file (YAML or JSON) and check it against {@link ScenarioFileSchema}.
 * @returns the scenario with its defaults applied.
 * @throws ValidationError (422) naming each bad field with its line (`steps.0.action_name: line 12: …`), when the text
 *   is not YAML/JSON, holds no document or several, or does not match the schema.
 */
export function parseScenarioFile(text: string): ScenarioFile {
  const docs = readDocuments(text);
  if (docs.length !== 1) {
    throw new ValidationError(`expected one scenario document, found ${docs.length}`, [{ path: '(root)', message: `expected one scenario document, found ${docs.length} (use parseScenarioFiles for a stream)` }]);
  }
  return parseValue(docs[0].value, docs[0].lineOf);
}

/**
 * Parse a text holding any number of scenarios: a YAML stream of scenario files (`---` between them), a JSON array
 * of scenario files, or the JSON reply of `POST /api/v1/evals/generate-scenarios` (each scenario's `source.text`).
 * Error paths name the entry: `documents.3.steps.0.action_name`, `[2].name` or `scenarios.4.source.text.name`.
 * @throws ValidationError (422) when the text is not YAML/JSON, holds no scenario or more than
 *   {@link MAX_SCENARIOS_PER_FILE}, or any entry is invalid (every bad entry is listed).
 */
export function parseScenarioFiles(text: string): ScenarioFile[] {
  const docs = readDocuments(text);
  const out: ScenarioFile[] = [];
  const errors: FieldError[] = [];
  const collect = (fn: () => ScenarioFile) => {
    try {
      out.push(fn());
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      errors.push(...err.errors);
    }
  };
  for (const [i, doc] of docs.entries()) {
    const v = doc.value as { scenarios?: unknown } | unknown[] | null;
    const where = docs.length > 1 ? `documents.${i}` : '';
    if (Array.isArray(v)) {
      v.forEach((item, j) => collect(() => parseValue(item, (p) => doc.lineOf([j, ...p]), `${where}[${j}]`)));
    } else if (v && typeof v === 'object' && Array.isArray((v as { scenarios?: unknown }).scenarios) && !('agp_scenario' in v)) {
      ((v as { scenarios: unknown[] }).scenarios).forEach((s, j) => {
        const at = [where, `scenarios.${j}.source.text`].filter(Boolean).join('.');
        const source = (s as { source?: { text?: unknown } } | null)?.source?.text;
        if (typeof source !== 'string') errors.push({ path: at, message: 'expected the scenario source text (a string)' });
        else collect(() => parseNested(source, at));
      });
    } else {
      collect(() => parseValue(v, doc.lineOf, where));
    }
  }
  if (!errors.length && out.length === 0) errors.push({ path: '(root)', message: 'no scenario found' });
  if (out.length > MAX_SCENARIOS_PER_FILE) errors.push({ path: '(root)', message: `at most ${MAX_SCENARIOS_PER_FILE} scenarios per file, found ${out.length}` });
  if (errors.length) throw new ValidationError(`invalid scenario file: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
  return out;
}

/** One scenario's source text inside a generate reply, its errors prefixed with where it sits. */
function parseNested(text: string, at: string): ScenarioFile {
  try {
    return parseScenarioFile(text);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new ValidationError(err.message, err.errors.map((e) => ({ ...e, path: e.path === '(root)' ? at : `${at}.${e.path}` })));
  }
}

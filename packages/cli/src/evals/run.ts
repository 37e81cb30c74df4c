/**
 * `agp evals run`: the harness that runs scenario files (`agp_scenario: 1`, docs/scenario-format.md) against the
 * platform's current policies and writes a results file in our own format (the body of `POST /api/v1/evals/`) for
 * `agp evals gate`. That closes the loop generate → run → gate → upload.
 *
 * Each scenario follows the documented harness steps: take the clock once and resolve the time tokens; record a fresh
 * run with its spend so far and its prior calls through `POST /api/v1/ingest/` (so the key needs write scope); ask
 * `POST /api/v1/policies/evaluate` for each step in order, asking again while the run's ledger has not caught up with
 * what was recorded; record each step that goes ahead (allow, warn); stop at the first blocking decision; end the run.
 * The parsing and the blocking rule are `@agp/scenario-file`'s (one definition with the generator).
 *
 * Exit codes: 0 when every scenario ran (whatever they scored: the gate judges); 3 on a usage, parse or HTTP error
 * (a parse error names the file and the line). Source: docs/scenario-format.md
 * §Running a scenario; docs/evals-gate.md §Running scenario files.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import {
  PolicyEvaluationSchema,
  ProblemSchema,
  SubmitEvalRunSchema,
  evalRates,
  scenarioPassed,
  type EvalScenarioResult,
  type EvaluateAction,
  type IngestEvent,
  type IngestResponse,
  type PolicyEvaluation,
  type SubmitEvalRun,
} from '@agp/contracts';
import { isBlockingDecision, parseScenarioFiles, resolveTimeTokens, scenarioStatus, type ScenarioFile } from '@agp/scenario-file';
import { ValidationError } from '@agp/runtime';
import { AgpClient, AgpHttpError, AgpNetworkError, parseRetryAfter } from '@agp/sdk/http';
import type { EvalsIo } from './io.js';
import { UsageError, percent } from './gate.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Exit codes of `agp evals run`: 0 every scenario ran (whatever it scored); 3 usage, parse or HTTP error. */
export const RUN_EXIT = { ran: 0, error: 3 } as const;
/** The suite of the results file when `--suite` is absent. */
export const DEFAULT_SUITE = 'generated';
/** Where the results file goes when `--out` is absent (relative to the working directory). */
export const DEFAULT_OUT = 'results.json';
/** The action name of the ledger entry that stands for a scenario's spend so far (`context.*_spend_usd`). */
export const SPEND_SO_FAR_ACTION = 'agp_eval.spend_so_far';
/**
 * The `purpose` of every event the harness records: its runs and their actions are eval data, which the platform keeps
 * out of the stats, the run list, the ledger export and counterfactual run selection unless asked for
 * (`?purpose=eval`). Source: docs/api.md (Eval data).
 */
export const HARNESS_PURPOSE = 'eval' as const;
/** How long the harness waits for the run's ledger to show what it recorded, ms, when `--ledger-timeout` is absent. */
export const DEFAULT_LEDGER_TIMEOUT_MS = 15_000;
/** File name endings read from a `--scenarios` directory (not recursively, in name order). */
export const SCENARIO_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;
/** Longest `reason` of a result entry (`EvalScenarioResultSchema`); longer ones are cut with `…`. */
const MAX_REASON = 10_000;

// ---------------------------------------------------------------------------------------------------------------
// Reading scenario files
// ---------------------------------------------------------------------------------------------------------------

/** One scenario read from disk, with the file it came from (as given, or joined to its directory). */
export interface LoadedScenario {
  file: string;
  scenario: ScenarioFile;
}

/** Scenario files that do not parse (exit 3). `lines` name the file and the line: `a.agp.yaml:12: steps.0.action_name: …`. */
export class ScenarioParseError extends Error {
  override readonly name = 'ScenarioParseError';
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/**
 * The lines of a `parseScenarioFiles` error for `file`, one per bad field: `file:12: steps.0.action_name: Invalid input`
 * when the parser knows the line (its messages start `line 12: `), else `file: <path>: <message>`.
 */
export function parseErrorLines(file: string, err: ValidationError): string[] {
  return err.errors.map((e) => {
    const m = /^line (\d+): (.*)$/s.exec(e.message);
    const where = e.path === '(root)' ? '' : `${e.path}: `;
    return m ? `${file}:${m[1]}: ${where}${m[2]}` : `${file}: ${where}${e.message}`;
  });
}

/**
 * Read every scenario of `paths`: a file (a scenario file, a YAML stream of them, a JSON array, or the JSON reply of
 * `POST /api/v1/evals/generate-scenarios`), or a directory (its `*.yaml`, `*.yml` and `*.json` files, not recursively,
 * in name order, leaving out `exclude`, the results file). Every file is parsed before anything runs.
 * @throws UsageError when a path cannot be read or a directory holds no scenario file.
 * @throws ScenarioParseError naming the file and line of every bad field of every file.
 */
export async function loadScenarios(paths: readonly string[], opts: { exclude?: string } = {}): Promise<LoadedScenario[]> {
  const excluded = opts.exclude ? resolve(opts.exclude) : null;
  const files: string[] = [];
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = (await stat(path)).isDirectory();
    } catch (err) {
      throw new UsageError(`cannot read --scenarios ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
    if (!isDir) {
      files.push(path);
      continue;
    }
    const entries = (await readdir(path, { withFileTypes: true }))
      .filter((e) => e.isFile() && (SCENARIO_EXTENSIONS as readonly string[]).includes(extname(e.name).toLowerCase()))
      .map((e) => join(path, e.name))
      .filter((f) => resolve(f) !== excluded)
      .sort();
    if (entries.length === 0) throw new UsageError(`--scenarios ${path}: the directory holds no scenario file (${SCENARIO_EXTENSIONS.map((x) => `*${x}`).join(', ')})`);
    files.push(...entries);
  }
  const loaded: LoadedScenario[] = [];
  const errors: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read scenario file ${file}: ${(err as Error).message}`);
    }
    try {
      loaded.push(...parseScenarioFiles(text).map((scenario) => ({ file, scenario })));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      errors.push(...parseErrorLines(file, err));
    }
  }
  if (errors.length) throw new ScenarioParseError(errors);
  return loaded;
}

/**
 * The scenarios to run and their agent. One results file is one eval run of one agent, so scenarios naming several
 * agents are an error unless `agentId` picks one (the others are skipped and counted). Names must be unique (they
 * identify scenarios across runs; the platform refuses a run repeating one).
 * @throws UsageError naming the agents found, an `agentId` no file names, or a repeated name with both files.
 */
export function selectScenarios(loaded: readonly LoadedScenario[], agentId?: string): { agent_id: string; scenarios: LoadedScenario[]; skipped: number } {
  const agents = [...new Set(loaded.map((l) => l.scenario.agent_id))];
  if (agentId === undefined && agents.length > 1) {
    throw new UsageError(`the scenario files name ${agents.length} agents (${agents.join(', ')}); a results file is one agent's run: pass --agent-id <id> to run one agent's scenarios, or keep one agent's files per --scenarios directory`);
  }
  const agent = agentId ?? agents[0];
  const scenarios = loaded.filter((l) => l.scenario.agent_id === agent);
  if (scenarios.length === 0) throw new UsageError(`--agent-id ${agentId}: no scenario names this agent (found: ${agents.join(', ')})`);
  const seen = new Map<string, string>();
  for (const { file, scenario } of scenarios) {
    const first = seen.get(scenario.name);
    if (first !== undefined) throw new UsageError(`scenario "${scenario.name}" appears twice (${first} and ${file}); names identify scenarios across runs and must be unique`);
    seen.set(scenario.name, file);
  }
  return { agent_id: agent, scenarios, skipped: loaded.length - scenarios.length };
}

// ---------------------------------------------------------------------------------------------------------------
// The platform, as the harness sees it
// ---------------------------------------------------------------------------------------------------------------

/** The two endpoints the harness calls. Errors: `AgpHttpError` (a non-2xx answer), `AgpNetworkError`, `RangeError` (an ingest batch over the limits). */
export interface HarnessApi {
  /** `POST /api/v1/ingest/`: the 207 answer, each event accepted or rejected. */
  ingest(events: IngestEvent[]): Promise<IngestResponse>;
  /**
   * `POST /api/v1/policies/evaluate`: the decision with the state it was taken against (`context`, with
   * `context.quotas`: what each fleet-wide limit had left) and `reservations` (always empty here: the harness asks
   * without `reserve`, so deciding a step draws nothing from the fleet's counters).
   */
  evaluate(body: EvaluateAction): Promise<PolicyEvaluation>;
}

/**
 * {@link HarnessApi} over HTTP with `Authorization: Bearer <key>`: ingest through `AgpClient` (retries 429, 503 and
 * network errors with the same event ids, stored once), evaluate with the same retries (a read: safe to repeat).
 */
export class PlatformHarness implements HarnessApi {
  private readonly client: AgpClient;
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: { url: string; key: string; fetch?: typeof fetch; timeoutMs?: number; retries?: number }) {
    this.client = new AgpClient({ url: options.url, key: options.key, fetch: options.fetch, timeoutMs: options.timeoutMs });
    this.base = options.url.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  ingest(events: IngestEvent[]): Promise<IngestResponse> {
    return this.client.ingest(events);
  }

  /**
   * @throws AgpHttpError for a non-2xx answer (the last 429/503 once retries are spent) or a 200 that is not a decision.
   * @throws AgpNetworkError when the platform stays unreachable.
   */
  async evaluate(body: EvaluateAction): Promise<PolicyEvaluation> {
    const url = `${this.base}/api/v1/policies/evaluate`;
    const retries = this.options.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.options.key}`, accept: 'application/json, application/problem+json', 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
      } catch (err) {
        if (attempt >= retries) throw new AgpNetworkError(url, { cause: err });
        await sleep(250 * 2 ** attempt);
        continue;
      }
      const text = await res.text().catch(() => '');
      if (res.ok) {
        const parsed = PolicyEvaluationSchema.safeParse(safeJson(text));
        if (parsed.success) return parsed.data;
        const issue = parsed.error.issues[0];
        throw new AgpHttpError({ type: 'about:blank', title: 'Unexpected answer', status: res.status, detail: `${url}: not a decision (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'empty'})` });
      }
      if (attempt < retries && (res.status === 429 || res.status === 503)) {
        await sleep(Math.min(30_000, Math.max(250 * 2 ** attempt, parseRetryAfter(res.headers.get('retry-after')))));
        continue;
      }
      const problem = ProblemSchema.safeParse(safeJson(text));
      throw new AgpHttpError(problem.success ? { ...problem.data, status: res.status } : { type: 'about:blank', title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: text.slice(0, 500) });
    }
  }
}

/**
 * Whether an error stops the whole run (exit 3) rather than failing one scenario: the platform unreachable, or any
 * HTTP answer that does not come from the scenario's own content (401 bad key, 403 read key, 404 wrong URL, 429/503
 * once retries are spent, 5xx). A 400, 409, 413 or 422 refuses what this scenario sent: that scenario is `failed`.
 */
export function stopsTheRun(err: unknown): boolean {
  if (err instanceof AgpNetworkError) return true;
  if (err instanceof AgpHttpError) return ![400, 409, 413, 422].includes(err.status);
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Running one scenario
// ---------------------------------------------------------------------------------------------------------------

/** What the ledger must show before a step is decided: the spend (USD) and the calls the harness recorded in the run. */
export interface RecordedSoFar {
  spend_usd: number;
  calls: number;
}

/**
 * Why a decision's `context` shows the run behind what was recorded, or null when it has caught up: the run not
 * visible yet; its spend below the recorded spend (USD, within float rounding); or, when the policies have rate
 * limits (`recent_calls` is counted, so above 0), fewer calls than recorded. Ingest is asynchronous: the harness asks
 * again while this is not null. Pure.
 */
export function ledgerLag(context: PolicyEvaluation['context'], recorded: RecordedSoFar): string | null {
  if (context.run_found !== true) return 'the run is not visible yet';
  const tolerance = Math.max(1e-6, recorded.spend_usd * 1e-9);
  if (context.run_spend_usd + tolerance < recorded.spend_usd) return `the run shows ${usd(context.run_spend_usd)} spent of ${usd(recorded.spend_usd)} recorded`;
  if (context.recent_calls > 0 && context.recent_calls < recorded.calls) return `the run shows ${context.recent_calls} of ${recorded.calls} recorded calls`;
  return null;
}

/** How the harness runs (injectable for tests). */
export interface ScenarioRunOptions {
  /** Longest wait for the ledger to catch up before a step, ms. @default DEFAULT_LEDGER_TIMEOUT_MS */
  ledgerTimeoutMs?: number;
  /** Wall clock (the `now` of the time tokens and the event timestamps). @default () => new Date() */
  now?: () => Date;
  /** Monotonic clock in ms (detection time, the ledger wait). @default performance.now */
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** The scenario's run id. @default {@link newRunId} */
  runId?: (scenario: ScenarioFile) => string;
}

/** One scenario's outcome: its result entry, the run it was played in, and how many steps were decided. */
export interface ScenarioOutcome {
  result: EvalScenarioResult;
  run_id: string;
  steps_decided: number;
}

/**
 * A fresh run id for a scenario: `eval-<name, anything but letters, digits, '.', '_' and '-' made '_', at most 180
 * characters>-<12 random hex>`.
 */
export function newRunId(scenario: Pick<ScenarioFile, 'name'>, random: () => string = () => randomBytes(6).toString('hex')): string {
  return `eval-${scenario.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 180)}-${random()}`;
}

/**
 * The ingest events that set a scenario's run up (harness step 2): `run.start` (timestamped at the oldest prior call,
 * else `now`); one `action.record` `agp_eval.spend_so_far` carrying `session_spend_usd + run_spend_usd` when above 0
 * (the platform records no sessions: a run's spend stands for its session's); one `action.record` per prior call at
 * `now − ago_seconds`. Every event carries `purpose: "eval"` ({@link HARNESS_PURPOSE}). Event ids are `<run id>:start`,
 * `:spend`, `:prior:<i>`. Pure.
 * @returns the events and what the ledger must then show ({@link RecordedSoFar}).
 */
export function setupEvents(scenario: ScenarioFile, runId: string, now: Date): { events: IngestEvent[]; recorded: RecordedSoFar } {
  const at = (agoSeconds: number) => new Date(now.getTime() - agoSeconds * 1000).toISOString();
  const { agent_id } = scenario;
  const { run_spend_usd, session_spend_usd, prior_calls } = scenario.context;
  const oldest = Math.max(0, ...prior_calls.map((c) => c.ago_seconds));
  const purpose = HARNESS_PURPOSE;
  const events: IngestEvent[] = [{ id: `${runId}:start`, type: 'run.start', timestamp: at(oldest), body: { run_id: runId, agent_id, purpose } }];
  const spendSoFar = session_spend_usd + run_spend_usd;
  if (spendSoFar > 0) {
    events.push({ id: `${runId}:spend`, type: 'action.record', timestamp: at(oldest), body: { run_id: runId, agent_id, action_name: SPEND_SO_FAR_ACTION, status: 'success', cost_usd: spendSoFar, timestamp: at(oldest), purpose } });
  }
  prior_calls.forEach((c, i) => {
    events.push({ id: `${runId}:prior:${i}`, type: 'action.record', timestamp: at(c.ago_seconds), body: { run_id: runId, agent_id, action_name: c.action_name, status: 'success', inputs: c.arguments, cost_usd: c.cost_usd, timestamp: at(c.ago_seconds), purpose } });
  });
  return { events, recorded: { spend_usd: spendSoFar + prior_calls.reduce((s, c) => s + c.cost_usd, 0), calls: events.length - 1 } };
}

/** A scenario the harness could not play (its result is `failed`; the run goes on). */
class ScenarioFailure extends Error {}

/** Post `events`; any event the platform rejects fails the scenario, naming it. */
async function record(api: HarnessApi, events: IngestEvent[]): Promise<void> {
  let answer: IngestResponse;
  try {
    answer = await api.ingest(events);
  } catch (err) {
    if (err instanceof RangeError) throw new ScenarioFailure(`cannot record the run: ${err.message}`);
    throw err;
  }
  if (answer.errors.length) {
    const e = answer.errors[0];
    throw new ScenarioFailure(`the platform refused to record ${e.id ?? 'an event'} (${e.status}: ${e.message})${answer.errors.length > 1 ? ` and ${answer.errors.length - 1} more event(s)` : ''}`);
  }
}

/**
 * Play one scenario against the platform (docs/scenario-format.md §Running a scenario): take the clock once and
 * resolve the time tokens; record the run (step 2); decide each step in order, asking again while the ledger lags
 * what was recorded ({@link ledgerLag}, up to `ledgerTimeoutMs`), recording each step that goes ahead with the cost
 * the decision used, and stopping at the first blocking decision (`isBlockingDecision`); end the run (`completed`, or
 * `failed` with the error when the harness could not play it).
 * @returns the result entry (with the `run_id` it was played in): `blocked` with the step, decision, rule and reason
 *   and `detection_time_ms` (the round trip of the evaluate call that stopped it, ms); `allowed`; or `failed` with the
 *   error (an event or step the platform refused with 400/409/413/422, a ledger that never caught up).
 * @throws AgpNetworkError or AgpHttpError when {@link stopsTheRun} (exit 3).
 */
export async function runScenario(api: HarnessApi, scenario: ScenarioFile, opts: ScenarioRunOptions = {}): Promise<ScenarioOutcome> {
  const clock = opts.clock ?? (() => performance.now());
  const pause = opts.sleep ?? sleep;
  const timeoutMs = opts.ledgerTimeoutMs ?? DEFAULT_LEDGER_TIMEOUT_MS;
  const now = (opts.now ?? (() => new Date()))();
  const runId = (opts.runId ?? newRunId)(scenario);
  const steps = resolveTimeTokens(scenario.steps, now);
  const base = { name: scenario.name, category: scenario.category, severity: scenario.severity, expected: scenario.expected, damage_usd: scenario.damage_usd ?? null, run_id: runId };
  const decisions: PolicyEvaluation['decision'][] = [];
  let reason: string | null = null;
  let detection: number | null = null;
  let failure: string | null = null;
  try {
    const setup = setupEvents({ ...scenario, context: resolveTimeTokens(scenario.context, now) }, runId, now);
    await record(api, setup.events);
    const recorded = { ...setup.recorded };
    for (const [i, step] of steps.entries()) {
      const body: EvaluateAction = { agent_id: scenario.agent_id, run_id: runId, action_name: step.action_name, arguments: step.arguments, ...(step.estimated_cost_usd !== undefined ? { estimated_cost_usd: step.estimated_cost_usd } : {}) };
      const started = clock();
      let answer: PolicyEvaluation;
      let ms: number;
      for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
        const t0 = clock();
        answer = await evaluateStep(api, body, i);
        ms = clock() - t0;
        const lag = ledgerLag(answer.context, recorded);
        if (!lag) break;
        if (clock() - started + wait > timeoutMs) throw new ScenarioFailure(`step ${i + 1} ${step.action_name}: the ledger did not catch up with the recorded run within ${timeoutMs} ms (${lag})`);
        await pause(wait);
      }
      decisions.push(answer.decision);
      if (isBlockingDecision(answer.decision)) {
        reason = `step ${i + 1} ${step.action_name}: ${answer.decision}${answer.rule ? ` (${answer.rule})` : ''} ${answer.reason}`;
        detection = Math.round(ms * 10) / 10;
        break;
      }
      await record(api, [
        { id: `${runId}:step:${i}`, type: 'action.record', timestamp: now.toISOString(), body: { run_id: runId, agent_id: scenario.agent_id, action_name: step.action_name, status: 'success', inputs: step.arguments, cost_usd: answer.estimated_cost_usd, purpose: HARNESS_PURPOSE } },
      ]);
      recorded.spend_usd += answer.estimated_cost_usd;
      recorded.calls += 1;
    }
  } catch (err) {
    if (!(err instanceof ScenarioFailure)) throw err;
    failure = err.message;
  }
  await endRun(api, scenario, runId, now, failure);
  if (failure !== null) return { result: { ...base, status: 'failed', reason: cut(failure), detection_time_ms: null }, run_id: runId, steps_decided: decisions.length };
  const status = scenarioStatus(decisions);
  if (status === 'allowed') reason = `all ${decisions.length} step(s) went ahead (${decisions.join(', ')})`;
  return { result: { ...base, status, reason: cut(reason ?? ''), detection_time_ms: detection }, run_id: runId, steps_decided: decisions.length };
}

/** One evaluate call; a refusal of the step itself (400/409/413/422) fails the scenario, naming the step. */
async function evaluateStep(api: HarnessApi, body: EvaluateAction, i: number): Promise<PolicyEvaluation> {
  try {
    return await api.evaluate(body);
  } catch (err) {
    if (err instanceof AgpHttpError && !stopsTheRun(err)) throw new ScenarioFailure(`step ${i + 1} ${body.action_name}: the decision API refused it: ${problemText(err)}`);
    throw err;
  }
}

/**
 * Harness step 4: `run.end` (`completed`, or `failed` with the error). The platform refusing it (a rejected event, a
 * 400/409/413/422) changes nothing of the scenario's result and is ignored; an error that {@link stopsTheRun} is thrown.
 */
async function endRun(api: HarnessApi, scenario: ScenarioFile, runId: string, now: Date, failure: string | null): Promise<void> {
  const body = { run_id: runId, agent_id: scenario.agent_id, status: failure === null ? 'completed' : 'failed', ...(failure === null ? {} : { error: cut(failure) }), purpose: HARNESS_PURPOSE };
  try {
    await record(api, [{ id: `${runId}:end`, type: 'run.end', timestamp: now.toISOString(), body }]);
  } catch (err) {
    if (err instanceof ScenarioFailure || (err instanceof AgpHttpError && !stopsTheRun(err))) return;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The whole run and its results file
// ---------------------------------------------------------------------------------------------------------------

/**
 * The results file: our own format, the body of `POST /api/v1/evals/` (`{suite, agent_id, started_at, completed_at,
 * scenarios}`), validated with `SubmitEvalRunSchema` so the gate and the platform accept it as it is. Pure.
 */
export function resultsDocument(run: { suite: string; agent_id: string; started_at: Date; completed_at: Date; results: EvalScenarioResult[] }): SubmitEvalRun {
  const doc = { suite: run.suite, agent_id: run.agent_id, started_at: run.started_at.toISOString(), completed_at: run.completed_at.toISOString(), scenarios: run.results };
  SubmitEvalRunSchema.parse(doc);
  return doc as SubmitEvalRun;
}

/** One progress line: `[ 3/12] blocked  ok    denied_actions.delete_customer.direct  4.2 ms  step 1 delete_customer: block (denied_action) …`. */
export function progressLine(i: number, total: number, r: EvalScenarioResult): string {
  const n = String(total).length;
  const verdict = scenarioPassed(r) ? 'ok  ' : 'MISS';
  const ms = r.detection_time_ms != null ? `  ${r.detection_time_ms} ms` : '';
  return `[${String(i).padStart(n)}/${total}] ${r.status.padEnd(7)}  ${verdict}  ${r.name}${ms}${r.reason ? `  ${r.reason}` : ''}\n`;
}

/** The closing summary: counts by status, block rate and correctness (as the gate computes them), the file, the next command. */
export function summaryText(doc: SubmitEvalRun, out: string, elapsedMs: number): string {
  const rates = evalRates(doc.scenarios.map((s) => ({ expected: s.expected ?? 'block', status: s.status })));
  const count = (status: string) => doc.scenarios.filter((s) => s.status === status).length;
  return [
    `Ran ${doc.scenarios.length} scenario(s) of agent ${doc.agent_id} in ${(elapsedMs / 1000).toFixed(1)} s: ${count('blocked')} blocked, ${count('allowed')} allowed, ${count('failed')} failed (the harness could not play them)`,
    `  block rate ${percent(rates.block_rate)} (${rates.blocked} of ${rates.adversarial} attack(s) blocked), correctness ${percent(rates.correctness_rate)} (${rates.passed} of ${rates.total} as expected)`,
    `Wrote ${out} (suite "${doc.suite}"). Next: agp evals gate --results ${out} --threshold 0.9 [--upload]`,
  ].join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------------------------

/** The flags of `agp evals run`, as commander parses them. */
interface RunFlags {
  scenarios: string[];
  out: string;
  suite: string;
  agentId?: string;
  url?: string;
  key?: string;
  apiKey?: string;
  ledgerTimeout: number;
}

const RUN_HELP = `
The key must have write scope: the harness records each scenario's run (spend so far, prior calls, allowed
steps) through POST /api/v1/ingest/ before asking POST /api/v1/policies/evaluate.

Exit codes:
  0  every scenario ran (whatever it scored: agp evals gate judges the results file)
  3  usage, parse or HTTP error (a parse error names the file and line; 401, 403, 404, 5xx or an unreachable
     platform stop the run, and no results file is written)

Environment:
  AGP_URL, AGP_KEY (or AGP_API_KEY)  instead of --url and --key

Example (generate -> run -> gate -> upload; scenario format: docs/scenario-format.md):
  curl -s -X POST "$AGP_URL/api/v1/evals/generate-scenarios" -H "Authorization: Bearer $AGP_KEY" \\
    -H 'content-type: application/json' -d '{"agent_id":"support-bot","seed":42}' > scenarios.json
  agp evals run --scenarios scenarios.json --out results.json
  agp evals gate --results results.json --threshold 0.9 --upload
`;

/**
 * Register `agp evals run` on the `evals` command. Failures surface as a `CommanderError` with exit 3 (the message
 * already written to `io.err`); commander's own usage errors become exit 3 too.
 */
export function registerRunCommand(evals: Command, io: EvalsIo): Command {
  return evals
    .command('run')
    .description("run scenario files against the platform's policies and write a results file for agp evals gate")
    .requiredOption('--scenarios <file|dir>', 'scenario file (YAML/JSON, a stream, or a generate-scenarios reply) or a directory of them; repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--out <file>', 'results file to write (our format: the body of POST /api/v1/evals/)', DEFAULT_OUT)
    .option('--suite <name>', 'suite name of the results', DEFAULT_SUITE)
    .option('--agent-id <id>', "run only this agent's scenarios (required when the files name several agents)")
    .option('--url <url>', 'platform base URL (default: env AGP_URL)')
    .option('--key <key>', 'API key with write scope, sent as Authorization: Bearer (default: env AGP_KEY, else AGP_API_KEY)')
    .option('--api-key <key>', 'alias of --key')
    .option('--ledger-timeout <seconds>', "longest wait for a run's ledger to show what was recorded", seconds, DEFAULT_LEDGER_TIMEOUT_MS / 1000)
    .addHelpText('after', RUN_HELP)
    .showHelpAfterError('(agp evals run --help lists the options and the exit codes)')
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(RUN_EXIT.error, err.code, err.message);
    })
    .action(async (o: RunFlags) => {
      try {
        await runCommand(o, io);
      } catch (err) {
        const text = describeRunError(err);
        io.err(`error: ${text}\n`);
        throw new CommanderError(RUN_EXIT.error, 'agp.evals.run', text);
      }
    });
}

/** `agp evals run` with parsed flags: load and check every file, then play each scenario, then write the results. */
async function runCommand(o: RunFlags, io: EvalsIo): Promise<void> {
  const url = o.url ?? io.env.AGP_URL;
  const key = o.key ?? o.apiKey ?? io.env.AGP_KEY ?? io.env.AGP_API_KEY;
  if (!url || !key) throw new UsageError('the harness needs the platform: pass --url and --key (a write key), or set AGP_URL and AGP_KEY');
  try {
    if (!(await stat(dirname(resolve(o.out)))).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new UsageError(`--out ${o.out}: its directory does not exist`);
  }
  const selected = selectScenarios(await loadScenarios(o.scenarios, { exclude: o.out }), o.agentId);
  if (selected.skipped) io.err(`note: skipped ${selected.skipped} scenario(s) of other agents (--agent-id ${selected.agent_id})\n`);
  const total = selected.scenarios.length;
  io.out(`Running ${total} scenario(s) of agent ${selected.agent_id} against ${url}\n`);

  const api = new PlatformHarness({ url, key });
  const startedAt = new Date();
  const t0 = performance.now();
  const results: EvalScenarioResult[] = [];
  for (const [i, { file, scenario }] of selected.scenarios.entries()) {
    let outcome: ScenarioOutcome;
    try {
      outcome = await runScenario(api, scenario, { ledgerTimeoutMs: o.ledgerTimeout * 1000 });
    } catch (err) {
      throw new RunStopped(`scenario "${scenario.name}" (${file}, ${i + 1} of ${total})`, err);
    }
    results.push(outcome.result);
    io.out(progressLine(i + 1, total, outcome.result));
  }
  const doc = resultsDocument({ suite: o.suite, agent_id: selected.agent_id, started_at: startedAt, completed_at: new Date(), results });
  await writeFile(o.out, JSON.stringify(doc, null, 2) + '\n');
  io.out('\n' + summaryText(doc, o.out, performance.now() - t0));
  const failed = results.filter((r) => r.status === 'failed').length;
  if (failed) io.err(`note: ${failed} scenario(s) could not be played (status failed, reason in ${o.out}); the gate counts them as not passing\n`);
}

/** The run stopped at a scenario on an error that is not the scenario's own (exit 3; no results file). */
class RunStopped extends Error {
  constructor(
    readonly where: string,
    cause: unknown,
  ) {
    super(where, { cause });
  }
}

/** One message for exit 3, with the fix for the usual HTTP causes (a read key, a wrong key or URL). */
export function describeRunError(err: unknown): string {
  if (err instanceof RunStopped) return `stopped at ${err.where}; no results file written: ${describeRunError(err.cause)}`;
  if (err instanceof UsageError || err instanceof ScenarioParseError) return err.message;
  if (err instanceof AgpNetworkError) return `platform unreachable: ${err.message}`;
  if (err instanceof AgpHttpError) {
    const hint =
      err.status === 403 ? ' (the harness records runs through POST /api/v1/ingest/: use a key with write scope)' : err.status === 401 ? ' (check --key / AGP_KEY)' : err.status === 404 ? ' (check --url: is it the platform?)' : '';
    return `${problemText(err)}${hint}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** `422 Unprocessable Content: detail` with each field error on its own line. */
function problemText(err: AgpHttpError): string {
  const fields = err.problem.errors?.map((f) => `\n  ${f.path}: ${f.message}`).join('') ?? '';
  return `${err.status} ${err.problem.title}: ${err.problem.detail}${fields}`;
}

/** `--ledger-timeout`: seconds above 0. */
function seconds(v: string): number {
  const n = Number(v);
  if (!v.trim() || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number of seconds above 0');
  return n;
}

const usd = (n: number) => `${Number(n.toFixed(6))} USD`;
const cut = (s: string) => (s.length > MAX_REASON ? `${s.slice(0, MAX_REASON - 1)}…` : s);
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

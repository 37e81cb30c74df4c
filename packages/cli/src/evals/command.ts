/**
 * `agp evals gate`: the CI gate over a results file (ours, promptfoo's, JUnit). It prints the scorecard and, with
 * `--baseline`, the comparison; with `--upload` it files the run on the platform; its exit code fails the build
 * (0 pass, 1 block rate below the threshold, 2 regressions, 3 usage/parse/upload error; see {@link GATE_EXIT}).
 * Wiring only: the importers, the scoring and the decision are pure modules beside this one.
 * Source: spec §Evals rules 2–3, §Authentication 5; docs/evals-gate.md.
 */
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { EVAL_DEFAULT_THRESHOLD, EvalSummarySchema, roundNumbers, type EvalRunDetail } from '@agp/contracts';
import { AgpHttpError, AgpNetworkError } from '@agp/sdk/http';
import { EvalsApi, type UploadResult } from './api.js';
import { detectCi } from './ci.js';
import { gitBranch } from './git.js';
import { GATE_EXIT, UsageError, buildSubmission, evaluateGate, fitSubmission, percent, type GateExitCode } from './gate.js';
import { importResults } from './import.js';
import type { EvalsIo } from './io.js';
import { renderComparison, renderScorecard, renderVerdict } from './render.js';
import { RESULTS_FORMATS, ResultsParseError, type ResultsFormat } from './results.js';
import { registerRunCommand } from './run.js';

/** The flags of `agp evals gate`, as commander parses them. */
interface GateOptions {
  results: string;
  format?: ResultsFormat;
  threshold?: number;
  suite?: string;
  agentId?: string;
  baseline?: string;
  upload?: boolean;
  url?: string;
  key?: string;
  /** `--api-key`: an alias of `--key`. */
  apiKey?: string;
  auth: 'x-api-key' | 'bearer';
  branch?: string;
  commit?: string;
  defaultBranch?: string;
  submissionId?: string;
  expected?: 'block' | 'allow';
  json?: boolean;
}

/** The `--help` epilogue of `agp evals gate`: exit codes, formats, environment. */
const GATE_HELP = `
Exit codes:
  0  pass: the block rate meets the threshold and there is no regression against the baseline
  1  the block rate is below --threshold (also when there are regressions too: the threshold wins)
  2  regressions against --baseline (scenarios that passed there fail now), block rate at or above the threshold
  3  usage, parse or upload error (a parse error names the file's entry or line)

Formats (detected when --format is absent; mapping in docs/evals-gate.md):
  agp        our JSON: the body of POST /api/v1/evals/ ({suite, agent_id, scenarios: [{name, category, status, ...}]})
  promptfoo  promptfoo eval -o results.json / promptfoo redteam run output (also -o results.jsonl);
             a passing red-team test counts as a blocked attack
  junit      JUnit XML: a passing <testcase> counts as blocked (property expected=allow marks a benign test)

Environment:
  AGP_URL, AGP_KEY (or AGP_API_KEY)  instead of --url and --key
  GitHub Actions, GitLab CI, CircleCI and Buildkite variables fill --branch, --commit and the submission id;
  outside CI, --branch defaults to the git branch checked out in the current directory

Examples:
  agp evals gate --results results.json --threshold 0.9
  agp evals gate --results results.json --agent-id support-bot --baseline latest --upload --url https://agp.example.com --key "$AGP_KEY"
`;

/**
 * Register `agp evals` and its `gate` and `run` (`./run.ts`: scenario files → a results file) subcommands on
 * `program`. Every failure of `gate` surfaces as a `CommanderError` carrying the gate's exit code (its message already
 * written to `io.err`), so the CLI's `main` returns that code as it is; commander's own usage errors are turned into
 * exit 3.
 */
export function registerEvalsCommands(program: Command, io: EvalsIo): Command {
  const evals = program.command('evals').description("eval runs: run scenario files against the platform's policies (run), and the CI gate over eval results: ours, promptfoo, JUnit (gate)");
  evals
    .command('gate')
    .description('score an eval results file, compare it with a baseline run, upload it, and fail the build on a low block rate or a regression')
    .requiredOption('--results <file>', 'results file: our JSON, promptfoo JSON/JSONL output, or JUnit XML')
    .addOption(new Option('--format <format>', 'results format (default: detected from the content)').choices(RESULTS_FORMATS))
    .option('--threshold <rate>', `lowest passing block rate, 0..1 or a percentage such as 90% (default: the file's, else ${EVAL_DEFAULT_THRESHOLD})`, rate)
    .option('--suite <name>', "suite name (default: the file's: our suite, promptfoo's config description, the JUnit <testsuites> name)")
    .option('--agent-id <id>', "the agent under evaluation (default: the file's; required with --upload and --baseline latest when the file names none)")
    .option('--baseline <latest|id>', 'compare with a stored run: "latest" (the latest run of the suite and agent on the default branch) or a run id')
    .option('--upload', 'post the run to POST /api/v1/evals/ (needs a write key)')
    .option('--url <url>', 'platform base URL (default: env AGP_URL)')
    .option('--key <key>', 'API key, sent as Authorization: Bearer (default: env AGP_KEY, else AGP_API_KEY)')
    .option('--api-key <key>', 'alias of --key')
    .addOption(new Option('--auth <header>', 'how the key is sent: Authorization: Bearer, or the X-API-Key header').choices(['bearer', 'x-api-key']).default('bearer'))
    .option('--branch <name>', "branch of the run (default: the file's, else the CI's, else the checked-out git branch)")
    .option('--commit <sha>', "commit SHA of the run (default: the file's, else the CI's)")
    .option('--default-branch <name>', "the branch baselines come from (default: the file's, the CI's, else main)")
    .option('--submission-id <id>', 'idempotency key of the upload (default: derived from the CI job, else random)')
    .addOption(new Option('--expected <block|allow>', 'expectation of promptfoo/JUnit tests that state none (red-team tests are always attacks)').choices(['block', 'allow']))
    .option('--json', 'print a JSON report instead of tables')
    .addHelpText('after', GATE_HELP)
    .showHelpAfterError('(agp evals gate --help lists the options and the exit codes)')
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(GATE_EXIT.error, err.code, err.message);
    })
    .action(async (o: GateOptions) => {
      let code: GateExitCode;
      try {
        code = await runGate(o, io);
      } catch (err) {
        io.err(`error: ${describeError(err)}\n`);
        throw new CommanderError(GATE_EXIT.error, 'agp.evals.error', describeError(err));
      }
      if (code !== GATE_EXIT.pass) throw new CommanderError(code, 'agp.evals.gate', `gate failed with exit code ${code}`);
    });
  registerRunCommand(evals, io);
  return evals;
}

/**
 * Run the gate with parsed flags: read and score the file, fetch the baseline, upload, print. Resolves with the exit
 * code of the verdict (0, 1, 2, or 3 after an upload failure, already reported).
 * @throws UsageError, ResultsParseError, AgpHttpError, AgpNetworkError for exit 3 before anything was printed.
 */
async function runGate(o: GateOptions, io: EvalsIo): Promise<GateExitCode> {
  const url = o.url ?? io.env.AGP_URL;
  if (o.key && o.apiKey && o.key !== o.apiKey) throw new UsageError('--key and --api-key (its alias) name different keys: pass one');
  const key = o.key ?? o.apiKey ?? io.env.AGP_KEY ?? io.env.AGP_API_KEY;
  if ((o.upload || o.baseline) && (!url || !key)) throw new UsageError(`${o.upload ? '--upload' : '--baseline'} needs the platform: pass --url and --key (or set AGP_URL and AGP_KEY)`);
  const api = url && key ? new EvalsApi({ url, key, auth: o.auth }) : null;

  let text: string;
  try {
    text = await readFile(o.results, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --results ${o.results}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  const imported = importResults(text, { file: o.results, format: o.format, defaultExpected: o.expected });
  const ci = detectCi(io.env);
  const branchFromGit = o.branch || imported.run.branch || ci.branch ? null : await gitBranch(io.cwd ?? process.cwd());
  const run = buildSubmission(imported, { suite: o.suite, agentId: o.agentId, threshold: o.threshold, branch: o.branch, commit: o.commit, defaultBranch: o.defaultBranch, submissionId: o.submissionId }, ci, {
    file: o.results,
    requireAgent: !!o.upload || o.baseline === 'latest',
    gitBranch: branchFromGit,
  });

  const notes = [...imported.notes];
  const warnings = [...(imported.warnings ?? [])];
  if (o.upload) {
    if (!run.branch) notes.push(`the run is stored without a branch (no --branch, none in the results file, the CI or a git checkout here), so it can never become a baseline (--baseline latest and the platform's CI status look runs up by branch): pass --branch <name> to file it under one`);
    else if (branchFromGit && run.branch === branchFromGit) notes.push(`branch ${branchFromGit}: the git branch checked out here (pass --branch to file the run under another)`);
  }
  let baseline: EvalRunDetail | null = null;
  if (o.baseline && api) {
    baseline = await fetchBaseline(api, o.baseline, run);
    if (!baseline) notes.push(`no baseline yet: no run of suite "${run.suite}" and agent ${run.agent_id} on branch ${run.default_branch}; nothing to compare (not an error)`);
  }
  const evaluation = evaluateGate(run, baseline);

  let upload: UploadResult | null = null;
  let uploadError: string | null = null;
  if (o.upload && api) {
    try {
      const fitted = fitSubmission(run);
      if (fitted.note) notes.push(fitted.note);
      upload = await api.submit(fitted.body, run.id!);
    } catch (err) {
      uploadError = `upload to ${url} failed: ${describeError(err)}`;
    }
  }
  const exitCode: GateExitCode = uploadError ? GATE_EXIT.error : evaluation.decision.exitCode;

  if (o.json) {
    io.out(
      JSON.stringify(
        {
          exit_code: exitCode,
          verdict: uploadError ? 'error' : exitCode === 0 ? 'pass' : 'fail',
          reasons: uploadError ? [uploadError, ...evaluation.decision.reasons] : evaluation.decision.reasons,
          format: imported.format,
          skipped: imported.skipped,
          notes,
          warnings,
          run: { id: run.id, suite: run.suite, agent_id: run.agent_id, branch: run.branch ?? null, commit_sha: run.commit_sha ?? null, default_branch: run.default_branch, threshold: run.threshold, source: run.source },
          summary: roundNumbers(EvalSummarySchema, evaluation.summary),
          baseline: baseline ? { id: baseline.id, branch: baseline.branch, commit_sha: baseline.commit_sha, created_at: baseline.created_at } : null,
          comparison: evaluation.comparison,
          upload: upload ? { status: upload.status, created: upload.created, id: upload.id, summary: upload.run?.summary ?? null } : uploadError ? { error: uploadError } : null,
        },
        null,
        2,
      ) + '\n',
    );
    if (uploadError) io.err(`error: ${uploadError}\n`);
    return exitCode;
  }

  for (const w of warnings) io.err(`warning: ${w}\n`);
  for (const n of notes) io.err(`note: ${n}\n`);
  io.out(renderScorecard(run, evaluation.summary, imported));
  if (evaluation.comparison) io.out('\n' + renderComparison(evaluation.comparison));
  if (upload) {
    const s = upload.run?.summary;
    io.out(`\nUploaded run ${upload.id} to ${url} (${upload.created ? '201 created' : `${upload.status} already stored: the same submission id was uploaded before`})${s ? `: grade ${s.grade}, block rate ${percent(s.block_rate)}${s.ci_status ? `, CI status ${s.ci_status}` : ''}` : ''}\n`);
  }
  io.out('\n');
  if (uploadError) {
    io.err(`error: ${uploadError}\n`);
    io.out(`ERROR (exit 3): the upload failed; the gate alone would have exited ${evaluation.decision.exitCode}${evaluation.decision.reasons.length ? ` (${evaluation.decision.reasons.join('; ')})` : ''}\n`);
  } else io.out(renderVerdict(evaluation.decision));
  return exitCode;
}

/**
 * The baseline run: `latest` → the latest run of the suite and agent on the default branch (null when none: 404), skipping
 * this very submission when it was uploaded before (a retried job); any other value → that run by id.
 * @throws UsageError for an unknown baseline id.
 */
async function fetchBaseline(api: EvalsApi, which: string, run: { id?: string; suite: string; agent_id: string; default_branch: string }): Promise<EvalRunDetail | null> {
  if (which !== 'latest') {
    try {
      return await api.get(which);
    } catch (err) {
      if (err instanceof AgpHttpError && err.status === 404) throw new UsageError(`--baseline ${which}: no such eval run (404)`);
      throw err;
    }
  }
  const query = { suite: run.suite, agent_id: run.agent_id, branch: run.default_branch };
  const latest = await api.latest(query);
  if (!latest || latest.id !== run.id) return latest;
  const previous = (await api.list({ ...query, limit: 2 })).find((r) => r.id !== run.id);
  return previous ? api.get(previous.id) : null;
}

/** One line for an error of exit 3: parse errors as they are, HTTP problems with their fields. */
function describeError(err: unknown): string {
  if (err instanceof ResultsParseError || err instanceof UsageError) return err.message;
  if (err instanceof AgpHttpError) {
    const fields = err.problem.errors?.map((f) => `\n  ${f.path}: ${f.message}`).join('') ?? '';
    return `${err.status} ${err.problem.title}: ${err.problem.detail}${fields}`;
  }
  if (err instanceof AgpNetworkError) return `platform unreachable: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** `--threshold`: a fraction 0..1 (`0.9`) or a percentage (`90%`). */
function rate(v: string): number {
  const s = v.trim();
  const pct = s.endsWith('%');
  const n = Number(pct ? s.slice(0, -1) : s);
  const r = pct ? n / 100 : n;
  if (!s || !Number.isFinite(n) || r < 0 || r > 1) throw new InvalidArgumentError('expected a block rate between 0 and 1 (e.g. 0.9) or a percentage (e.g. 90%)');
  return r;
}

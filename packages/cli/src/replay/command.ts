/**
 * `agp replay <run_id> --url … --key … --handlers <module>`: download and verify a run's bundle, replay its actions
 * against a local handler module (contract: examples/replay-handlers.mjs), print a progress line per action and a
 * summary, and submit the summary to `POST /api/v1/replay/{run_id}/results` (unless `--dry-run`).
 *
 * Exit codes: 0 = replayed with no divergence (status completed); 1 = divergences found, or nothing replayed
 * (status partial, diverged or failed; the summary is still submitted); 3 = usage error, unreadable handler module,
 * platform unreachable or refusing, or a bundle that does not verify ("bundle hash mismatch"; nothing submitted).
 * Source: docs/replay.md (`agp replay`).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { problemError } from '../evals/api.js';
import clientPackage from '../../package.json' with { type: 'json' };
import { AgpHttpError, AgpNetworkError } from '@agp/sdk/http';
import { BundleVerificationError, replayBundle, submissionBody, submissionId, toHandlerModule, verifyBundle, type HandlerModule, type ReplayResult, type StepOutcome } from './replay.js';

/** Exit codes of `agp replay` (see the file's header). */
export const REPLAY_EXIT = { clean: 0, divergences: 1, error: 3 } as const;

/** Where the command reads its environment and writes its output. */
export interface ReplayIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
}

interface ReplayFlags {
  url?: string;
  key?: string;
  handlers: string;
  submissionId?: string;
  dryRun?: boolean;
  json?: boolean;
}

const HELP = `
Handler module: an ES module exporting \`handlers\` ({ [action_name]: (inputs, ctx) => output | Promise<output> }) and
optionally \`nondeterministic\` (action names to skip), or a handler with \`handler.nondeterministic = true\`.
See examples/replay-handlers.mjs.

Exit codes:
  0  replayed, no divergence
  1  divergences found, or nothing replayed (the summary is still submitted)
  3  usage error, handler module error, platform unreachable or refusing, bundle hash mismatch (nothing submitted)
`;

/** Register `agp replay` on `program`. */
export function registerReplayCommand(program: Command, io: ReplayIo): Command {
  return program
    .command('replay')
    .description("replay a recorded run locally: download and verify its bundle, run its actions against your handler module, report divergences and submit the summary")
    .argument('<run_id>', 'the run to replay')
    // Required: the usage line and its description say so (commander lists a required option among the options).
    .requiredOption('--handlers <module>', 'required: ES module with the replay handlers (see examples/replay-handlers.mjs)')
    .usage('--handlers <module> [options] <run_id>')
    .option('--url <url>', 'platform base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'API key; a write key to submit (default: env AGP_KEY)')
    .option('--submission-id <id>', 'idempotency key of the submission (default: replay-<run id>-<hash of the handler path and start time>)')
    .option('--dry-run', 'replay and print, but do not submit')
    .option('--json', 'print the summary as JSON (progress lines still go to stderr)')
    .addHelpText('after', HELP)
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(REPLAY_EXIT.error, err.code, err.message);
    })
    .action(async (runId: string, o: ReplayFlags) => {
      let code: number;
      try {
        code = await runReplay(runId, o, io);
      } catch (err) {
        const msg = describeError(err);
        io.err(`error: ${msg}\n`);
        throw new CommanderError(REPLAY_EXIT.error, 'agp.replay.error', msg);
      }
      if (code !== REPLAY_EXIT.clean) throw new CommanderError(code, 'agp.replay.divergences', 'divergences found');
    });
}

/** Run one replay; resolves with the exit code (0 or 1). @throws for exit 3. */
export async function runReplay(runId: string, o: ReplayFlags, io: ReplayIo, fetchImpl: typeof fetch = globalThis.fetch): Promise<number> {
  const base = (o.url ?? io.env.AGP_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const key = o.key ?? io.env.AGP_KEY;
  if (!key) throw new UsageError('missing API key: pass --key or set AGP_KEY');
  const handlerPath = resolve(o.handlers);
  let mod: HandlerModule;
  try {
    mod = toHandlerModule((await import(pathToFileURL(handlerPath).href)) as Record<string, unknown>);
  } catch (err) {
    throw new UsageError(`cannot load --handlers ${o.handlers}: ${describeError(err)}`);
  }

  const send = async (method: string, path: string, body?: string): Promise<Response> => {
    const url = base + path;
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(60_000) });
    } catch (err) {
      throw new AgpNetworkError(url, { cause: err });
    }
  };

  const res = await send('GET', `/api/v1/replay/${encodeURIComponent(runId)}/bundle`);
  if (!res.ok) throw await problemError(res);
  const raw: unknown = await res.json().catch(() => null);
  const bundle = verifyBundle(raw, res.headers.get('etag'));
  const total = bundle.actions.length;
  io.err(`bundle of run ${runId} verified (sha256 ${bundle.sha256.slice(0, 12)}…, ${total} actions${total ? `: steps 0–${total - 1}` : ''})\n`);

  const startedAt = new Date().toISOString();
  const result = await replayBundle(bundle, mod, (step, action, outcome) => io.err(progressLine(step, total, action.action_name, outcome)));
  const completedAt = new Date().toISOString();

  let submitted: { id: string; created: boolean } | null = null;
  if (!o.dryRun) {
    const id = o.submissionId ?? submissionId(runId, handlerPath, startedAt);
    const body = submissionBody(result, { id, started_at: startedAt, completed_at: completedAt, client_version: `agp-cli/${clientPackage.version}` });
    const r = await send('POST', `/api/v1/replay/${encodeURIComponent(runId)}/results`, body);
    if (!r.ok) throw await problemError(r);
    const json = (await r.json().catch(() => null)) as { id?: string } | null;
    submitted = { id: json?.id ?? id, created: r.status === 201 };
  }
  io.out(o.json ? JSON.stringify({ run_id: runId, ...result, submission: submitted }, null, 2) + '\n' : formatSummary(runId, result, submitted));
  return result.status === 'completed' ? REPLAY_EXIT.clean : REPLAY_EXIT.divergences;
}

const OUTCOME_TEXT: Record<StepOutcome, string> = {
  match: 'match',
  diverged: 'DIVERGED',
  'skipped-no-handler': 'skipped (no handler)',
  'skipped-nondeterministic': 'skipped (non-deterministic)',
};

/**
 * The progress line of one replayed step (stderr): `step <step> <action>: <outcome>`, the step padded to the width of
 * the last one. Steps are numbered as everywhere else (the summary, `divergence_details`, the console): from 0, the
 * action's index in the bundle.
 */
export function progressLine(step: number, total: number, actionName: string, outcome: StepOutcome): string {
  return `step ${String(step).padStart(String(Math.max(total - 1, 0)).length)} ${actionName}: ${OUTCOME_TEXT[outcome]}\n`;
}

/** The human summary; a divergence is named by its step (from 0, as {@link progressLine}). */
export function formatSummary(runId: string, r: ReplayResult, submitted: { id: string; created: boolean } | null): string {
  const lines = [
    `replay of run ${runId}: ${r.status}`,
    `  actions: ${r.actions_total} (replayed ${r.actions_replayed}, skipped ${r.skipped_no_handler} without handler, ${r.skipped_nondeterministic} non-deterministic)`,
    `  divergences: ${r.divergences}`,
    `  cost savings: $${r.cost_savings.toFixed(6)}`,
  ];
  for (const d of r.divergence_details.slice(0, 20)) lines.push(`  step ${d.step} ${d.action_name}: expected ${JSON.stringify(d.expected)}, got ${JSON.stringify(d.actual)}`);
  if (r.divergence_details.length > 20) lines.push(`  … ${r.divergence_details.length - 20} more`);
  lines.push(submitted ? `  submitted: ${submitted.id}${submitted.created ? '' : ' (already stored)'}` : '  not submitted (--dry-run)');
  return lines.join('\n') + '\n';
}

/** A usage error: exit 3. */
class UsageError extends Error {
  override readonly name = 'UsageError';
}

function describeError(err: unknown): string {
  if (err instanceof AgpHttpError) {
    const fields = err.problem.errors?.map((f) => `; ${f.path}: ${f.message}`).join('') ?? '';
    return `${err.message}${fields}`;
  }
  if (err instanceof BundleVerificationError || err instanceof AgpNetworkError || err instanceof UsageError) return err.message;
  return err instanceof Error ? err.message : String(err);
}


import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { INGEST_EVENT_TYPES, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, KEY_SCOPES, type Scope } from '@agp/contracts';
import clientPackage from '../package.json' with { type: 'json' };
import { keysCreate, keysList, keysRevoke, type KeySummary } from './keys.js';
import { ADMIN_NOT_BOUND } from '@agp/auth';
import { randomSeed, runSimulation, SimulationAbortedError, type SimulationProgress, type SimulationReport } from '@agp/simulator';
import { AgpHttpError, AgpNetworkError } from '@agp/sdk/http';
import { registerEvalsCommands } from './evals/command.js';
import { registerReplayCommand } from './replay/command.js';
import { registerMcpCommands } from './mcp.js';
import { registerAuditCommands } from './audit.js';

/** The CLI's version, `agp --version`: the `version` of `@agp/cli`'s package.json (docs/configuration.md, The CLI). */
export const CLI_VERSION: string = clientPackage.version;

/** Where the CLI reads its environment and writes its output; injectable so tests run it in-process. */
export interface CliIo {
  /** Environment (AGP_KEY, DATABASE_URL, AGP_DATA_DIR). @default process.env */
  env: Record<string, string | undefined>;
  /** Standard output. @default process.stdout */
  out: (text: string) => void;
  /** Standard error. @default process.stderr */
  err: (text: string) => void;
  /** The working directory (`agp evals gate` files an upload under its git branch). @default process.cwd() */
  cwd?: string;
}

/** A failure the CLI reports with a message and an exit code (1: refused or rejected; 2: gateway unreachable). */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const processIo = (): CliIo => ({ env: process.env, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });

/**
 * Build the `agp` command tree: `simulate`, `keys create|list|revoke`, `evals run` (generated scenario files against the decision API) and `evals gate` (the CI eval gate, docs/evals-gate.md; its
 * exit codes 0–3 are its own, see `evals/gate.ts`), and `-V, --version` ({@link CLI_VERSION}).
 * Errors surface as thrown {@link CliError} / `CommanderError` (exitOverride), so {@link main} maps them to exit
 * codes in one place.
 */
export function buildProgram(io: CliIo = processIo()): Command {
  const program = new Command('agp')
    .description('AGP, the Agent Governance Platform: fleet simulator, key management and the CI eval gate')
    .version(CLI_VERSION, '-V, --version', 'print the version of the agp CLI')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError();

  program
    .command('simulate')
    .description('stream a simulated agent fleet (agent registrations, runs, ledger entries with estimated and actual costs, interventions) to POST /api/v1/ingest/ and report what was sent')
    .option('--url <url>', 'gateway base URL', 'http://127.0.0.1:8080')
    .option('--key <key>', 'write key (default: env AGP_KEY)')
    .option('--agents <n>', 'number of simulated agents', positiveInt, 8)
    .option('--rate <events/s>', 'target rate in events per second', positiveNumber, 50)
    .option('--duration <seconds>', 'how long to send', positiveNumber, 10)
    .option('--batch-size <n>', 'most events per ingest request (1-1000)', positiveInt, 100)
    .option('--seed <n>', 'PRNG seed (default: a fresh random one, printed in the header); event ids are sim-<seed>-..., so the same seed re-sends the same events, answered duplicate', integer)
    .option('--backfill-days <days>', 'spread event timestamps over the last D days instead of the sending window', nonNegativeNumber, 0)
    .option('--interventions-only', 'send interventions only (no agents, runs or ledger entries)')
    .option('--quiet', 'no progress lines (by default, at most one a second on stderr)')
    .option('--json', 'print the report as JSON (no header or progress)')
    .action(async (o: SimulateFlags) => {
      const key = o.key ?? io.env.AGP_KEY;
      if (!key) throw new CliError('missing write key: pass --key or set AGP_KEY', 1);
      const seed = o.seed ?? randomSeed();
      if (!o.json) io.err(`simulating ${o.agents} agents at ${o.rate} events/s for ${o.duration} s (seed ${seed}${o.seed === undefined ? ', random; pass --seed to repeat this run' : ''}) -> ${o.url}\n`);
      const onProgress = o.json || o.quiet ? undefined : (p: SimulationProgress) => io.err(formatProgress(p));
      let report: SimulationReport;
      try {
        report = await runSimulation({ url: o.url, key, agents: o.agents, rate: o.rate, durationS: o.duration, batchSize: o.batchSize, seed, backfillDays: o.backfillDays, fleet: !o.interventionsOnly, onProgress });
      } catch (err) {
        if (err instanceof RangeError) throw new CliError(err.message, 1, { cause: err });
        if (!(err instanceof SimulationAbortedError)) throw err;
        if (err.cause instanceof AgpNetworkError) throw new CliError(`gateway unreachable: ${err.cause.message}`, 2, { cause: err });
        if (err.cause instanceof AgpHttpError) throw new CliError(problemLine(err.cause), 1, { cause: err });
        throw err;
      }
      io.out(o.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report, o.rate));
      if (report.accepted === 0) throw new CliError(`every event was rejected (${report.rejected} of ${report.sent})`, 1);
      if (!o.json && report.created === 0) io.err(`note: every accepted event was a duplicate of one already stored (seed ${report.seed} was used before); run without --seed to send new events\n`);
    });

  const keys = program.command('keys').description('manage API keys in the key store offline (DATABASE_URL, or the embedded PGlite folder AGP_DATA_DIR), e.g. to bootstrap; with the platform running, use an admin key and /api/v1/keys');
  keys
    .command('create')
    .description('create an API key; the plaintext key is shown once')
    .requiredOption('--org <org>', 'organisation id (created when absent)')
    .addOption(new Option('--scope <scope>', 'read: queries only; write: also ingest, create, delete; admin: also manage API keys over HTTP').choices([...KEY_SCOPES]).makeOptionMandatory())
    .option('--name <name>', 'a label for the key')
    .option('--expires-in-days <days>', 'expire the key after D days', positiveNumber)
    .option('--agent <id>', 'bind the key to this agent: it acts only as that agent (a read or write key; an admin key cannot be bound)')
    .option('--json', 'print the key as JSON')
    .action(async (o: { org: string; scope: Scope; name?: string; expiresInDays?: number; agent?: string; json?: boolean }) => {
      if (o.agent !== undefined && o.scope === 'admin') throw new CliError(`--agent: ${ADMIN_NOT_BOUND}`, 1);
      const created = await keysCreate(io.env, { org: o.org, scope: o.scope, name: o.name, expiresInDays: o.expiresInDays, agentId: o.agent });
      if (o.json) io.out(JSON.stringify(created, null, 2) + '\n');
      else io.out(`Created ${created.scope} key ${created.id} for organisation ${created.organization_id}${created.agent_id ? `, bound to agent ${created.agent_id}` : ''}${created.expires_at ? `, expires ${created.expires_at}` : ''}:\n\n  ${created.key}\n\n`);
      io.err('warning: store this key now; it cannot be shown again.\n');
    });
  keys
    .command('list')
    .description('list an organisation\'s keys (never their plaintext)')
    .requiredOption('--org <org>', 'organisation id')
    .option('--json', 'print the keys as JSON')
    .action(async (o: { org: string; json?: boolean }) => {
      const list = await keysList(io.env, o.org);
      io.out(o.json ? JSON.stringify(list, null, 2) + '\n' : formatKeys(list));
    });
  keys
    .command('revoke')
    .description('revoke a key; requests with it get 401 from then on')
    .argument('<key-id>', 'id of the key (see keys list)')
    .action(async (id: string) => {
      const revoked = await keysRevoke(io.env, id);
      io.out(`Revoked key ${revoked.id} of organisation ${revoked.organization_id}\n`);
    });
  registerEvalsCommands(program, io);
  registerReplayCommand(program, io);
  registerMcpCommands(program, io);
  registerAuditCommands(program, io);
  return program;
}

/**
 * Run the CLI on `argv` (the arguments after the script, e.g. `['keys', 'list', '--org', 'acme']`) and return
 * the exit code: 0 on success, 1 on usage errors, refusals and rejections, 2 when the gateway is unreachable.
 * Never throws for expected failures; it writes them to `io.err`.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof CliError) {
      io.err(`error: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

interface SimulateFlags {
  url: string;
  key?: string;
  agents: number;
  rate: number;
  duration: number;
  batchSize: number;
  seed?: number;
  backfillDays: number;
  interventionsOnly?: boolean;
  quiet?: boolean;
  json?: boolean;
}

/** One line (and one per bad field) of a problem-details answer. */
export function problemLine(e: AgpHttpError): string {
  const fields = e.problem.errors?.map((f) => `\n  ${f.path}: ${f.message}`).join('') ?? '';
  return `${e.status} ${e.problem.title}: ${e.problem.detail}${fields}`;
}

/** One progress line of `agp simulate` (docs/ingest.md, Simulated data), e.g. `  sent 1200/2000  created 1150  duplicate 0  rejected 0  400.0 events/s`. */
function formatProgress(p: SimulationProgress): string {
  return `  sent ${p.sent}/${p.planned}  created ${p.created}  duplicate ${p.duplicate}  rejected ${p.rejected}  ${p.rate.toFixed(1)} events/s\n`;
}

/** The human-readable report of `agp simulate`. */
function formatReport(r: SimulationReport, targetRate: number): string {
  const counts = (keys: readonly string[], c: Record<string, number>) => keys.map((k) => `${k} ${c[k]}`).join(', ');
  const usd = (n: number) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const lines = [
    `Sent ${r.sent} of ${r.planned} events to ${r.url} in ${(r.elapsed_ms / 1000).toFixed(1)} s (${r.achieved_rate} events/s, target ${targetRate}), ${r.requests} requests, seed ${r.seed}`,
    `  created      ${r.created}   (new, stored for the first time)`,
    `  duplicate    ${r.duplicate}   (already stored, or already in the ingest log)`,
    `  rejected     ${r.rejected}`,
    `  agents       ${r.agents}   runs ${r.runs}   policies ${r.policies} (${r.policies_created} created, ${r.policies_reused} reused)`,
    `  timestamps   ${r.first_timestamp} .. ${r.last_timestamp}`,
    `  events       ${counts(INGEST_EVENT_TYPES, r.by_event_type)}`,
    `  ledger cost  ${usd(r.ledger_total_cost_usd)} (actual where reported, else estimated): ${usd(r.ledger_cost_usd)} estimated, ${usd(r.ledger_actual_cost_usd)} actual (where reported)`,
    `  intervened   ${usd(r.estimated_cost_usd)} estimated, ${usd(r.cost_prevented_usd)} prevented`,
    `  by type      ${counts(INTERVENTION_TYPES, r.by_type)}`,
    `  by outcome   ${counts(INTERVENTION_OUTCOMES, r.by_outcome)}`,
    ...r.rejections.map((g) => `  rejection    ${g.count} x ${g.status} ${g.message}`),
  ];
  return lines.join('\n') + '\n';
}

function formatKeys(list: KeySummary[]): string {
  if (list.length === 0) return 'no keys\n';
  const rows = [['ID', 'SCOPE', 'NAME', 'AGENT', 'CREATED', 'EXPIRES', 'STATUS'], ...list.map((k) => [k.id, k.scope, k.name ?? '', k.agent_id ?? '', k.created_at, k.expires_at ?? '', k.status])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n') + '\n';
}

function integer(v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw new InvalidArgumentError('expected an integer');
  return Number(v);
}

/** A commander argument parser: a whole number of 1 or more. @throws InvalidArgumentError for anything else. */
export function positiveInt(v: string): number {
  const n = integer(v);
  if (n < 1) throw new InvalidArgumentError('expected an integer of 1 or more');
  return n;
}

function positiveNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number above 0');
  return n;
}

function nonNegativeNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of 0 or more');
  return n;
}

/**
 * `agp mcp proxy`: the local governed MCP proxy (`@agp/mcp-proxy`'s `runLocalProxy`), a thin shell that reads its
 * flags. Stdout is the MCP protocol; every message of the CLI's own goes to stderr. Source: docs/mcp-proxy.md (Local).
 */
import { Command, InvalidArgumentError } from 'commander';
import { runLocalProxy, upstreamSettings, type UpstreamTarget } from '@agp/mcp-proxy';
import { CliError, type CliIo } from './program.js';

/** The flags of `agp mcp proxy`. */
interface ProxyFlags {
  server: string;
  url?: string;
  key?: string;
  agent?: string;
  run?: string;
  actionPrefix?: string;
  upstreamUrl?: string;
  upstreamHeader: string[];
  toolCost?: Record<string, number>;
  hideDeniedTools?: boolean;
  timeoutMs?: number;
  progressIntervalMs?: number;
  spoolDir?: string;
  approval?: string;
  approverEmail?: string;
  pinTools?: boolean;
}

/** `Name: value` → [name, value]. @throws InvalidArgumentError for another shape or a control character. */
function header(v: string, prev: string[]): string[] {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:\s*[^\x00-\x1f\x7f]*$/.test(v)) throw new InvalidArgumentError(`expected 'Name: value' without control characters, got ${JSON.stringify(v)}`);
  return [...prev, v];
}

/** `tool=usd` pairs, by tool name (USD ≥ 0). @throws InvalidArgumentError for another shape. */
function toolCost(v: string, prev: Record<string, number> = {}): Record<string, number> {
  const m = /^([^=]+)=(\d+(?:\.\d+)?)$/.exec(v);
  if (!m) throw new InvalidArgumentError(`expected tool=usd (a number ≥ 0), got ${JSON.stringify(v)}`);
  return { ...prev, [m[1]]: Number(m[2]) };
}

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected an integer ≥ 1');
  return n;
};

/**
 * Register `agp mcp proxy --server NAME [-- <command> [args…]] | [--upstream-url URL [--upstream-header 'N: v']…]`.
 * The platform: `--url`/`--key` or `AGP_URL`/`AGP_KEY`; the agent: `--agent` or `AGP_AGENT_ID`, else the MCP
 * client's name.
 * @throws CliError (exit 1) for a missing key or upstream, or a bad setting; (exit 2) when the upstream cannot be reached.
 */
export function registerMcpCommands(program: Command, io: CliIo): void {
  const mcp = program.command('mcp').description('the Model Context Protocol: govern an agent\'s MCP servers');
  mcp
    .command('proxy')
    .description('stand between an MCP client and one MCP server (speaking stdio to the client): every tools/call is decided by the platform\'s policies, kill switches and approvals and recorded; the rest is forwarded. The upstream is the command after -- (stdio) or --upstream-url (Streamable HTTP).')
    .argument('[command...]', 'the upstream server\'s command and arguments, after --')
    .requiredOption('--server <name>', 'the upstream server\'s name ([a-z0-9][a-z0-9_-]*), used in refusals and as the default action prefix')
    .option('--url <url>', 'the platform\'s base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'a write key (default: env AGP_KEY)')
    .option('--agent <id>', 'the agent id the calls are governed as (default: env AGP_AGENT_ID, else the MCP client\'s name)')
    .option('--run <id>', 'the run id of this session (default: a random UUID; env AGP_RUN_ID)')
    .option('--action-prefix <prefix>', 'prefixed to each tool\'s name to make the action name (default: "<server>.")')
    .option('--upstream-url <url>', 'a Streamable HTTP upstream instead of a command')
    .option('--upstream-header <header>', '\'Name: value\' sent to the HTTP upstream (repeatable); never the AGP key', header, [])
    .option('--tool-cost <tool=usd>', 'a tool\'s estimated cost per call in USD (repeatable; default: none)', toolCost)
    .option('--hide-denied-tools', 'leave out of tools/list the tools a policy denies this agent by name')
    .option('--pin-tools', 'pin the upstream\'s tools with the server registered on the platform under --server (shared with the hosted proxy): a tool whose description or input schema changes, or that appears later, is held until accepted')
    .option('--timeout-ms <ms>', 'how long one upstream request may take, ms (default 30000)', positiveInt)
    .option('--progress-interval-ms <ms>', 'how often a call waiting for an approval sends notifications/progress, ms (default 5000)', positiveInt)
    .option('--spool-dir <dir>', 'keep undelivered reports in this folder (survive a crash of the proxy)')
    .option('--approval <mode>', 'who answers an escalated call: platform (a human in the console or API; default) or client (the user, asked in the MCP client by elicitation, where it supports it)')
    .option('--approver-email <email>', 'with --approval client: who approves, recorded with the approval (default: env AGP_APPROVER_EMAIL, else asked in the form)')
    .action(async (command: string[], o: ProxyFlags) => {
      const key = o.key ?? io.env.AGP_KEY;
      if (!key) throw new CliError('missing write key: pass --key or set AGP_KEY', 1);
      if ((command.length > 0) === Boolean(o.upstreamUrl)) throw new CliError('name the upstream once: a command after -- (stdio) or --upstream-url (Streamable HTTP)', 1);
      let settings;
      try {
        settings = upstreamSettings(o.server, {
          ...(o.actionPrefix !== undefined ? { action_prefix: o.actionPrefix } : {}),
          ...(o.timeoutMs !== undefined ? { timeout_ms: o.timeoutMs } : {}),
          hide_denied_tools: Boolean(o.hideDeniedTools),
          tool_costs_usd: o.toolCost ?? {},
          ...(o.approval !== undefined ? { approval: o.approval as 'platform' | 'client' } : {}),
        });
      } catch (err) {
        throw new CliError((err as Error).message, 1);
      }
      const upstream: UpstreamTarget = o.upstreamUrl
        ? { url: o.upstreamUrl, headers: Object.fromEntries(o.upstreamHeader.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()])) }
        : { command: command[0], args: command.slice(1) };
      try {
        await runLocalProxy({
          platform: { url: o.url ?? io.env.AGP_URL ?? 'http://127.0.0.1:8080', key },
          agentId: o.agent ?? io.env.AGP_AGENT_ID,
          runId: o.run ?? io.env.AGP_RUN_ID,
          settings,
          upstream,
          spoolDir: o.spoolDir,
          progressIntervalMs: o.progressIntervalMs,
          approverEmail: o.approverEmail ?? io.env.AGP_APPROVER_EMAIL,
          pinTools: Boolean(o.pinTools),
          log: (m) => io.err(`agp mcp proxy: ${m}\n`),
        });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new CliError(message, /could not be reached/.test(message) ? 2 : 1, { cause: err });
      }
    });
}

/**
 * Both forms of the MCP proxy driven by the MCP Inspector's CLI (`@modelcontextprotocol/inspector`, `mcp-inspector
 * --cli`), as a developer checks a server by hand. The Inspector is installed from npm into its own folder under
 * `node_modules/.cache` on first use, not into the workspace: its dependencies (undici 8, which needs Node 22) would
 * displace the platform's own in this repository's hoisted install. Without the npm registry the file skips, saying so.
 * The two forms: the local proxy `agp mcp proxy` as an `mcpServers` entry of a config
 * file (stdio, in front of `@modelcontextprotocol/server-everything`), and the hosted endpoint
 * `/api/v1/mcp/proxy/{server}` by URL with its headers (Streamable HTTP, in front of server-everything's HTTP mode),
 * against a real embedded platform. Each lists the tools, calls one (the upstream's result, recorded as a ledger entry
 * of the run) and is refused one (a tool error with the decision in `_meta`, not a failure of the Inspector): locally
 * a tool a policy denies; hosted, with `hide_denied_tools`, that tool is not listed (the Inspector does not call it) and
 * a kill switch refuses the next call. Source: docs/mcp-proxy.md.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import { startRecordedUpstream, type RecordedUpstream } from '../support/mcp-upstream.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(ROOT, 'packages/cli/dist/cli.js');
const EVERYTHING = resolve(ROOT, 'node_modules/.bin/mcp-server-everything');
/** The Inspector release the tests drive, and where it is installed. */
const INSPECTOR_VERSION = '2.12.0';
const INSPECTOR_DIR = resolve(ROOT, `node_modules/.cache/agp-mcp-inspector-${INSPECTOR_VERSION}`);
const INSPECTOR = join(INSPECTOR_DIR, 'node_modules/.bin/mcp-inspector');
const run = promisify(execFile);
const uniq = () => randomUUID().slice(0, 8);

/** Install the Inspector into {@link INSPECTOR_DIR} unless it is there: null when installed, else why not. */
async function installInspector(): Promise<string | null> {
  if (existsSync(INSPECTOR)) return null;
  try {
    mkdirSync(INSPECTOR_DIR, { recursive: true });
    writeFileSync(join(INSPECTOR_DIR, 'package.json'), JSON.stringify({ name: 'agp-mcp-inspector', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`], { cwd: INSPECTOR_DIR, timeout: 240_000 });
    return existsSync(INSPECTOR) ? null : 'the install left no mcp-inspector binary';
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}
const notInstalled = await installInspector();
if (notInstalled) console.warn(`[agp tests] skipping the MCP Inspector tests: @modelcontextprotocol/inspector@${INSPECTOR_VERSION} could not be installed from npm (${notInstalled})`);

let p: BootedPlatform;
let upstream: RecordedUpstream;
let dir = '';

beforeAll(async () => {
  if (notInstalled) return;
  await run(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: ROOT });
  dir = mkdtempSync(join(tmpdir(), 'agp-inspector-'));
  upstream = await startRecordedUpstream();
  p = await bootEmbedded({ env: { AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AGP_SECRETS_KEY: randomBytes(32).toString('base64') } });
}, 240_000);
afterAll(async () => {
  await p?.stop();
  await upstream?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Run `mcp-inspector --cli` with `args`, its result written to a file: the result, and the Inspector's error envelope
 * when it exits non-zero (it does for a result with `isError: true`: `tool_is_error`). Its secrets stay in memory and
 * its catalog in the test's folder (nothing under HOME).
 */
async function inspector(args: string[]): Promise<{ result: any; error: string | null }> {
  const output = join(dir, `result-${uniq()}.json`);
  let error: string | null = null;
  try {
    await run(process.execPath, [INSPECTOR, '--cli', ...args, '--output', output], {
      cwd: dir,
      timeout: 90_000,
      env: { PATH: process.env.PATH ?? '', HOME: dir, MCP_INSPECTOR_SECRET_STORE: 'memory' },
    });
  } catch (err) {
    error = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}` || String(err);
  }
  return { result: existsSync(output) ? JSON.parse(readFileSync(output, 'utf8')) : null, error };
}

/** A policy of the organisation denying `denied` to `agentId`. */
async function deny(agentId: string, denied: string) {
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `inspector-${uniq()}`, agent_ids: [agentId], denied_actions: [denied] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string };
}

/** The run's ledger entries, once one is stored. */
const ledger = (runId: string) =>
  eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${encodeURIComponent(runId)}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length >= 1 ? (r.body.actions as Array<{ action_name: string; status: string }>) : null;
  }, 20_000);

describe.skipIf(notInstalled !== null)('the MCP Inspector CLI through the proxy', () => {
  it('local proxy as an mcpServers entry: tools listed, a call answered and recorded, a denied call a tool error naming the policy', async () => {
    const agentId = `inspector-local-${uniq()}`;
    const runId = `inspector-run-${uniq()}`;
    const pol = await deny(agentId, 'everything.get-sum');
    const config = join(dir, `local-${uniq()}.json`);
    const proxy = [CLI, 'mcp', 'proxy', '--server', 'everything', '--url', p.url, '--agent', agentId, '--run', runId, '--', EVERYTHING];
    writeFileSync(config, JSON.stringify({ mcpServers: { governed: { command: process.execPath, args: proxy, env: { AGP_KEY: p.writeKey } } } }));
    const at = ['--config', config, '--server', 'governed'];

    const listed = await inspector([...at, '--method', 'tools/list']);
    expect(listed.error).toBeNull();
    expect((listed.result.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));

    const echoed = await inspector([...at, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=from the inspector']);
    expect(echoed.error).toBeNull();
    expect(echoed.result.content).toEqual([{ type: 'text', text: 'Echo: from the inspector' }]);

    // A refused call is the tool's error (the Inspector says `tool_is_error`), not a failed connection or protocol error.
    const refused = await inspector([...at, '--method', 'tools/call', '--tool-name', 'get-sum', '--tool-arg', 'a=1', 'b=2']);
    expect(refused.error).toContain('tool_is_error');
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toContain(pol.name);
    expect(refused.result._meta['agp/governance']).toMatchObject({ decision: 'block', rule: 'denied_action' });

    expect(await ledger(runId)).toEqual(expect.arrayContaining([expect.objectContaining({ action_name: 'everything.echo', status: 'success' })]));
  }, 180_000);

  it('hosted proxy by URL with its headers: tools listed (the denied one hidden), a call answered and recorded, a call under a kill switch a tool error', async () => {
    const agentId = `inspector-hosted-${uniq()}`;
    const runId = `inspector-run-${uniq()}`;
    const server = `inspected-${uniq()}`;
    const registered = await call(p, 'POST', '/api/v1/mcp/servers', { key: p.writeKey, body: { name: server, url: upstream.url, action_prefix: 'everything.', hide_denied_tools: true } });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    await deny(agentId, 'everything.get-sum');
    const at = [`${p.url}/api/v1/mcp/proxy/${server}`, '--transport', 'http', '--header', `Authorization: Bearer ${p.writeKey}`, `AGP-Agent-Id: ${agentId}`, `AGP-Run-Id: ${runId}`];

    const listed = await inspector([...at, '--method', 'tools/list']);
    expect(listed.error).toBeNull();
    const names = (listed.result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain('echo');
    expect(names).not.toContain('get-sum');

    const echoed = await inspector([...at, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=hosted']);
    expect(echoed.error).toBeNull();
    expect(echoed.result.content).toEqual([{ type: 'text', text: 'Echo: hosted' }]);

    expect(await ledger(runId)).toEqual(expect.arrayContaining([expect.objectContaining({ action_name: 'everything.echo', status: 'success' })]));
    // The denied tool is not listed, so the Inspector does not offer it; a kill switch refuses the agent's next call.
    expect((await inspector([...at, '--method', 'tools/call', '--tool-name', 'get-sum', '--tool-arg', 'a=1', 'b=2'])).error).toContain('tool_not_found');
    expect((await call(p, 'PUT', `/api/v1/kill-switches/agents/${agentId}`, { key: p.writeKey, body: { engaged: true, reason: 'stop the inspected agent' } })).status).toBe(200);
    const refused = await eventually(async () => {
      const r = await inspector([...at, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=after']);
      return r.result?.isError ? r : null;
    }, 20_000, 500);
    expect(refused.error).toContain('tool_is_error');
    expect(refused.result._meta['agp/governance']).toMatchObject({ decision: 'block' });
    // The AGP key reached the platform only: the upstream never saw it.
    expect(JSON.stringify(upstream.seen)).not.toContain(p.writeKey);
  }, 180_000);
});

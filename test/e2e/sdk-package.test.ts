/**
 * The agent SDK as a user gets it: built, packed with `npm pack` in packages/sdk, installed with `npm install
 * <tarball>` alone in an empty temp folder (types included, type-checked by a consumer file), and run as separate Node
 * processes against a real embedded platform:
 * - no framework an adapter wraps is installed with it; each adapter's subpath export is packed, imports, and
 *   type-checks once its framework is installed beside it;
 * - a script connects, acts (allowed and blocked), closes; its reports are stored;
 * - an agent process with a durable spool is killed with SIGKILL while reports are not yet delivered; the next
 *   `Governor.connect` with the same spool delivers them, and every ledger entry and intervention is stored exactly
 *   once (counted through the API);
 * - installing the tarball pulls no framework; the adapters are separate files (`@agp/sdk/langchain`, `@agp/sdk/mcp`),
 *   and once the frameworks are beside it they type-check and govern a LangChain agent and an MCP client.
 * Source: docs/sdk.md §Packaging, §Spool, §Framework adapters.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import { packSdk } from '../support/sdk-pack.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The frameworks the adapters wrap (optional peer dependencies of the package). */
const FRAMEWORKS = ['ai', '@openai/agents', 'langchain', '@langchain/core', '@modelcontextprotocol/sdk'];
/** The adapters' subpath exports, `@agp/sdk/<name>`, each with the framework it needs and one name it exports. */
const ADAPTERS = [
  { name: 'ai', framework: 'ai', exported: 'governTools' },
  { name: 'openai-agents', framework: '@openai/agents', exported: 'governAgent' },
];
let p: BootedPlatform;
let dir: string;

beforeAll(async () => {
  p = await bootEmbedded();
  dir = packSdk();
}, 240_000);
afterAll(async () => {
  await p?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Run `file` (in the consumer folder) with Node; resolves with stdout. */
function node(file: string, args: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: dir });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`${file} exited ${code}: ${err}`))));
  });
}

it('installs with npm alone: no workspace, database, server framework or bus package; types included', () => {
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules/@agp/sdk/package.json'), 'utf8'));
  expect(Object.keys(installed.dependencies).sort()).toEqual(['ajv', 'ibantools', 'libphonenumber-js', 'zod']);
  // OpenTelemetry's API is an optional peer dependency too: the package governs without it (the tests below).
  for (const heavy of ['pg', '@electric-sql/pglite', '@nestjs/core', 'nats', 'express', '@agp/contracts', '@opentelemetry/api', ...FRAMEWORKS]) expect(existsSync(join(dir, 'node_modules', heavy)), heavy).toBe(false);
  expect(existsSync(join(dir, 'node_modules/@agp/sdk/dist/types/index.d.ts'))).toBe(true);
  // The framework adapters are in the tarball, each its own file; the main entry imports no framework.
  for (const f of ['dist/langchain.js', 'dist/mcp.js', 'dist/types/adapters/langchain.d.ts', 'dist/types/adapters/mcp.d.ts']) expect(existsSync(join(dir, 'node_modules/@agp/sdk', f)), f).toBe(true);
  const main = readFileSync(join(dir, 'node_modules/@agp/sdk/dist/index.js'), 'utf8');
  for (const fw of FRAMEWORKS) expect(main.includes(`from "${fw}`), fw).toBe(false);
  writeFileSync(
    join(dir, 'consumer.ts'),
    `import { Governor, ActionBlockedError, ApprovalRejectedError, type GovernanceDecision } from '@agp/sdk';
export async function main(): Promise<number> {
  const gov = await Governor.connect({ url: 'http://x', key: 'k', agentId: 'a', failMode: 'open', spoolDir: '/tmp/x' });
  const run = gov.startRun({ sessionId: 's' });
  const n: number = await run.act('add', { a: 1 }, async (args, ctx) => { ctx.reportCost(0.1); return (args.a as number) + 1; }, { estimatedCostUsd: 0.01 });
  const r = await run.act('add', { a: 1 }, () => 2, { onBlocked: 'return' });
  const d: GovernanceDecision | null = typeof r === 'object' ? r.decision : null;
  void [ActionBlockedError, ApprovalRejectedError, d, gov.status().stalenessMs];
  await run.end({ status: 'completed' });
  await gov.close();
  return n;
}
`,
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'consumer.ts'], { cwd: dir, stdio: 'inherit' });
});

it('subpath exports: each adapter is in the package, imports and type-checks once its framework is installed', async () => {
  for (const a of ADAPTERS) {
    expect(existsSync(join(dir, `node_modules/@agp/sdk/dist/${a.name}.js`)), a.name).toBe(true);
    expect(existsSync(join(dir, `node_modules/@agp/sdk/dist/types/adapters/${a.name}.d.ts`)), a.name).toBe(true);
  }
  // The main entry pulls in no framework.
  expect(readFileSync(join(dir, 'node_modules/@agp/sdk/dist/index.js'), 'utf8')).not.toMatch(new RegExp(`from ['"](${FRAMEWORKS.join('|')})['"/]`));
  // The user installs the framework beside the SDK; here the workspace's copy is linked in (no registry needed).
  for (const f of new Set(ADAPTERS.map((a) => a.framework))) {
    mkdirSync(join(dir, 'node_modules', f, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', f), join(dir, 'node_modules', f), 'dir');
  }
  writeFileSync(
    join(dir, 'adapters.mjs'),
    `const out = {};
${ADAPTERS.map((a) => `out[${JSON.stringify(a.name)}] = typeof (await import('@agp/sdk/${a.name}'))[${JSON.stringify(a.exported)}];`).join('\n')}
console.log(JSON.stringify(out));
`,
  );
  expect(JSON.parse(await node('adapters.mjs', []))).toEqual(Object.fromEntries(ADAPTERS.map((a) => [a.name, 'function'])));
  writeFileSync(
    join(dir, 'consumer-adapters.ts'),
    `import { Governor } from '@agp/sdk';
import { governTools, isBlockedOutput, type GovernToolsOptions } from '@agp/sdk/ai';
import { tool, jsonSchema } from 'ai';
import { governAgent, governTool, type GovernToolOptions } from '@agp/sdk/openai-agents';
import { Agent, tool as agentTool } from '@openai/agents';
export function agents(run: ReturnType<Governor['startRun']>): Agent {
  const opts: GovernToolOptions = { refusal: (name, d) => name + d.reason, handoverTimeoutMs: 1000 };
  const t = governTool(run, agentTool({ name: 't', description: 'd', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true, execute: async () => 'x' }), opts);
  // @ts-expect-error the options are typed (not any): handoverTimeoutMs is a number (ms)
  governTool(run, t, { handoverTimeoutMs: 'soon' });
  return governAgent(run, new Agent({ name: 'a', tools: [t] }), opts);
}
export async function main(): Promise<boolean> {
  const gov = await Governor.connect({ url: 'http://x', key: 'k', agentId: 'a' });
  const opts: GovernToolsOptions = { actOptions: (name) => ({ estimatedCostUsd: name.length / 100 }) };
  const tools = governTools(gov.startRun(), { add: tool({ inputSchema: jsonSchema<{ a: number }>({ type: 'object' }), execute: async ({ a }) => a + 1 }) }, opts);
  const out = await tools.add.execute({ a: 1 }, { toolCallId: 'c', messages: [], context: {} });
  // @ts-expect-error the options are typed (not any): actOptions is an object or a function
  governTools(gov.startRun(), tools, { actOptions: 5 });
  return isBlockedOutput(out);
}
`,
  );
  // skipLibCheck: checking the frameworks' own declarations takes a minute; the @ts-expect-error lines prove the
  // adapters' types resolve (an unresolved type would be any, and the expected error would be missing).
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'consumer-adapters.ts'], { cwd: dir, stdio: 'inherit' });
}, 120_000);

it('the installed package governs and reports against the platform', async () => {
  const agentId = `pkg-${Date.now()}`;
  const pol = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `pkg-${agentId}`, agent_ids: [agentId], denied_actions: ['wipe'] } });
  expect(pol.status).toBe(201);
  writeFileSync(
    join(dir, 'use.mjs'),
    `import { Governor, ActionBlockedError } from '@agp/sdk';
const [url, key, agentId] = process.argv.slice(2);
const gov = await Governor.connect({ url, key, agentId });
const run = gov.startRun();
const sum = await run.act('add', { a: 2, b: 3 }, ({ a, b }) => a + b);
let blocked = null;
try { await run.act('wipe', {}, () => 'ran'); } catch (e) { blocked = e instanceof ActionBlockedError ? e.decision.policy_id : String(e); }
await run.end({ status: 'completed' });
const closed = await gov.close();
console.log(JSON.stringify({ sum, blocked, runId: run.runId, closed, node: process.version }));
`,
  );
  const out = JSON.parse(await node('use.mjs', [p.url, p.writeKey, agentId]));
  expect(out).toMatchObject({ sum: 5, blocked: pol.body.id, closed: { pending: 0 } });
  const run = await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${out.runId}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length === 2 && r.body.status === 'completed' ? r.body : null;
  });
  expect(run.actions.map((a: any) => [a.action_name, a.status])).toEqual([['add', 'success'], ['wipe', 'blocked']]);
});

it('SIGKILL of the agent with a durable spool: the next connect delivers what was not acknowledged, each record exactly once', async () => {
  const agentId = `kill-${Date.now()}`;
  const runId = `kill-run-${Date.now()}`;
  const spoolDir = join(dir, 'spool');
  const pol = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `kill-${agentId}`, agent_ids: [agentId], denied_actions: ['forbidden'] } });
  expect(pol.status).toBe(201);
  // Phase 1: 20 actions, delivered (the agent waits until nothing is pending). Phase 2: 30 actions and a blocked one,
  // spooled but not sent (reports wait up to 5 s), then the process is killed.
  writeFileSync(
    join(dir, 'agent.mjs'),
    `import { Governor } from '@agp/sdk';
const [url, key, agentId, spoolDir, runId] = process.argv.slice(2);
const gov = await Governor.connect({ url, key, agentId, spoolDir, flushIntervalMs: 5000 });
const run = gov.startRun({ runId });
for (let i = 0; i < 20; i++) await run.act('step', { i }, () => i, { estimatedCostUsd: 0.01 });
while (gov.status().reports.pending > 0) await new Promise((r) => setTimeout(r, 50));
console.log('phase1 ' + gov.status().reports.delivered);
for (let i = 20; i < 50; i++) await run.act('step', { i }, () => i, { estimatedCostUsd: 0.01 });
await run.act('forbidden', {}, () => 'ran', { onBlocked: 'return' });
console.log('acted ' + gov.status().reports.pending);
setInterval(() => {}, 1000);
`,
  );
  const child = spawn(process.execPath, ['agent.mjs', p.url, p.writeKey, agentId, spoolDir, runId], { cwd: dir });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const acted = await new Promise<string>((ok, fail) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /acted (\d+)/.exec(out);
      if (m) {
        child.kill('SIGKILL');
        ok(m[1]);
      }
    });
    child.on('exit', (code, signal) => signal !== 'SIGKILL' && fail(new Error(`agent exited ${code}: ${err}`)));
  });
  await new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', () => r())));
  expect(child.signalCode).toBe('SIGKILL');
  // 30 steps + the blocked one's ledger entry and intervention were pending when the agent died.
  expect(Number(acted)).toBe(32);
  const stored = async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${runId}`, { key: p.readKey });
    return r.status === 200 ? (r.body.actions as any[]) : [];
  };
  await eventually(async () => (await stored()).length === 20);
  expect(existsSync(join(spoolDir, 'spool.jsonl'))).toBe(true);

  // The next connect with the same spool (another process, as after a restart) delivers the rest.
  writeFileSync(
    join(dir, 'resume.mjs'),
    `import { Governor } from '@agp/sdk';
const [url, key, agentId, spoolDir] = process.argv.slice(2);
const gov = await Governor.connect({ url, key, agentId, spoolDir });
const recovered = gov.status().reports.recovered;
const closed = await gov.close();
console.log(JSON.stringify({ recovered, ...closed }));
`,
  );
  const resumed = JSON.parse(await node('resume.mjs', [p.url, p.writeKey, agentId, spoolDir]));
  expect(resumed).toMatchObject({ recovered: 32, delivered: 32, pending: 0 });
  // A second restart finds nothing left to send.
  expect(JSON.parse(await node('resume.mjs', [p.url, p.writeKey, agentId, spoolDir]))).toMatchObject({ recovered: 0, pending: 0 });

  const entries = await eventually(async () => {
    const a = await stored();
    return a.length >= 51 ? a : null;
  });
  const steps = entries.filter((e) => e.action_name === 'step').map((e) => e.inputs.i).sort((x: number, y: number) => x - y);
  expect(steps).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect(entries.filter((e) => e.action_name === 'forbidden').map((e) => e.status)).toEqual(['blocked']);
  const ints = await call(p, 'GET', `/api/v1/interventions?agent_id=${agentId}`, { key: p.readKey });
  expect(ints.body.total).toBe(1);
  expect(ints.body.interventions[0]).toMatchObject({ type: 'hard_block', action_name: 'forbidden', run_id: runId, policy_id: pol.body.id });
  // Still exactly once a moment later (nothing in flight arrives twice).
  await new Promise((r) => setTimeout(r, 500));
  expect(await stored()).toHaveLength(51);
}, 60_000);

it('the subpath exports @agp/sdk/langchain and @agp/sdk/mcp type-check and govern once the user has installed the framework', async () => {
  // The user installs the frameworks beside the SDK: here, links to the repository's copies.
  mkdirSync(join(dir, 'node_modules/@modelcontextprotocol'), { recursive: true });
  for (const fw of ['langchain', '@modelcontextprotocol/sdk']) symlinkSync(join(ROOT, 'node_modules', fw), join(dir, 'node_modules', fw), 'dir');
  const agentId = `pkg-ad-${Date.now()}`;
  const pol = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `pkg-${agentId}`, agent_ids: [agentId], denied_actions: ['wipe'] } });
  expect(pol.status).toBe(201);
  writeFileSync(
    join(dir, 'adapters.ts'),
    `import { Governor } from '@agp/sdk';
import { governanceMiddleware } from '@agp/sdk/langchain';
import { governMcpClient } from '@agp/sdk/mcp';
import { AIMessage, HumanMessage, ToolMessage, createAgent, fakeModel, tool } from 'langchain';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
const [url, key, agentId] = process.argv.slice(2);
const gov = await Governor.connect({ url, key, agentId });
const run = gov.startRun();
const ran: string[] = [];
const tools = ['add', 'wipe'].map((name) => tool(async () => (ran.push('lc:' + name), name + ' done'), { name, description: name }));
const model = fakeModel().respondWithTools([{ name: 'add', args: {}, id: 'a' }, { name: 'wipe', args: {}, id: 'w' }]).respond(new AIMessage('ok'));
await createAgent({ model, tools, middleware: [governanceMiddleware(run)] }).invoke({ messages: [new HumanMessage('go')] });
const lc = model.calls[1].messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, (m as ToolMessage).status ?? 'success']);
const server = new McpServer({ name: 's', version: '1.0.0' });
for (const name of ['add', 'wipe']) server.registerTool(name, { description: name }, async () => (ran.push('mcp:' + name), { content: [{ type: 'text' as const, text: name + ' done' }] }));
const [a, b] = InMemoryTransport.createLinkedPair();
await server.connect(b);
const client = governMcpClient(run, new Client({ name: 'c', version: '1.0.0' }));
await client.connect(a);
const mcp = [await client.callTool({ name: 'add' }), await client.callTool({ name: 'wipe' })].map((r) => r.isError === true);
await client.close();
await run.end({ status: 'completed' });
await gov.close();
console.log(JSON.stringify({ lc, mcp, ran, runId: run.runId }));
`,
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'adapters.ts'], { cwd: dir, stdio: 'inherit' });
  const out = JSON.parse(await node('adapters.js', [p.url, p.writeKey, agentId]));
  expect(out).toMatchObject({ lc: [['a', 'success'], ['w', 'error']], mcp: [false, true] });
  expect(out.ran.sort()).toEqual(['lc:add', 'mcp:add']);
  const stored = await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${out.runId}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length === 4 ? (r.body.actions as any[]) : null;
  });
  expect(stored.map((e) => [e.action_name, e.status]).sort()).toEqual([['add', 'success'], ['add', 'success'], ['wipe', 'blocked'], ['wipe', 'blocked']]);
}, 120_000);

#!/usr/bin/env node
// `npm run conformance:mcp` (after `node scripts/build.mjs`; `.ci/run` calls it after `npm test`): the official MCP
// conformance suite against the platform's MCP endpoint, POST /api/v1/mcp. Needs only Node and npm.
//  1. installs, once, into node_modules/.cache/agp-conformance/ (npm install --prefix … --no-save, exact versions):
//     a Node 22 binary (the suites need Node >= 22; skipped when this Node already is 22+) and the two suite versions;
//  2. starts the embedded platform (services/embedded/dist/main.js) as a child process, in memory, with the test-only
//     fixtures on (AGP_MCP_CONFORMANCE_FIXTURES=1) and headless keys, and a header-injecting proxy in front of it
//     (the conformance CLI cannot send an Authorization header);
//  3. runs, under Node 22, each suite with its baseline of known failures (test/mcp-conformance/*.yml):
//     0.2.0-alpha.12 --requirements 2026-07-28, 0.2.0-alpha.12 --requirements 2025-11-25, and 0.1.16 (2025 wire);
//  4. prints each suite's summary and exits 1 if any run failed: a failure outside its baseline, or a stale baseline
//     entry that passes. The platform and the proxy are always stopped.
// Results (checks.json per scenario) and each suite's full output are left in node_modules/.cache/agp-conformance/results/.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { createServer, request } from 'node:http';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const cacheDir = join(root, 'node_modules/.cache/agp-conformance');
const resultsDir = join(cacheDir, 'results');
const baselines = join(root, 'test/mcp-conformance');

/** Exact versions; bump deliberately (a new suite version may add scenarios and need its baseline reviewed). */
const NODE22_VERSION = '22.23.3';
const SUITE_NEW = '0.2.0-alpha.12';
const SUITE_OLD = '0.1.16';

/** The runs: which suite version, its arguments beside --url/-o, and its baseline. */
const RUNS = [
  { name: `conformance@${SUITE_NEW} --requirements 2026-07-28`, suite: SUITE_NEW, args: ['--requirements', '2026-07-28'], baseline: 'expected-failures-2026-07-28.yml' },
  { name: `conformance@${SUITE_NEW} --requirements 2025-11-25`, suite: SUITE_NEW, args: ['--requirements', '2025-11-25'], baseline: 'expected-failures-2025-11-25.yml' },
  { name: `conformance@${SUITE_OLD} (active suite, 2025 wire)`, suite: SUITE_OLD, args: [], baseline: 'expected-failures-2025-11-25.yml' },
];
/** Longest a suite may run before it is stopped and counted as failed. */
const RUN_TIMEOUT_MS = 5 * 60_000;
/** Longest the platform may take to start. */
const START_TIMEOUT_MS = 60_000;

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** npm's error in one line: its code and first message line (`ECONNREFUSED: request to … failed, …`). */
function npmError(stderr) {
  const lines = `${stderr}`.split('\n').map((l) => l.replace(/^npm (error|ERR!) ?/, '').trim());
  const code = lines.find((l) => l.startsWith('code '))?.slice(5);
  const message = lines.find((l) => l && !/^(code|syscall|errno) |^at |^A complete log|^[{}]|^\w+: '/.test(l));
  return [code, message?.slice(0, 200)].filter(Boolean).join(': ') || undefined;
}

/**
 * Install `name@version` (an exact version) into its own prefix under the cache, unless it is there already.
 * @returns the package's folder
 * @throws Error with npm's error in one line when the install fails (e.g. offline)
 */
function ensurePackage(prefixName, name, version) {
  const prefix = join(cacheDir, prefixName);
  const pkgDir = join(prefix, 'node_modules', name);
  const manifest = join(pkgDir, 'package.json');
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === version) return pkgDir;
  mkdirSync(prefix, { recursive: true });
  // A package.json of its own, so npm never walks up to the workspace's.
  writeFileSync(join(prefix, 'package.json'), JSON.stringify({ name: `agp-conformance-${prefixName}`, private: true }) + '\n');
  console.log(`> installing ${name}@${version} into ${prefix}`);
  const r = spawnSync(npm, ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `${name}@${version}`], {
    cwd: prefix,
    encoding: 'utf8',
    shell: process.platform === 'win32', // npm.cmd
  });
  if (r.error || r.status !== 0) throw new Error(`npm could not install ${name}@${version}: ${r.error?.message ?? npmError(r.stderr) ?? `exit ${r.status}`}`);
  return pkgDir;
}

/** The Node >= 22 executable the suites run under: this one when it already is, else the pinned binary package. */
function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const pkg = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch) ? `node-linux-${process.arch}` : null;
  if (!pkg) throw new Error(`no pinned Node 22 binary package for ${process.platform}-${process.arch}; run this script with Node 22 or later`);
  const bin = join(ensurePackage(`node-${NODE22_VERSION}`, pkg, NODE22_VERSION), 'bin/node');
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  if (v.status !== 0) throw new Error(`${bin} does not run (${v.error?.message ?? v.stderr.trim()})`);
  return bin;
}

/** The entry script of suite `version`. */
function suiteBin(version) {
  const dir = ensurePackage(`conformance-${version}`, '@modelcontextprotocol/conformance', version);
  return join(dir, JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).bin.conformance);
}

/**
 * Start the embedded platform in memory with the fixtures on; resolves with its URL once its start banner names it.
 * The child's output goes to `logFile`.
 */
function startPlatform(writeKey, logFile) {
  const env = { ...process.env, PORT: '0', AGP_DATA_DIR: 'memory', AGP_MCP_CONFORMANCE_FIXTURES: '1', AGP_INIT_ORG: 'conformance', AGP_INIT_WRITE_KEY: writeKey, AGP_INIT_READ_KEY: `read-${randomBytes(16).toString('hex')}`, LOG_LEVEL: 'warn' };
  // Embedded mode: no NATS/PostgreSQL (CI exports them for the tests), no LLM enrichment.
  for (const name of ['NATS_URL', 'DATABASE_URL', 'AGP_LLM_API_KEY', 'AGP_LLM_BASE_URL']) delete env[name];
  const child = spawn(process.execPath, ['--max-semi-space-size=2', join(root, 'services/embedded/dist/main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const ready = new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the platform did not start within ${seconds(START_TIMEOUT_MS)}; see ${logFile}`)), START_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /AGP is running \(embedded mode\) at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(new URL(m[1]));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the platform exited (${code ?? signal}) before it was ready; see ${logFile}`));
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return { child, ready };
}

/** Stop the platform: SIGTERM (its ordered shutdown), SIGKILL after 10 s. */
async function stopPlatform(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * A proxy on 127.0.0.1 that adds `Authorization: Bearer <key>` to every request and forwards it to `target` as is
 * (Host and Origin untouched, so the DNS-rebinding scenario still reaches the endpoint's checks).
 */
function startProxy(target, key) {
  const server = createServer((req, res) => {
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(up);
  });
  return new Promise((resolveProxy, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveProxy(server));
  });
}

/** The suites running now (one at a time), stopped with this process. */
const running = new Set();

/** Run one suite; resolves with its exit code (1 when it timed out) and its output. */
function runSuite(node, bin, args, logFile) {
  return new Promise((resolveRun) => {
    const child = spawn(node, [bin, ...args], { cwd: cacheDir, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.on('exit', () => running.delete(child));
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const timer = setTimeout(() => {
      out += `\n(stopped after ${seconds(RUN_TIMEOUT_MS)})\n`;
      child.kill('SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('error', (err) => (out += `\n${err.message}\n`));
    child.on('close', (code) => {
      clearTimeout(timer);
      out = out.replace(/\x1b\[[0-9;]*m/g, ''); // the suites colour their output even when it is not a terminal
      writeFileSync(logFile, out);
      resolveRun({ code: code ?? 1, out });
    });
  });
}

/** The failing and warning checks of each scenario in the unexpected-failures list of `out`, from its checks.json. */
function unexpectedDetails(out, outDir) {
  const section = out.split(/Unexpected failures[^\n]*:\n/)[1];
  if (!section || !existsSync(outDir)) return [];
  const names = [...section.matchAll(/^\s*✗ (\S+)/gm)].map((m) => m[1]);
  const lines = [];
  for (const dir of readdirSync(outDir)) {
    const scenario = names.find((n) => dir.startsWith(`server-${n}-`));
    const file = join(outDir, dir, 'checks.json');
    if (!scenario || !existsSync(file)) continue;
    for (const c of JSON.parse(readFileSync(file, 'utf8'))) {
      if (c.status === 'FAILURE' || c.status === 'WARNING') lines.push(`    ${scenario}: ${c.id} ${c.status}: ${c.errorMessage ?? c.description}`);
    }
  }
  return lines;
}

/**
 * The server scenarios revision `revision` requires (scored), from the suite's requirements/<revision>.yaml; null when
 * the run has no --requirements (0.1.16's active suite: every scenario it runs counts).
 */
function scoredScenarios(bin, args) {
  const i = args.indexOf('--requirements');
  if (i < 0) return null;
  const file = resolve(bin, '../../requirements', `${args[i + 1]}.yaml`);
  if (!existsSync(file)) return null;
  const section = readFileSync(file, 'utf8').split(/^server:\n/m)[1]?.split(/^\S/m)[0] ?? '';
  return new Set([...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]));
}

/** Scenario counts of a suite's output: scored ones passed, failed as its baseline expects, and failed otherwise. */
function scenarioCounts(out, scored) {
  const summary = out.split('=== SUMMARY ===')[1] ?? '';
  const results = [...summary.matchAll(/^([✓✗]) (\S+): \d+ passed, \d+ failed$/gm)].map((m) => ({ ok: m[1] === '✓', name: m[2] }));
  const expected = new Set([...(summary.split(/Expected failures[^\n]*\n/)[1] ?? '').matchAll(/^\s+~ (\S+)$/gm)].map((m) => m[1]));
  const counted = results.filter((r) => !scored || scored.has(r.name));
  // A baseline entry may be a scenario whose checks only warn (shown ✓): it counts as failed, as the suite counts it.
  const asExpected = counted.filter((r) => expected.has(r.name)).length;
  const otherwise = counted.filter((r) => !r.ok && !expected.has(r.name)).length;
  const checks = /Total: (\d+) passed, (\d+) failed/.exec(summary);
  return (
    `${counted.length - asExpected - otherwise}/${counted.length} ${scored ? 'required ' : ''}scenarios passed, ${asExpected} failed as the baseline expects` +
    (otherwise ? `, ${otherwise} failed otherwise` : '') +
    (scored ? `; ${results.length - counted.length} not-scored scenarios also ran` : '') +
    (checks ? ` (checks over all: ${checks[1]} passed, ${checks[2]} failed)` : '')
  );
}

const started = Date.now();
let platform = null;
let proxy = null;
let stopping = null;
const stopAll = () =>
  (stopping ??= (async () => {
    if (proxy) await new Promise((r) => proxy.close(() => r()));
    if (platform) await stopPlatform(platform.child);
  })());
// Should this process die some other way (an uncaught error, a closed stdout), the platform still gets its SIGTERM.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  if (platform && platform.child.exitCode === null && platform.child.signalCode === null) platform.child.kill('SIGTERM');
});
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {}); // e.g. EPIPE under `| head`
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the platform and the proxy`);
    stopAll().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  let node;
  const bins = {};
  try {
    node = node22();
    for (const v of [SUITE_NEW, SUITE_OLD]) bins[v] = suiteBin(v);
  } catch (err) {
    console.error(`conformance:mcp cannot run: ${err.message}`);
    process.exit(1);
  }
  if (!existsSync(join(root, 'services/embedded/dist/main.js'))) throw new Error('services/embedded/dist/main.js is missing: run node scripts/build.mjs first');
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });
  console.log(`> suites run under Node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()} (${node})`);

  const writeKey = `write-${randomBytes(16).toString('hex')}`;
  const t0 = Date.now();
  platform = startPlatform(writeKey, join(resultsDir, 'platform.log'));
  const platformUrl = await platform.ready;
  const startedIn = seconds(Date.now() - t0);
  proxy = await startProxy(platformUrl, writeKey);
  // A localhost URL: the DNS-rebinding scenario applies to localhost servers only.
  const url = `http://localhost:${proxy.address().port}/api/v1/mcp`;
  console.log(`> platform at ${platformUrl.origin} (fixtures on; started in ${startedIn}); suites call ${url} through the auth proxy`);

  const outcomes = [];
  for (const [i, run] of RUNS.entries()) {
    const outDir = join(resultsDir, `run-${i + 1}`);
    const args = ['server', '--url', url, ...run.args, '--expected-failures', join(baselines, run.baseline), '-o', outDir];
    const runStarted = Date.now();
    const { code, out } = await runSuite(node, bins[run.suite], args, join(resultsDir, `run-${i + 1}.log`));
    const summary = out.includes('=== SUMMARY ===') ? out.slice(out.indexOf('=== SUMMARY ===')) : out.split('\n').slice(-30).join('\n');
    console.log(`\n=== ${run.name} (baseline ${run.baseline}): ${code === 0 ? 'PASS' : 'FAIL'} in ${seconds(Date.now() - runStarted)} ===`);
    console.log(summary.trim());
    if (code !== 0) {
      const details = unexpectedDetails(out, outDir);
      if (details.length) console.log(['  failing checks:', ...details].join('\n'));
      console.log(`  full output: ${join(resultsDir, `run-${i + 1}.log`)}; checks: ${outDir}`);
      exitCode = 1;
    }
    outcomes.push(`${code === 0 ? 'PASS' : 'FAIL'}  ${run.name}: ${scenarioCounts(out, scoredScenarios(bins[run.suite], run.args))}`);
  }
  console.log(`\n> conformance:mcp ${exitCode === 0 ? 'passed' : 'FAILED'} in ${seconds(Date.now() - started)}`);
  for (const line of outcomes) console.log(`  ${line}`);
} catch (err) {
  console.error(`conformance:mcp failed: ${err.message}`);
  const log = join(resultsDir, 'platform.log');
  if (existsSync(log)) console.error(readFileSync(log, 'utf8').split('\n').slice(-20).join('\n'));
  exitCode = 1;
} finally {
  await stopAll();
}
process.exit(exitCode);

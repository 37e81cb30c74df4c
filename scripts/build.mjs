#!/usr/bin/env node
// Bundles each runnable entry (the embedded all-in-one process, each service, the `agp` CLI) with esbuild.
// Workspace packages (@agp/*) are bundled in; third-party packages stay external and load from node_modules.
// Type checking is separate: `pnpm typecheck`. Decorators are the legacy (experimentalDecorators) kind and
// Nest dependencies are injected with explicit tokens, so no decorator metadata is needed.
// The web console (services/console, a Vite app) is built too, unless nothing it is built from changed since its last
// build (a hash of its sources, config and lockfile, kept in services/console/dist/.build-hash).
import { build as esbuild } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const entries = {
  embedded: ['services/embedded/src/main.ts', 'services/embedded/dist/main.js'],
  gateway: ['services/gateway/src/main.ts', 'services/gateway/dist/main.js'],
  ingest: ['services/ingest/src/main.ts', 'services/ingest/dist/main.js'],
  interventions: ['services/interventions/src/main.ts', 'services/interventions/dist/main.js'],
  policies: ['services/policies/src/main.ts', 'services/policies/dist/main.js'],
  stats: ['services/stats/src/main.ts', 'services/stats/dist/main.js'],
  'mcp-gateway': ['services/mcp-gateway/src/main.ts', 'services/mcp-gateway/dist/main.js'],
  evals: ['services/evals/src/main.ts', 'services/evals/dist/main.js'],
  replay: ['services/replay/src/main.ts', 'services/replay/dist/main.js'],
  cli: ['packages/cli/src/cli.ts', 'packages/cli/dist/cli.js'],
  sdk: ['packages/sdk/src/index.ts', 'packages/sdk/dist/index.js'],
  // The SDK's framework adapters (subpath exports `@agp/sdk/<name>`), each its own bundle with its framework external
  // (an optional peer dependency); the main entry imports none of them. `--only sdk` builds them too.
  'sdk/ai': ['packages/sdk/src/adapters/ai.ts', 'packages/sdk/dist/ai.js'],
  'sdk/openai-agents': ['packages/sdk/src/adapters/openai-agents.ts', 'packages/sdk/dist/openai-agents.js'],
  'sdk/langchain': ['packages/sdk/src/adapters/langchain.ts', 'packages/sdk/dist/langchain.js'],
  'sdk/mcp': ['packages/sdk/src/adapters/mcp.ts', 'packages/sdk/dist/mcp.js'],
};

/**
 * The long-running processes: each is bundled to `dist/app.js`, and its `dist/main.js` is the launcher
 * (packages/runtime/src/launcher.ts) that starts OpenTelemetry trace export when it is configured and then imports
 * `app.js`, so the PostgreSQL instrumentation is in place before the application loads `pg`.
 * The value is the process's default `service.name`.
 */
const launched = { embedded: 'agp', gateway: 'agp-gateway', ingest: 'agp-ingest', interventions: 'agp-interventions', policies: 'agp-policies', stats: 'agp-stats', 'mcp-gateway': 'agp-mcp-gateway', evals: 'agp-evals', replay: 'agp-replay' };

const requested = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1].split(',') : [...Object.keys(entries), 'console'];
const only = [...new Set(requested.flatMap((name) => [name, ...Object.keys(entries).filter((k) => k.startsWith(`${name}/`))]))];
const unknown = requested.filter((name) => name !== 'console' && !entries[name]);
if (unknown.length) {
  console.error(`build.mjs: no entry ${unknown.join(', ')}; entries: ${[...Object.keys(entries), 'console'].join(', ')}`);
  process.exit(2);
}

const externalThirdParty = {
  name: 'external-third-party',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@agp/') || args.path.startsWith('node:')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** The console's folder, and the files its build reads besides node_modules (hashed to skip an unchanged build). */
const consoleDir = resolve(import.meta.dirname, '../services/console');
const root = resolve(import.meta.dirname, '..');

/** sha256 over the console's sources, config and the lockfile (paths and contents). */
function consoleSourceHash() {
  const h = createHash('sha256');
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name === 'node_modules' || e.name.startsWith('dist') || e.name === 'README.md' || e.name === 'FOUNDATION_READY') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(relative(root, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  walk(consoleDir);
  for (const f of ['pnpm-lock.yaml', 'scripts/build.mjs']) if (existsSync(join(root, f))) h.update(f).update(readFileSync(join(root, f)));
  return h.digest('hex');
}

/**
 * Build the console with Vite into services/console/dist (served by the gateway), or skip when its stamp matches.
 * Vite is resolved from the console package (its own version, whatever else is hoisted).
 */
async function buildConsole() {
  const stamp = join(consoleDir, 'dist/.build-hash');
  const hash = consoleSourceHash();
  if (existsSync(join(consoleDir, 'dist/index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return 'console (unchanged)';
  const vite = await import(pathToFileURL(createRequire(join(consoleDir, 'package.json')).resolve('vite')).href);
  // Build beside dist and swap it in, so a running gateway never serves a half-written build. The previous build's
  // assets (hashed names) stay for an hour: a page loaded before the swap still finds its lazily loaded chunks.
  const out = join(consoleDir, 'dist');
  const next = join(consoleDir, `dist.next-${process.pid}`);
  const old = join(consoleDir, `dist.old-${process.pid}`);
  await vite.build({ configFile: join(consoleDir, 'vite.config.ts'), root: consoleDir, logLevel: 'warn', build: { outDir: next, emptyOutDir: true } });
  if (existsSync(join(out, 'assets'))) {
    for (const f of readdirSync(join(out, 'assets'))) {
      const from = join(out, 'assets', f);
      if (!existsSync(join(next, 'assets', f)) && Date.now() - statSync(from).mtimeMs < 3_600_000) cpSync(from, join(next, 'assets', f), { preserveTimestamps: true });
    }
  }
  writeFileSync(join(next, '.build-hash'), hash);
  if (existsSync(out)) renameSync(out, old);
  renameSync(next, out);
  rmSync(old, { recursive: true, force: true });
  return 'console';
}

/**
 * The agent SDK's type declarations (packages/sdk/dist/types, `tsc -p packages/sdk/tsconfig.dts.json`, members marked
 * `@internal` stripped). The package is installed without the workspace, so the declarations that `index.d.ts` and the
 * adapters' `adapters/<name>.d.ts` reach must not import any `@agp/*` package: the build fails if one does (an adapter's
 * declarations import its framework's types, an optional peer dependency). Unreached declarations are removed.
 */
function buildSdkTypes() {
  const out = join(root, 'packages/sdk/dist/types');
  // Skipped when nothing the declarations are emitted from changed (tsc takes seconds; every distributed test boot builds).
  const h = createHash('sha256');
  const src = join(root, 'packages/sdk/src');
  for (const f of readdirSync(src, { recursive: true }).map(String).sort()) if (f.endsWith('.ts')) h.update(f).update(readFileSync(join(src, f)));
  for (const f of ['packages/sdk/tsconfig.dts.json', 'tsconfig.json']) h.update(readFileSync(join(root, f)));
  const hash = h.digest('hex');
  const stamp = join(root, 'packages/sdk/dist/.types-hash');
  if (existsSync(join(out, 'index.d.ts')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return;
  rmSync(out, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'packages/sdk/tsconfig.dts.json')], { stdio: 'inherit' });
  const reached = new Set();
  const walk = (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    const text = readFileSync(join(out, file), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s+['"]([^'"]+)['"]/g)) {
      if (m[1].startsWith('@agp/')) throw new Error(`packages/sdk: ${file} imports ${m[1]}; a public type must not come from a workspace package`);
      if (m[1].startsWith('./') || m[1].startsWith('../')) walk(relative(out, resolve(out, file, '..', m[1].replace(/\.js$/, '.d.ts'))));
    }
  };
  // The entries: the main one and each adapter's (packages/sdk/package.json `exports`).
  walk('index.d.ts');
  if (existsSync(join(out, 'adapters'))) for (const f of readdirSync(join(out, 'adapters'))) if (f.endsWith('.d.ts')) walk(`adapters/${f}`);
  for (const f of readdirSync(out, { recursive: true }).map(String)) if (f.endsWith('.ts') && !reached.has(f)) rmSync(join(out, f));
  writeFileSync(stamp, hash);
}

/**
 * esbuild with the bundles' shared settings (one ESM file for Node 20, third-party packages left external, source
 * maps), writing each output file only when its bytes changed, and then atomically (a temporary file renamed over the
 * old one). Tests build before they boot a platform while other tests start processes from the same dist/: a process
 * must never import a half-written bundle (an empty app.js imports as nothing, and the process exits 0 silently).
 */
async function build(options) {
  const result = await esbuild({
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [externalThirdParty],
    tsconfig: 'tsconfig.json',
    ...options,
    write: false,
  });
  for (const file of result.outputFiles) {
    if (existsSync(file.path) && Buffer.compare(readFileSync(file.path), Buffer.from(file.contents)) === 0) continue;
    mkdirSync(dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
  return result;
}

const started = Date.now();
const built = [];
await Promise.all([
  ...(only.includes('console') && existsSync(join(consoleDir, 'package.json')) ? [buildConsole().then((what) => built.push(what))] : []),
  ...only
    .filter((name) => name !== 'console' && existsSync(entries[name][0]))
    .flatMap((name) => [
      ...(launched[name]
        ? [
            build({
              entryPoints: ['packages/runtime/src/launcher.ts'],
              outfile: entries[name][1],
              define: { AGP_TRACE_SERVICE_NAME: JSON.stringify(launched[name]) },
            }),
          ]
        : []),
      build({
        entryPoints: [entries[name][0]],
        outfile: launched[name] ? entries[name][1].replace(/main\.js$/, 'app.js') : entries[name][1],
        banner: name === 'cli' ? { js: '#!/usr/bin/env node' } : undefined,
      }).then(() => {
        // The CLI runs as a command too (packages/cli/bin/agp.js imports it; `./packages/cli/dist/cli.js` works alone).
        if (name === 'cli') chmodSync(entries[name][1], 0o755);
        if (name === 'sdk') buildSdkTypes();
        built.push(name);
      }),
    ]),
]);
if (!process.argv.includes('--quiet')) console.error(`built ${built.join(', ')} in ${Date.now() - started} ms`);

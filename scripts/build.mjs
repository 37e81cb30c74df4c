#!/usr/bin/env node
// Bundles each runnable entry (the embedded all-in-one process, each service, the `agp` CLI) with esbuild.
// Workspace packages (@agp/*) are bundled in; third-party packages stay external and load from node_modules.
// Type checking is separate: `pnpm typecheck`. Decorators are the legacy (experimentalDecorators) kind and
// Nest dependencies are injected with explicit tokens, so no decorator metadata is needed.
import { build } from 'esbuild';
import { chmodSync, existsSync } from 'node:fs';

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
  client: ['packages/client/src/cli.ts', 'packages/client/dist/cli.js'],
};

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1].split(',') : Object.keys(entries);

const externalThirdParty = {
  name: 'external-third-party',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@agp/') || args.path.startsWith('node:')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

const started = Date.now();
await Promise.all(
  only
    .filter((name) => existsSync(entries[name][0]))
    .map((name) =>
      build({
        entryPoints: [entries[name][0]],
        outfile: entries[name][1],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: true,
        logLevel: 'warning',
        plugins: [externalThirdParty],
        banner: name === 'client' ? { js: '#!/usr/bin/env node' } : undefined,
        tsconfig: 'tsconfig.json',
      }).then(() => {
        // The CLI runs as a command too (packages/client/bin/agp.js imports it; `./packages/client/dist/cli.js` works alone).
        if (name === 'client') chmodSync(entries[name][1], 0o755);
      }),
    ),
);
if (!process.argv.includes('--quiet')) console.error(`built ${only.join(', ')} in ${Date.now() - started} ms`);

#!/usr/bin/env node
// The `agp` command: the "bin" of @agp/cli, linked by the workspace install into node_modules/.bin, so that
// `npx agp …` from the repository root runs the CLI without npm's banner or a rebuild (docs/configuration.md, The CLI).
// It runs the bundled CLI, dist/cli.js, which `npm run build` (or `npm run quickstart`) writes. This small file is
// committed, so the link exists (and is executable) right after `pnpm install`, before the first build.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('agp: the CLI is not built yet; run `npm run build` (or `npm run quickstart`) in the repository first\n');
  process.exit(1);
}
await import(cli.href);

/**
 * The `agp` command-line entry point, bundled to `packages/cli/dist/cli.js` (with a `#!/usr/bin/env node` shebang):
 * `npx agp …` from the repository root after a build (the package's bin, `bin/agp.js`), `npm run agp -- …`, or
 * `node packages/cli/dist/cli.js …`.
 */
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));

/** The `agp` command-line entry point (`pnpm agp …` or `node packages/client/dist/cli.js …`). */
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));

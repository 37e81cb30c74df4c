import 'reflect-metadata';
import { createLogger, exitOnSignals, orderedShutdown } from '@agp/runtime';
import { startBanner } from './banner.js';
import { applyEmbeddedV8Flags } from './memory.js';
import { startEmbedded } from './platform.js';

/**
 * `pnpm start`: the whole platform in one process (embedded mode). Prints the keys created on first start, the
 * absolute path of the file they are saved to, and a curl line that works as printed ({@link startBanner}), on stdout;
 * its JSON log lines go to stderr.
 * Before anything starts it sets the V8 flags that keep its memory low ({@link applyEmbeddedV8Flags}; `AGP_LOW_MEMORY=0`
 * switches them off); `npm start` also passes `--max-semi-space-size=2` ({@link EMBEDDED_NODE_FLAGS}).
 */
applyEmbeddedV8Flags();
// JSON log lines go to stderr: stdout carries only the human start banner, so the two never mix.
const logger = createLogger('agp', undefined, 2);
try {
  const p = await startEmbedded({ logger });
  process.stdout.write(startBanner(p));
  exitOnSignals(orderedShutdown([{ name: 'platform', run: () => p.stop() }], logger), logger);
} catch (err) {
  logger.fatal({ err }, 'failed to start');
  process.exit(1);
}

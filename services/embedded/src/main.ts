import 'reflect-metadata';
import { createLogger } from '@agp/runtime';
import { startBanner } from './banner.js';
import { startEmbedded } from './platform.js';

/**
 * `pnpm start`: the whole platform in one process (embedded mode). Prints the keys created on first start, the
 * absolute path of the file they are saved to, and a curl line that works as printed ({@link startBanner}).
 */
const logger = createLogger('agp');
try {
  const p = await startEmbedded({ logger });
  process.stdout.write(startBanner(p));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping');
    await p.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  logger.fatal({ err }, 'failed to start');
  process.exit(1);
}

import 'reflect-metadata';
import { createLogger } from '@agp/runtime';
import { startEmbedded } from './platform.js';

/**
 * `pnpm start`: the whole platform in one process (embedded mode). Prints the keys created on first start
 * and a curl line that works as printed.
 */
const logger = createLogger('agp');
try {
  const p = await startEmbedded({ logger });
  const lines = [
    '',
    `  AGP is running (embedded mode) at ${p.url}`,
    `  API docs: ${p.url}/docs    OpenAPI: ${p.url}/api/v1/openapi.json`,
  ];
  if (p.createdKeys) {
    lines.push(
      '',
      `  First start: created organisation '${p.createdKeys.organization_id}' with two API keys (shown once; also saved to <AGP_DATA_DIR>/first-run-keys.json):`,
      `    write key: ${p.createdKeys.write}`,
      `    read key:  ${p.createdKeys.read}`,
      '',
      '  Try it:',
      `    curl -s -H "Authorization: Bearer ${p.createdKeys.read}" ${p.url}/api/v1/interventions`,
    );
  } else {
    lines.push('', '  Keys were printed on first start (see <AGP_DATA_DIR>/first-run-keys.json), or set AGP_INIT_ORG / AGP_INIT_WRITE_KEY / AGP_INIT_READ_KEY.');
  }
  lines.push('');
  process.stdout.write(lines.join('\n') + '\n');
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

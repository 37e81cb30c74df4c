import { existsSync } from 'node:fs';
import type { EmbeddedPlatform } from './platform.js';

/**
 * The text `npm start` prints once the embedded platform is up: where it listens, the docs, and on first start the
 * keys it created (write, read, and admin: the key that creates more keys over HTTP), the absolute path of the file they were saved to ({@link EmbeddedPlatform.keysFile}) and a
 * curl line that works as printed. Later starts point at that file when it exists, else at `AGP_INIT_*`.
 * Lines are indented by two spaces; the text starts and ends with an empty line. Pure apart from checking that the
 * keys file exists. Source: README (Quickstart): the real path, not a placeholder.
 */
export function startBanner(p: Pick<EmbeddedPlatform, 'url' | 'createdKeys' | 'keysFile'>): string {
  const lines = ['', `  AGP is running (embedded mode) at ${p.url}`, `  Console: ${p.url}/ (sign in with an API key)`, `  API docs: ${p.url}/docs    OpenAPI: ${p.url}/api/v1/openapi.json`];
  if (p.createdKeys) {
    const saved = p.keysFile ? `; also saved to ${p.keysFile}` : '';
    lines.push(
      '',
      `  First start: created organisation '${p.createdKeys.organization_id}' with ${p.createdKeys.admin ? 'three' : 'two'} API keys (shown once${saved}):`,
      `    write key: ${p.createdKeys.write}`,
      `    read key:  ${p.createdKeys.read}`,
      ...(p.createdKeys.admin ? [`    admin key: ${p.createdKeys.admin}  (manages API keys: POST ${p.url}/api/v1/keys)`] : []),
      '',
      '  Try it:',
      `    curl -s -H "Authorization: Bearer ${p.createdKeys.read}" ${p.url}/api/v1/interventions`,
    );
  } else if (p.keysFile && existsSync(p.keysFile)) {
    lines.push('', `  Keys were printed on first start and saved to ${p.keysFile}.`);
  } else {
    lines.push('', '  Keys were printed on first start, or set AGP_INIT_ORG / AGP_INIT_WRITE_KEY / AGP_INIT_READ_KEY / AGP_INIT_ADMIN_KEY.');
  }
  lines.push('');
  return lines.join('\n') + '\n';
}

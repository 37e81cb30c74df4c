import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_ROUTES, matchHttpRoute } from '@agp/contracts';

/**
 * The console calls only the public API (docs/console.md): every `/api/v1/...` path written in its sources is a
 * route of the HTTP route table (the one the gateway registers and the OpenAPI document is generated from), and the
 * un-prefixed paths it calls are the three `/mcp/*` lists. No browser needed.
 */
const SRC = resolve(import.meta.dirname, '../../services/console/src');

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * API paths in the console's sources: string and template literals starting with /api/v1/ or /mcp/ (not patterns
 * such as `/mcp/*` or `/api/v1/...` in comments), each `${…}` standing for one path segment.
 */
function apiPaths(): Array<{ file: string; path: string }> {
  const out: Array<{ file: string; path: string }> = [];
  for (const file of files(SRC).filter((f) => /\.(ts|tsx)$/.test(f))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(['`])(\/(?:api\/v1|mcp)\/[^'`\s*]*)\1/g)) {
      if (!m[2].includes('...')) out.push({ file: file.slice(SRC.length + 1), path: m[2].split('?')[0].replace(/\/+$/, '') });
    }
  }
  return out;
}

/** Whether a console path (with `${…}` segments) can be a route of the table: some route's path, its `{params}` filled, matches. */
function isRoute(path: string): boolean {
  const pattern = new RegExp(`^${path.split(/\$\{[^}]*\}/).map((part) => part.replace(/[.*+?^()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
  return HTTP_ROUTES.some((r) => pattern.test(r.path.replace(/\{[^}]+\}/g, 'x')) || (!path.includes('${') && matchHttpRoute(r.method, path) !== undefined));
}

describe('the console uses only the public API', () => {
  it('calls only paths of the HTTP route table (or the /mcp/* lists)', () => {
    const paths = apiPaths();
    expect(paths.length).toBeGreaterThan(10);
    const unknown = paths.filter(({ path }) => {
      if (['/mcp/tools', '/mcp/resources', '/mcp/prompts'].includes(path)) return false;
      if (path === '/api/v1/mcp') return false; // the MCP endpoint itself (shown as a URL to copy)
      return !isRoute(path);
    });
    expect(unknown, `known routes: ${HTTP_ROUTES.length}`).toEqual([]);
  });
});

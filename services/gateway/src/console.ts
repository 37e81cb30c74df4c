/**
 * Serving the web console (services/console, built by `node scripts/build.mjs` into services/console/dist):
 * - `/assets/*` (Vite's content-hashed files): a year-long immutable cache;
 * - a browser navigation (GET or HEAD accepting text/html) to `/` or a console route — `/interventions`, `/approvals`,
 *   `/policies`, `/runs`, `/evals`, `/replay`, `/audit-log`, `/audit-trail`, `/webhooks` and their sub-paths, and exactly `/mcp` — gets index.html (history
 *   fallback), never cached, with a strict Content-Security-Policy;
 * - everything else passes through: `/api/...`, the un-prefixed `/mcp/tools`, `/mcp/resources`, `/mcp/prompts`
 *   (authenticated API lists), `/healthz`, `/readyz`, `/metrics`, `/docs`; and a non-browser request (an API client's
 *   `Accept: application/json` or curl's `*\/*`) to a console path keeps the answer it had before the console existed.
 * Without a build, a navigation gets a 503 page saying how to build it. Source: docs/console.md; architecture §1.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';

/** Console routes whose sub-paths are console routes too (`/runs/<id>`); `/mcp` is exact: `/mcp/*` is the API. */
export const CONSOLE_ROUTE_PREFIXES = ['/interventions', '/approvals', '/policies', '/runs', '/evals', '/replay', '/audit-log', '/audit-trail', '/webhooks'] as const;

/** The Content-Security-Policy of the console's pages: scripts, styles and data only from the gateway itself. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every console answer carries (the page, the assets, the not-built page). */
const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' } as const;

/**
 * The built console's folder: `AGP_CONSOLE_DIR` when set, else services/console/dist found from this module's place —
 * services/gateway/src (sources, tests), services/gateway/dist or services/embedded/dist (the bundles) are all two
 * levels under services/.
 */
export function defaultConsoleDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGP_CONSOLE_DIR) return resolve(env.AGP_CONSOLE_DIR);
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../console/dist');
}

/** Whether `path` (no query) is a console page: `/`, exactly `/mcp`, or a route of {@link CONSOLE_ROUTE_PREFIXES} or below. */
export function isConsoleRoute(path: string): boolean {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (p === '/' || p === '' || p === '/mcp') return true;
  return CONSOLE_ROUTE_PREFIXES.some((r) => p === r || p.startsWith(`${r}/`));
}

/** Whether a request is a browser navigation: GET or HEAD that accepts HTML explicitly. */
function wantsHtml(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && /\btext\/html\b/i.test(req.get('accept') ?? '');
}

const NOT_BUILT_HTML = (dir: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>AGP console not built</title></head>
<body><main><h1>The AGP console is not built</h1>
<p>The gateway serves the web console from <code>${dir.replace(/[<>&"]/g, '')}</code>, which has no <code>index.html</code>.</p>
<p>Build it with <code>npm run build</code> (or <code>node scripts/build.mjs</code>) from the repository root, then reload this page.
<code>npm start</code> and <code>npm run quickstart</code> build it for you.</p>
<p>The API works without it: <a href="/docs">API docs</a>, <a href="/api/v1/openapi.json">OpenAPI document</a>.</p></main></body></html>`;

/** Options of {@link consoleAssets}. */
export interface ConsoleAssetsOptions {
  /** Folder of the built console (index.html, assets/). @default {@link defaultConsoleDir}() */
  dir?: string;
}

/**
 * Express middleware serving the console: mount it before authentication (the console's files are public; its data
 * comes from the authenticated API). See the module comment for what it answers and what it leaves alone.
 */
export function consoleAssets(opts: ConsoleAssetsOptions = {}) {
  const dir = opts.dir ?? defaultConsoleDir();
  const index = join(dir, 'index.html');
  const assets = express.static(join(dir, 'assets'), {
    index: false,
    fallthrough: false,
    immutable: true,
    maxAge: '365d',
    etag: true,
    setHeaders: (res) => res.set(SECURITY_HEADERS),
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path.startsWith('/assets/')) {
      req.url = req.url.slice('/assets'.length);
      return assets(req, res, (err?: unknown) => {
        req.url = `/assets${req.url}`;
        const status = (err as { status?: number } | undefined)?.status ?? 404;
        res.status(status === 404 ? 404 : status).set({ ...SECURITY_HEADERS, 'cache-control': 'no-store' }).type('text/plain').send(status === 404 ? 'not found' : 'error');
      });
    }
    if (req.path === '/favicon.svg' && existsSync(join(dir, 'favicon.svg'))) {
      return res.set({ ...SECURITY_HEADERS, 'cache-control': 'public, max-age=86400' }).sendFile(join(dir, 'favicon.svg'));
    }
    if (!isConsoleRoute(req.path)) return next();
    // The answer at a console path depends on Accept (the page for a browser, the API's answer otherwise).
    res.vary('Accept');
    if (!wantsHtml(req)) return next();
    res.set({ ...SECURITY_HEADERS, 'content-security-policy': CONSOLE_CSP, 'cache-control': 'no-cache' });
    if (!existsSync(index)) return void res.status(503).type('html').send(NOT_BUILT_HTML(dir));
    res.sendFile(index, { lastModified: true, cacheControl: false });
  };
}

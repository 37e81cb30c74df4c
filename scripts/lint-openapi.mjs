#!/usr/bin/env node
/**
 * Lint the OpenAPI document the gateway serves at `GET /api/v1/openapi.json`, without a running server:
 * the document is built by importing `buildOpenApiDocument` from the `@agp/contracts` sources (through tsx),
 * written to a file, and checked with `redocly lint --extends recommended`. Exits 1 on any error OR warning
 * (redocly itself exits 0 when there are only warnings), 2 when the document or redocly could not be run.
 *
 * Usage: `node scripts/lint-openapi.mjs [out.json]` (root script `lint:openapi`). With `out.json` the document is
 * kept there; otherwise it goes to a temporary directory that is removed afterwards. Source: docs/decisions.md (The OpenAPI document lists every answer the gateway gives).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

/**
 * The document exactly as the gateway serves it (`buildOpenApiDocument('/')`), as pretty-printed JSON text.
 * Imports the generator's own module rather than the package index, so only the contracts it uses must load.
 */
async function buildDocumentText() {
  const { buildOpenApiDocument } = await tsImport(pathToFileURL(join(root, 'packages/contracts/src/openapi.ts')).href, import.meta.url);
  return `${JSON.stringify(buildOpenApiDocument('/'), null, 2)}\n`;
}

/**
 * Run `redocly lint --extends recommended --format json <file>` with the repository's @redocly/cli and return its
 * parsed report (`{ totals: { errors, warnings, ignored }, problems: [...] }`).
 * @throws when redocly cannot be started or does not print a JSON report.
 */
function redoclyLint(file) {
  const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
  const run = spawnSync(process.execPath, [cli, 'lint', '--extends', 'recommended', '--format', 'json', file], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, // no npm-registry version check
  });
  if (run.error) throw run.error;
  const start = run.stdout.indexOf('{');
  try {
    return JSON.parse(run.stdout.slice(start));
  } catch {
    throw new Error(`redocly lint exited ${run.status} without a JSON report:\n${run.stdout}\n${run.stderr}`);
  }
}

/**
 * Problems reviewed and accepted, each with its reason; they are printed but do not fail the lint.
 * - `no-ambiguous-paths` between `/api/v1/replay/history/{run_id}` and `/api/v1/replay/{run_id}/…`: the spec fixes
 *   both paths (§Replay history). The gateway matches literal segments first, so `/api/v1/replay/history/x` is always
 *   the history of run `x` (a run whose id is literally `history` cannot use the `/{run_id}/…` routes).
 * - `operation-2xx-response` on `GET /auth/login` and `GET /auth/callback`: signing in is a browser redirect (302 to
 *   the OpenID provider and back), which is their success answer (docs/auth.md).
 */
const ACCEPTED = [
  (p) => p.ruleId === 'no-ambiguous-paths' && p.message.includes('`/api/v1/replay/history/{run_id}`'),
  (p) => p.ruleId === 'operation-2xx-response' && /^#\/paths\/~1auth~1(login|callback)\/get\//.test(p.location?.[0]?.pointer ?? ''),
];

/** One readable line per problem: severity, rule, JSON pointer and message. */
function describe(problem) {
  const where = problem.location?.[0];
  const line = where?.start?.line ? `:${where.start.line}` : '';
  return `  ${problem.severity.padEnd(5)} ${problem.ruleId}  ${where?.pointer ?? ''}${line}\n        ${problem.message}`;
}

/** Build, write, lint and report; resolves to the process exit code. */
async function main() {
  const out = process.argv[2] ? resolve(process.argv[2]) : null;
  const dir = out ? null : mkdtempSync(join(tmpdir(), 'agp-openapi-'));
  const file = out ?? join(dir, 'openapi.json');
  try {
    writeFileSync(file, await buildDocumentText());
    const report = redoclyLint(file);
    const problems = report.problems ?? [];
    const accepted = problems.filter((p) => ACCEPTED.some((ok) => ok(p)));
    const open = problems.filter((p) => !accepted.includes(p));
    for (const p of open) console.log(describe(p));
    for (const p of accepted) console.log(`${describe(p)}\n        (accepted: see ACCEPTED in scripts/lint-openapi.mjs)`);
    const errors = open.filter((p) => p.severity === 'error').length;
    const warnings = open.length - errors;
    console.log(`OpenAPI (${file}): redocly ${report.version ?? ''} lint --extends recommended: ${errors} error(s), ${warnings} warning(s), ${accepted.length} accepted, ${report.totals.ignored} ignored`);
    return errors + warnings === 0 ? 0 : 1;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`lint-openapi: ${err instanceof Error ? err.stack : err}`);
    process.exit(2);
  },
);

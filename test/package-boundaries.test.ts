import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Libraries never depend on services: no package under packages/ names a package under services/ in its
 * package.json, nor imports one from its sources. A service may use a library, never the other way round, so a client
 * that installs a library does not pull in a service (and its database drivers). The client packages are held to
 * more: the agent SDK (`@agp/sdk`) and the fleet simulator (`@agp/simulator`) speak HTTP only and reach no database
 * driver (`pg`, `@electric-sql/pglite`, `@agp/eventstore`), directly or through a workspace package they use; the
 * `agp` CLI (`@agp/cli`) may (`agp keys` bootstraps offline) but imports no service. Source: docs/architecture.md
 * (ownership and dependency rules).
 */
const ROOT = resolve(import.meta.dirname, '..');
const nameOf = (dir: string) => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string }).name;
const dirs = (parent: string) => readdirSync(join(ROOT, parent)).map((d) => join(ROOT, parent, d)).filter((d) => statSync(join(d, 'package.json'), { throwIfNoEntry: false })?.isFile());

/** Every .ts and .tsx file below `dir`, but node_modules and dist. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist') return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

/** The database drivers a client package must not reach (the event store is the package that opens them). */
const DATABASE_DRIVERS = ['pg', '@electric-sql/pglite', '@agp/eventstore'];

type PackageJson = { name: string } & Partial<Record<'dependencies' | 'devDependencies' | 'peerDependencies' | 'optionalDependencies', Record<string, string>>>;
const readPackage = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** The package a module specifier names (`pg/lib/x` → `pg`, `@agp/sdk/http` → `@agp/sdk`); undefined for a relative or `node:` one. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every module specifier imported by a source file: static and type imports, re-exports, side-effect and dynamic imports. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

/**
 * What breaks the client-package rules for the package in `dir`, as readable lines (empty when it keeps them):
 * `forbidden` named in any dependency field of its package.json, reached through the runtime dependencies of a
 * workspace package it names (`workspace` maps a workspace package's name to its folder), or imported by a file
 * under its src/; and any import from src/ of a workspace package its package.json does not declare (an undeclared
 * import would slip past the package.json check).
 */
function clientRuleViolations(dir: string, forbidden: readonly string[], workspace: ReadonlyMap<string, string>): string[] {
  const pkg = readPackage(dir);
  const found: string[] = [];
  const declared = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const) {
    for (const dep of Object.keys(pkg[field] ?? {})) {
      declared.add(dep);
      if (forbidden.includes(dep)) found.push(`${pkg.name} ${field}: ${dep}`);
    }
  }
  // Workspace packages are bundled into the client's build: follow their runtime dependencies.
  const seen = new Set<string>();
  const walk = (name: string, path: string[]) => {
    if (seen.has(name)) return;
    seen.add(name);
    const at = workspace.get(name);
    if (!at) return;
    const sub = readPackage(at);
    for (const dep of Object.keys({ ...sub.dependencies, ...sub.peerDependencies, ...sub.optionalDependencies })) {
      if (forbidden.includes(dep)) found.push(`${pkg.name} reaches ${dep} through ${[...path, name].join(' → ')}`);
      else if (dep.startsWith('@agp/')) walk(dep, [...path, name]);
    }
  };
  for (const dep of declared) if (dep.startsWith('@agp/') && !forbidden.includes(dep)) walk(dep, []);
  for (const file of sources(join(dir, 'src'))) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const name = packageOf(spec);
      if (!name) continue;
      if (forbidden.includes(name)) found.push(`${file.slice(dir.length + 1)} imports ${spec}`);
      else if (workspace.has(name) && name !== pkg.name && !declared.has(name)) found.push(`${file.slice(dir.length + 1)} imports ${spec}, not declared in package.json`);
    }
  }
  return found;
}

describe('package boundaries', () => {
  const services = dirs('services').map(nameOf);
  const packages = dirs('packages');

  it('finds the services and the packages', () => {
    expect(services).toEqual(expect.arrayContaining(['@agp/evals', '@agp/gateway']));
    expect(packages.map(nameOf)).toEqual(expect.arrayContaining(['@agp/contracts', '@agp/cli', '@agp/simulator', '@agp/sdk', '@agp/scenario-file']));
  });

  it('has no package depending on a service, in package.json or in an import', () => {
    const found: string[] = [];
    for (const dir of packages) {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
      for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
        for (const dep of Object.keys(pkg[field] ?? {})) if (services.includes(dep)) found.push(`${nameOf(dir)} ${field}: ${dep}`);
      }
      for (const file of sources(join(dir, 'src'))) {
        for (const spec of importsOf(readFileSync(file, 'utf8'))) {
          const dep = packageOf(spec);
          if (dep && services.includes(dep)) found.push(`${file.slice(ROOT.length + 1)} imports ${dep}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  const workspace = new Map([...packages, ...dirs('services')].map((d) => [nameOf(d), d]));
  const dirOf = (name: string) => packages.find((d) => nameOf(d) === name)!;

  it.each(['@agp/sdk', '@agp/simulator'])('%s reaches no database driver and no service, in package.json, through a workspace package, or in an import', (name) => {
    expect(clientRuleViolations(dirOf(name), [...DATABASE_DRIVERS, ...services], workspace)).toEqual([]);
  });

  it('@agp/cli imports no service and names none in package.json (it may open the database: `agp keys` bootstraps offline)', () => {
    expect(clientRuleViolations(dirOf('@agp/cli'), services, workspace)).toEqual([]);
  });

  it('the client rule catches a driver in package.json, one reached through a workspace package, an imported service and an undeclared import', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agp-boundary-'));
    try {
      mkdirSync(join(dir, 'src/sub'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@agp/bad-client', dependencies: { pg: '^8', '@agp/auth': 'workspace:*' } }));
      writeFileSync(join(dir, 'src/a.ts'), "import { Pool } from 'pg';\nexport type { X } from '@agp/gateway/x';\n");
      writeFileSync(join(dir, 'src/sub/b.ts'), "import '@electric-sql/pglite';\nconst m = await import('@agp/contracts');\n");
      expect(clientRuleViolations(dir, [...DATABASE_DRIVERS, ...services], workspace).sort()).toEqual(
        [
          '@agp/bad-client dependencies: pg',
          '@agp/bad-client reaches @agp/eventstore through @agp/auth',
          'src/a.ts imports pg',
          'src/a.ts imports @agp/gateway/x',
          'src/sub/b.ts imports @electric-sql/pglite',
          'src/sub/b.ts imports @agp/contracts, not declared in package.json',
        ].sort(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

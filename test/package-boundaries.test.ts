import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Libraries never depend on services: no package under packages/ names a package under services/ in its
 * package.json, nor imports one from its sources. A service may use a library, never the other way round, so a client
 * that installs a library does not pull in a service (and its database drivers). Source: docs/architecture.md
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

describe('package boundaries', () => {
  const services = dirs('services').map(nameOf);
  const packages = dirs('packages');

  it('finds the services and the packages', () => {
    expect(services).toEqual(expect.arrayContaining(['@agp/evals', '@agp/gateway']));
    expect(packages.map(nameOf)).toEqual(expect.arrayContaining(['@agp/contracts', '@agp/client', '@agp/scenario-file']));
  });

  it('has no package depending on a service, in package.json or in an import', () => {
    const found: string[] = [];
    for (const dir of packages) {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
      for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
        for (const dep of Object.keys(pkg[field] ?? {})) if (services.includes(dep)) found.push(`${nameOf(dir)} ${field}: ${dep}`);
      }
      for (const file of sources(join(dir, 'src'))) {
        for (const m of readFileSync(file, 'utf8').matchAll(/from\s+'(@agp\/[a-z-]+)[^']*'|import\(\s*'(@agp\/[a-z-]+)[^']*'\s*\)/g)) {
          const dep = m[1] ?? m[2];
          if (services.includes(dep)) found.push(`${file.slice(ROOT.length + 1)} imports ${dep}`);
        }
      }
    }
    expect(found).toEqual([]);
  });
});

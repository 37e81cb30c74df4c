import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The event-store port is closed: no code under services/ or packages/ (packages/eventstore, which owns the adapters,
 * aside) names the event store's tables in SQL, reaches for SQL through the store (`store.sql`), or imports the
 * eventstore package's internal modules. Services get their read-model database separately, and read the log, the
 * ids it holds and the checkpoints through the package's public API. Source: architecture §3 (Event store port).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const OWNER = 'packages/eventstore/';
/** The event store's own tables (the SQL adapters' events and streams, the checkpoints, the KurrentDB id table). */
const TABLES = /\bagp_(events|streams|checkpoints|kurrentdb_event_ids)\b/;
/** SQL obtained from the store: `store.sql`, `deps.store.sql`, `this.store.sql`, `{ sql } = store`. */
const STORE_SQL = /\bstore\??\.sql\b|\{[^}]*\bsql\b[^}]*\}\s*=\s*(this\.)?(deps\.)?store\b/;
/** A deep import of the eventstore package's modules instead of its public entry point. */
const INTERNAL_IMPORT = /from\s+['"](@agp\/eventstore\/|[./]+(\.\.\/)*packages\/eventstore\/src\/|(\.\.\/)+eventstore\/src\/)/;

/** Every source file (TypeScript, JavaScript) under `dir`, skipping node_modules and build output. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** The offending lines of the files under services/ and packages/ (owner excluded) that match `pattern`. */
function offenders(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of [...sources(join(ROOT, 'services')), ...sources(join(ROOT, 'packages'))]) {
    const rel = relative(ROOT, file);
    if (rel.startsWith(OWNER)) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('the event-store port is closed', () => {
  it("no service, worker, gateway or other package names the event store's tables", () => {
    expect(offenders(TABLES)).toEqual([]);
  });

  it('nothing gets SQL from the event store', () => {
    expect(offenders(STORE_SQL)).toEqual([]);
  });

  it("nothing imports the eventstore package's internal modules", () => {
    expect(offenders(INTERNAL_IMPORT)).toEqual([]);
  });

  it('the checks catch what they are meant to catch', () => {
    expect(TABLES.test("SELECT event_id FROM agp_events WHERE event_id = ANY($1)")).toBe(true);
    expect(TABLES.test('UPDATE agp_checkpoints SET position = $2')).toBe(true);
    expect(TABLES.test('SELECT * FROM agp_event_log')).toBe(false);
    expect(STORE_SQL.test('listRuns(this.deps.store.sql, org)')).toBe(true);
    expect(STORE_SQL.test('const { sql } = this.store;')).toBe(true);
    expect(STORE_SQL.test('listRuns(this.deps.db, org)')).toBe(false);
    expect(INTERNAL_IMPORT.test("import { SqlEventStore } from '@agp/eventstore/src/event-store.js';")).toBe(true);
    expect(INTERNAL_IMPORT.test("import { x } from '../../../packages/eventstore/src/sql.js';")).toBe(true);
    expect(INTERNAL_IMPORT.test("import { createEventStore } from '@agp/eventstore';")).toBe(false);
  });
});

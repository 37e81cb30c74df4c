/**
 * The decision vectors (packages/policy-engine/vectors/v1, written by `pnpm gen:decision-vectors`): the files are
 * what the generator writes now (a change to decide() that changes an answer fails here until they are regenerated),
 * and every vector replays through decide() to its expected decision, compared as canonical JSON.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@agp/contracts';
import { generateVectorFiles, runVector, VECTORS_VERSION, type Vector } from './vector-cases.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors', VECTORS_VERSION);
const onDisk = new Map(readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

describe('decision vectors', () => {
  it('the files are what the generator writes (run pnpm gen:decision-vectors after changing decide)', () => {
    const generated = generateVectorFiles();
    expect([...onDisk.keys()]).toEqual([...generated.keys()]);
    for (const [file, text] of generated) expect(onDisk.get(file) === text, `${file} is out of date`).toBe(true);
  });

  it('there are at least 3,000 vectors, named uniquely', () => {
    const names = [...onDisk.values()].flatMap((t) => t.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as Vector).name));
    expect(names.length).toBeGreaterThanOrEqual(3000);
    expect(new Set(names).size).toBe(names.length);
  });

  for (const [file, text] of onDisk) {
    it(`${file}: every vector replays to its expected decision`, () => {
      const lines = text.split('\n').filter(Boolean);
      const wrong: string[] = [];
      for (const line of lines) {
        const v = JSON.parse(line) as Vector;
        if (canonicalJson(runVector(v.input)) !== canonicalJson(v.expected)) wrong.push(v.name);
      }
      expect(wrong).toEqual([]);
    });
  }
});

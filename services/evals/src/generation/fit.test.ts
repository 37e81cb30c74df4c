import { describe, expect, it } from 'vitest';
import type { GeneratedScenario } from '@agp/contracts';
import { MAX_SCENARIO_BYTES, REPLY_OVERHEAD_BYTES, fitScenarios } from './fit.js';

/** A generated scenario of `category` whose source text is `size` characters long. */
const scenario = (name: string, category: string, size = 100): GeneratedScenario => ({
  name,
  category,
  pass: 'template',
  severity: 'high',
  expected: 'block',
  description: '',
  violations: { [category]: 1 },
  source: { format: 'yaml', filename: `${name}.agp.yaml`, text: 'x'.repeat(size) },
});
const bytes = (list: GeneratedScenario[]) => list.reduce((sum, s) => sum + Buffer.byteLength(JSON.stringify(s)) + 1, 0);

describe('fitting the answer into one message', () => {
  it('keeps everything, in order, when it fits', () => {
    const list = [scenario('a1', 'a'), scenario('b1', 'b'), scenario('a2', 'a')];
    expect(fitScenarios(list, 1024 * 1024)).toEqual({ scenarios: list, tooLarge: [], trimmed: [] });
  });

  it('leaves out a scenario too large alone', () => {
    const list = [scenario('a1', 'a'), scenario('huge', 'b', MAX_SCENARIO_BYTES), scenario('a2', 'a')];
    expect(fitScenarios(list, 1024 * 1024)).toMatchObject({ scenarios: [list[0], list[2]], tooLarge: ['huge'], trimmed: [] });
  });

  it('takes the last scenarios of the fullest categories until the rest fits', () => {
    const list = [...['a1', 'a2', 'a3', 'a4'].map((n) => scenario(n, 'a', 1000)), scenario('b1', 'b', 1000), scenario('b2', 'b', 1000), scenario('c1', 'c', 1000)];
    const one = bytes([list[0]]);
    const out = fitScenarios(list, REPLY_OVERHEAD_BYTES + one * 5);
    expect(out.trimmed).toEqual(['a4', 'a3']);
    expect(out.scenarios.map((s) => s.name)).toEqual(['a1', 'a2', 'b1', 'b2', 'c1']);
    expect(bytes(out.scenarios)).toBeLessThanOrEqual(one * 5);
    expect(fitScenarios(list, REPLY_OVERHEAD_BYTES + one * 3).scenarios.map((s) => s.name)).toEqual(['a1', 'b1', 'c1']);
  });
});

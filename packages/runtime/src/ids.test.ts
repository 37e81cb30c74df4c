import { describe, expect, it } from 'vitest';
import { v5 as uuidv5, validate, version } from 'uuid';
import { deterministicId } from './ids.js';

describe('deterministicId', () => {
  it('gives the uuid package v5 id of the parts joined by U+0000, for ASCII and non-ASCII names', () => {
    const namespace = '6f1c1f5e-6a3e-4d55-9a49-0a5c3b8e7d21';
    const cases: string[][] = [['acme', 'ingest', 'ev-1'], ['org', 'ingest', 'é漢😀 id'], [''], ['a', 'b'], ['x'.repeat(500)]];
    for (const parts of cases) {
      const id = deterministicId(...parts);
      expect(id).toBe(uuidv5(parts.join('\u0000'), namespace));
      expect(validate(id) && version(id)).toBe(5);
    }
    expect(deterministicId('acme', 'ingest', 'ev-1')).not.toBe(deterministicId('globex', 'ingest', 'ev-1'));
  });
});

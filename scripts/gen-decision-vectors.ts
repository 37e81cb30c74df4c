/**
 * Writes the policy engine's decision vectors (packages/policy-engine/vectors/<version>/<kind>.jsonl) from the
 * TypeScript decide(): `pnpm gen:decision-vectors`. Deterministic; the vectors test fails until this is rerun after a
 * change to decide() that changes an answer. See packages/policy-engine/test/vector-cases.ts.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateVectorFiles, VECTORS_VERSION } from '../packages/policy-engine/test/vector-cases.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'policy-engine', 'vectors', VECTORS_VERSION);
mkdirSync(dir, { recursive: true });
for (const f of readdirSync(dir)) if (f.endsWith('.jsonl')) rmSync(join(dir, f));
let total = 0;
for (const [file, text] of generateVectorFiles()) {
  writeFileSync(join(dir, file), text);
  const n = text.split('\n').length - 1;
  total += n;
  console.log(`${file}: ${n}`);
}
console.log(`${total} vectors in ${dir}`);

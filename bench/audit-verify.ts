/**
 * `pnpm bench audit-verify`: offline verification of an evidence pack (not a test; docs/performance.md
 * (`pnpm bench audit-verify`)). Writes a synthetic pack of BENCH_RECORDS (1,000,000) version-1 records of about 400
 * bytes each, leaves [R/40, R/40 + R) of a tree of R·1.05 leaves, with two checkpoints signed by a generated Ed25519 key
 * and the consistency and range proofs, to a temporary file; then, in this process, one core:
 *
 *   (a) the baseline: read the file line by line (`readline`) and SHA-256 every line: the least any verifier does;
 *   (b) `verifyPack` of `@agp/tlog` over the same lines, as `agp audit verify` runs it: JSON of every line, the end
 *       line's SHA-256, signatures, consistency, each record's leaf hash, order and leaf, and the range proof.
 *
 * Target: (b) ≤ 30 s for 10⁶ records. Prints the pack's size and the range proof's length.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { canonicalJson } from '@agp/contracts';
import { consistencyProofWith, leafHash, nodeHash, PackWriter, rangeProofWith, rangeRootFromNodes, signCheckpoint, verifierKey, verifyPack, type Hash } from '@agp/tlog';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);

const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
const lines = (file: string) => createInterface({ input: createReadStream(file), crlfDelay: Infinity });

/** The leaf record of index i (about 400 bytes of RFC 8785 JSON). */
function record(i: number) {
  return canonicalJson({
    v: 1,
    id: `0192f0a0-0000-7000-8000-${String(i).padStart(12, '0')}`,
    organization_id: 'acme',
    at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
    type: 'InterventionRecorded',
    stream: `intervention-i${i}`,
    stream_version: 1,
    actor: 'key:k1',
    actor_name: 'ci key',
    data: { id: `i${i}`, type: 'hard_block', outcome: 'blocked', agent_id: `agent-${i % 50}`, action_name: 'wire_funds', reason: `amount over the limit of policy ${i % 7}`, estimated_cost_usd: 0.25 },
  });
}

/** Write the pack; returns its path and the range proof's length. */
async function writePack(dir: string): Promise<{ file: string; proofLength: number; tree: number }> {
  const start = Math.floor(RECORDS / 40);
  const end = start + RECORDS;
  const tree = Math.floor(RECORDS * 1.05);
  const hashes: Hash[] = new Array(tree);
  for (let i = 0; i < tree; i++) hashes[i] = leafHash(Buffer.from(i >= start && i < end ? record(i) : `other ${i}`));
  const key = generateKeyPairSync('ed25519').privateKey;
  // Every complete subtree's hash, level by level (as the platform stores them), so proofs cost O(log n) each.
  const levels: Hash[][] = [hashes];
  while (levels.at(-1)!.length > 1) {
    const below = levels.at(-1)!;
    levels.push(Array.from({ length: Math.floor(below.length / 2) }, (_, i) => nodeHash(below[2 * i], below[2 * i + 1])));
  }
  const node = (level: number, index: number) => levels[level][index];
  const root = (lo: number, hi: number) => rangeRootFromNodes(lo, hi, node);
  const mid = start + Math.floor(RECORDS / 2);
  const note = (size: number) => signCheckpoint({ origin: 'agp-audit/acme', size, root: root(0, size), extensions: ['time 2026-12-01T00:00:00Z'] }, [{ name: 'agp-audit', privateKey: key }]);
  const file = join(dir, 'pack.jsonl');
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const w = new PackWriter();
  await write(w.line({ kind: 'agp-audit-pack', version: 1, origin: 'agp-audit/acme', organization_id: 'acme', from: null, to: null, exported_at: new Date().toISOString(), start, end, tree_size: tree }));
  await write(w.line({ kind: 'key', key_id: verifierKey('agp-audit', key).split('+')[1], name: 'agp-audit', algorithm: 'ed25519', verifier_key: verifierKey('agp-audit', key), public_key: '', created_at: '2026-11-01T00:00:00.000Z', retired_at: null }));
  await write(w.line({ kind: 'checkpoint', tree_size: mid, note: note(mid) }));
  await write(w.line({ kind: 'checkpoint', tree_size: tree, note: note(tree) }));
  await write(w.line({ kind: 'consistency', from: mid, to: tree, proof: consistencyProofWith(mid, tree, root).map(b64) }));
  let chunk = '';
  for (let i = start; i < end; i++) {
    chunk += w.line({ kind: 'record', leaf_index: i, record_id: `0192f0a0-0000-7000-8000-${String(i).padStart(12, '0')}`, position: String(1000 + i * 3), leaf: record(i), leaf_hash: b64(hashes[i]) });
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  const proof = rangeProofWith(tree, start, end, root);
  await write(chunk + w.line({ kind: 'range_proof', tree_size: tree, start, end, proof: proof.map(b64) }) + w.end());
  out.end();
  await once(out, 'finish');
  return { file, proofLength: proof.length, tree };
}

/** `pnpm bench audit-verify`. */
export async function auditVerifyBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agp-bench-pack-'));
  try {
    let t = performance.now();
    const { file, proofLength, tree } = await writePack(dir);
    console.log(`wrote a pack of ${RECORDS.toLocaleString('en-US')} records (tree of ${tree.toLocaleString('en-US')}), ${(statSync(file).size / 1e6).toFixed(0)} MB, range proof of ${proofLength} hashes, in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    t = performance.now();
    let n = 0;
    for await (const line of lines(file)) {
      createHash('sha256').update(line).digest();
      n++;
    }
    const baseline = (performance.now() - t) / 1000;

    t = performance.now();
    const r = await verifyPack(lines(file));
    const verify = (performance.now() - t) / 1000;
    if (!r.ok) throw new Error(`the pack did not verify: ${r.failure.message}`);

    console.log('\n| Step | Lines | Seconds | Records/s |');
    console.log('| --- | ---: | ---: | ---: |');
    console.log(`| (a) baseline: read and SHA-256 each line | ${n.toLocaleString('en-US')} | ${baseline.toFixed(1)} | ${Math.round(RECORDS / baseline).toLocaleString('en-US')} |`);
    console.log(`| (b) verifyPack (agp audit verify) | ${n.toLocaleString('en-US')} | ${verify.toFixed(1)} | ${Math.round(RECORDS / verify).toLocaleString('en-US')} |`);
    console.log(`\n(b) is ${(verify / baseline).toFixed(2)}x the baseline; target ≤ 30 s for 10⁶ records: ${verify <= 30 * (RECORDS / 1e6) ? 'met' : 'NOT met'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@agp/contracts';
import {
  appendLeaves,
  commitmentOf,
  consistencyProof,
  leafHash,
  PackWriter,
  rangeProofFromNodes,
  rangeProofWith,
  RangeProofError,
  rootFromRangeProof,
  rootOf,
  signCheckpoint,
  subtreeRoot,
  verifierKey,
  verifyPack,
  type Hash,
  type PackLine,
  type PackRecordLine,
} from '../src/index.js';

/**
 * The evidence pack's verifier (docs/audit.md, Evidence packs) over synthetic packs: a good pack verifies with its
 * summary; each kind of damage (a line cut, a byte changed, a signature by an unknown key, a record changed, missing
 * or reordered, a range proof of another tree, checkpoints that are not consistent, a disclosure that does not open
 * its commitment) fails with the one line naming what failed. The range proof is checked against every range of every
 * tree up to 20 leaves.
 */
const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
const ORG = 'acme';
const ORIGIN = 'agp-audit/acme';
const KEY = generateKeyPairSync('ed25519').privateKey;
const VKEY = verifierKey('agp-audit', KEY);
const OTHER = generateKeyPairSync('ed25519').privateKey;

describe('range proofs', () => {
  it('give back the root of every tree up to 20 leaves for every range, from leaves in memory and from stored nodes', () => {
    for (let n = 1; n <= 20; n++) {
      const leaves = Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
      const nodes = new Map<string, Hash>();
      for (const c of appendLeaves(0, leaves, () => { throw new Error('empty tree'); })) nodes.set(`${c.level}/${c.index}`, c.hash);
      const root = rootOf(leaves);
      for (let a = 0; a <= n; a++)
        for (let b = a; b <= n; b++) {
          const proof = rangeProofWith(n, a, b, (lo, hi) => subtreeRoot(leaves, lo, hi));
          expect(proof.map(b64)).toEqual(rangeProofFromNodes(n, a, b, (l, i) => nodes.get(`${l}/${i}`)!).map(b64));
          expect(b64(rootFromRangeProof(n, a, b, leaves.slice(a, b), proof))).toBe(b64(root));
          expect(proof.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n + 1)));
        }
    }
  });

  it('refuses a proof too short or too long, and a range outside the tree', () => {
    const leaves = Array.from({ length: 7 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const proof = rangeProofWith(7, 2, 5, (lo, hi) => subtreeRoot(leaves, lo, hi));
    expect(() => rootFromRangeProof(7, 2, 5, leaves.slice(2, 5), proof.slice(1))).toThrow(/too short/);
    expect(() => rootFromRangeProof(7, 2, 5, leaves.slice(2, 5), [...proof, proof[0]])).toThrow(/too long/);
    expect(() => rangeProofWith(7, 5, 8, () => leaves[0])).toThrow(RangeProofError);
  });
});

interface Built {
  lines: Exclude<PackLine, { kind: 'end' }>[];
}

/**
 * A pack of leaves [2, 6) of a log of 9 records, with checkpoints of sizes 4, 7 and 9; the records are version-1
 * leaves, except leaf 3, a version-2 leaf with a disclosed `/data/reason` and a redacted `/data/input`.
 */
function build(): Built & { records: Record<string, unknown>[] } {
  const salt = randomBytes(32);
  const records = Array.from({ length: 9 }, (_, i) => ({
    v: 1,
    id: `rec-${i}`,
    organization_id: ORG,
    at: `2026-11-29T10:0${i}:00.000Z`,
    type: 'KillSwitchEngaged',
    stream: `killswitch-${i}`,
    stream_version: 1,
    actor: 'user:u1',
    actor_name: null,
    data: { scope: 'agent', reason: `reason ${i}` } as Record<string, unknown>,
  }));
  records[3] = { ...records[3], v: 2, data: { scope: 'agent', reason: { $commitment: commitmentOf(salt, 'looping') }, input: { $commitment: commitmentOf(randomBytes(32), { card: '4111' }) } } };
  const texts = records.map(canonicalJson);
  const hashes = texts.map((t) => leafHash(Buffer.from(t)));
  const note = (size: number, key = KEY) => signCheckpoint({ origin: ORIGIN, size, root: rootOf(hashes.slice(0, size)), extensions: ['time 2026-11-29T10:10:00Z'] }, [{ name: 'agp-audit', privateKey: key }]);
  const lines: Built['lines'] = [
    { kind: 'agp-audit-pack', version: 1, origin: ORIGIN, organization_id: ORG, from: '2026-11-29T10:02:00.000Z', to: '2026-11-29T10:06:00.000Z', exported_at: '2026-11-29T11:00:00.000Z', start: 2, end: 6, tree_size: 9 },
    { kind: 'key', key_id: VKEY.split('+')[1], name: 'agp-audit', algorithm: 'ed25519', verifier_key: VKEY, public_key: '', created_at: '2026-11-29T09:00:00.000Z', retired_at: null },
    ...[4, 7, 9].map((size) => ({ kind: 'checkpoint' as const, tree_size: size, note: note(size) })),
    { kind: 'consistency', from: 4, to: 7, proof: consistencyProof(hashes.slice(0, 7), 4).map(b64) },
    { kind: 'consistency', from: 7, to: 9, proof: consistencyProof(hashes.slice(0, 9), 7).map(b64) },
    ...[2, 3, 4, 5].map(
      (i): PackRecordLine => ({
        kind: 'record',
        leaf_index: i,
        record_id: `rec-${i}`,
        position: String(100 + i * 10),
        leaf: texts[i],
        leaf_hash: b64(hashes[i]),
        ...(i === 3 ? { disclosures: { '/data/reason': { salt: salt.toString('base64'), value: 'looping' } }, redacted: ['/data/input'] } : {}),
      }),
    ),
    { kind: 'range_proof', tree_size: 9, start: 2, end: 6, proof: rangeProofWith(9, 2, 6, (lo, hi) => subtreeRoot(hashes, lo, hi)).map(b64) },
  ];
  return { lines, records };
}

const write = (lines: Built['lines']) => {
  const w = new PackWriter();
  return lines.map((l) => w.line(l)).join('') + w.end();
};
const record = (b: Built, index: number) => b.lines.find((l) => l.kind === 'record' && l.leaf_index === index) as PackRecordLine;
const failure = async (text: string, keys?: string[]) => {
  const r = await verifyPack(text, keys ? { keys } : {});
  if (r.ok) throw new Error('the pack verified');
  return r.failure;
};

describe('evidence pack verification', () => {
  it('verifies a good pack, from its text or its lines, and summarises it', async () => {
    const text = write(build().lines);
    const r = await verifyPack(text);
    expect(r).toMatchObject({ ok: true, summary: { records: 4, start: 2, end: 6, tree_size: 9, checkpoints: 3, disclosed_fields: 1, redacted_fields: 1, redacted_records: 1, key_ids: [VKEY.split('+')[1]] } });
    expect((await verifyPack(text.split('\n').filter(Boolean), { keys: [VKEY] })).ok).toBe(true);
  });

  it('names the line of a truncated, altered or malformed pack', async () => {
    const text = write(build().lines);
    const lines = text.split('\n');
    expect((await failure(lines.slice(0, 8).join('\n'))).message).toMatch(/^line 9: truncated: the pack has no end line/);
    expect((await failure(text.slice(0, text.length - 30))).message).toMatch(/^line 13: not a JSON object: the pack is truncated or malformed/);
    expect((await failure(text.replace('"rec-4"', '"rec-X"'))).message).toMatch(/^line 13: the SHA-256 of the lines before the end line differs/);
    expect((await failure(['{"kind":"record"}', ...lines.slice(1)].join('\n'))).message).toMatch(/^line 1: the first line is not the pack header/);
    const swapped = [...lines];
    [swapped[2], swapped[5]] = [swapped[5], swapped[2]];
    expect((await failure(swapped.join('\n'))).message).toMatch(/^line 4: a "checkpoint" line out of order/);
  });

  it('refuses a checkpoint signed by a key that is not trusted, or altered', async () => {
    const b = build();
    const text = write(b.lines);
    expect((await failure(text, [verifierKey('agp-audit', OTHER)])).message).toMatch(/^checkpoint 4: signed by no known key \(signed by: agp-audit\)/);
    const cp = b.lines.find((l) => l.kind === 'checkpoint' && l.tree_size === 7) as { note: string };
    cp.note = cp.note.replace('time 2026-11-29T10:10:00Z', 'time 2026-11-29T10:11:00Z');
    expect((await failure(write(b.lines))).message).toMatch(/^checkpoint 7: the signature of agp-audit does not verify/);
  });

  it('refuses checkpoints that are not consistent with each other', async () => {
    const b = build();
    const c = b.lines.find((l) => l.kind === 'consistency' && l.from === 7) as { proof: string[] };
    c.proof = c.proof.map(() => b64(leafHash(Buffer.from('other'))));
    expect((await failure(write(b.lines))).message).toBe('checkpoint 9: not consistent with checkpoint 7: the log was rewritten between them');
  });

  it('names a record changed since it was logged, missing from the store, or out of the store’s order', async () => {
    let b = build();
    record(b, 4).leaf = record(b, 4).leaf!.replace('reason 4', 'reason four');
    expect((await failure(write(b.lines))).message).toMatch(/^record rec-4 \(leaf 4\): changed since it was logged/);
    b = build();
    Object.assign(record(b, 5), { leaf: null, missing: true, position: null });
    expect((await failure(write(b.lines))).message).toBe('record rec-5 (leaf 5): no longer in the platform’s store');
    b = build();
    [record(b, 4).position, record(b, 5).position] = [record(b, 5).position, record(b, 4).position];
    expect((await failure(write(b.lines))).message).toMatch(/^record rec-5 \(leaf 5\): the store’s order differs from the log’s/);
    b = build();
    record(b, 2).record_id = 'rec-7';
    expect((await failure(write(b.lines))).message).toBe('record rec-7 (leaf 2): its leaf is of another record');
  });

  it('refuses a range proof that does not give the signed root, or is of another tree size', async () => {
    let b = build();
    record(b, 2).leaf_hash = b64(leafHash(Buffer.from(record(b, 2).leaf!.replace('reason 2', 'x'))));
    record(b, 2).leaf = record(b, 2).leaf!.replace('reason 2', 'x');
    expect((await failure(write(b.lines))).message).toBe('checkpoint 9: the log’s leaves do not produce the signed root: the log was rewritten');
    b = build();
    Object.assign(b.lines.find((l) => l.kind === 'range_proof')!, { tree_size: 7 });
    expect((await failure(write(b.lines))).message).toMatch(/^checkpoint 9: the range proof is for leaves \[2, 6\) of a tree of 7/);
    b = build();
    (b.lines.find((l) => l.kind === 'range_proof') as { proof: string[] }).proof.pop();
    expect((await failure(write(b.lines))).message).toBe('checkpoint 9: the range proof is too short');
  });

  it('opens version-2 disclosures, counts redacted fields, and refuses a disclosure that does not match', async () => {
    let b = build();
    record(b, 3).disclosures!['/data/reason'].value = 'something else';
    expect((await failure(write(b.lines))).message).toBe('record rec-3 (leaf 3): its disclosed field /data/reason does not match its commitment');
    b = build();
    record(b, 3).redacted = ['/data/scope'];
    expect((await failure(write(b.lines))).message).toBe('record rec-3 (leaf 3): its redacted field /data/scope is not a commitment in its leaf');
    b = build();
    record(b, 3).disclosures!['/data/reason'].salt = randomBytes(32).toString('base64');
    expect((await failure(write(b.lines))).message).toMatch(/^record rec-3 \(leaf 3\): its disclosed field \/data\/reason does not match/);
  });
});

describe('the worked example of docs/audit.md', () => {
  it('has the range proofs the document prints for the tree of 3 leaves', () => {
    const L = ['QinMeQONUEZNpIWHzwVRObSX0SdBFq95lKPL+lMTqsU=', '24lqA3mr+d+aY1Phxgd5kNTh5KA8XEOsM392acwum0w=', 'mn0L/0D58e/VCwD4IycvbrUdRc1nyrr0Q/i2eHgHZSo='].map((s) => new Uint8Array(Buffer.from(s, 'base64')));
    const proof = (a: number, b: number) => rangeProofWith(3, a, b, (lo, hi) => subtreeRoot(L, lo, hi)).map(b64);
    expect(proof(1, 3)).toEqual([b64(L[0])]);
    expect(proof(0, 1)).toEqual([b64(L[1]), b64(L[2])]);
    expect(proof(2, 3)).toEqual(['l1V7xjBEDmN29zrzp3m1Kg8lWF8NLEk26f1ayibUZtk=']);
    expect(proof(0, 3)).toEqual([]);
    expect(b64(rootFromRangeProof(3, 1, 3, L.slice(1), [L[0]]))).toBe('3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=');
  });
});

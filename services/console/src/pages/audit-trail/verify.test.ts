import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromBase64, leafHash, nodeHash, parseCheckpointNote, parseVerifierKey, rootFromInclusionProof, toBase64, toHex, verifyCheckpointSignature, verifyRecord, type Bytes } from './verify.js';

/**
 * The console's Web Crypto check against the worked example of docs/audit.md: the same leaves, hashes, roots,
 * proofs, verifier key and signed note, byte for byte; then each way a proof or a checkpoint can be wrong.
 */
const LEAVES = [
  '{"actor":"key:k1","actor_name":"ci key","at":"2026-11-29T10:00:00.000Z","data":{"at":"2026-11-29T10:00:00.000Z","id":"pol-1","name":"Refund limit","run_budget":5},"id":"0192f0a0-0000-7000-8000-000000000001","organization_id":"acme","stream":"policy-pol-1","stream_version":1,"type":"PolicyCreated","v":1}',
  '{"actor":"user:u1","actor_name":"alice@acme.test","at":"2026-11-29T10:01:00.000Z","data":{"agent_id":"billing-bot","at":"2026-11-29T10:01:00.000Z","reason":"looping","scope":"agent"},"id":"0192f0a0-0000-7000-8000-000000000002","organization_id":"acme","stream":"killswitch-x","stream_version":1,"type":"KillSwitchEngaged","v":1}',
  '{"actor":"approver:jane@acme.test","actor_name":null,"at":"2026-11-29T10:02:00.000Z","data":{"approver_email":"jane@acme.test","from":"escalated","id":"i1","to":"approved_after_review"},"id":"0192f0a0-0000-7000-8000-000000000003","organization_id":"acme","stream":"intervention-i1","stream_version":2,"type":"InterventionOutcomeChanged","v":1}',
];
const LEAF_HASHES = ['QinMeQONUEZNpIWHzwVRObSX0SdBFq95lKPL+lMTqsU=', '24lqA3mr+d+aY1Phxgd5kNTh5KA8XEOsM392acwum0w=', 'mn0L/0D58e/VCwD4IycvbrUdRc1nyrr0Q/i2eHgHZSo='];
const ROOT_2 = 'l1V7xjBEDmN29zrzp3m1Kg8lWF8NLEk26f1ayibUZtk=';
const ROOT_3 = '3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=';
const VKEY = 'agp-audit+44f5f5c1+AepKbGPinFIKvvVQexMuxfmVR3auvr57kkIe6mkURtIs';
const NOTE = 'agp-audit/acme\n3\n3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=\ntime 2026-11-29T10:05:00Z\n\n— agp-audit RPX1wToRxq9XnWKKRC1q7tpR/6twP828aYYrKki/px/FuyUPhY6nIdGKdyr6cP5PtL2RSvyPt+/rDu0TJuxqkC0o/gY=\n';
const RECORD_0 = '0192f0a0-0000-7000-8000-000000000001';
const b = (s: string) => fromBase64(s)!;

/** The inclusion proof of leaf 0 in the tree of 3, as the route answers it. */
const PROOF_0 = { record: RECORD_0, leaf_index: 0, tree_size: 3, leaf: LEAVES[0], leaf_hash: LEAF_HASHES[0], proof: [LEAF_HASHES[1], LEAF_HASHES[2]] };

afterEach(() => vi.restoreAllMocks());

describe('audit trail verification in the browser (Web Crypto)', () => {
  it('hashes the leaves and nodes of the worked example as RFC 9162 does', async () => {
    expect(await Promise.all(LEAVES.map(async (l) => toBase64(await leafHash(l))))).toEqual(LEAF_HASHES);
    expect(toHex(await leafHash(LEAVES[0]))).toBe('4229cc79038d50464da48587cf055139b497d1274116af7994a3cbfa5313aac5');
    const root2 = await nodeHash(b(LEAF_HASHES[0]), b(LEAF_HASHES[1]));
    expect(toBase64(root2)).toBe(ROOT_2);
    expect(toBase64(await nodeHash(root2, b(LEAF_HASHES[2])))).toBe(ROOT_3);
  });

  it('walks the worked example’s inclusion proofs up to the root of 3, and refuses paths of another shape', async () => {
    expect(toBase64((await rootFromInclusionProof(b(LEAF_HASHES[0]), 0, 3, [b(LEAF_HASHES[1]), b(LEAF_HASHES[2])]))!)).toBe(ROOT_3);
    expect(toBase64((await rootFromInclusionProof(b(LEAF_HASHES[2]), 2, 3, [b(ROOT_2)]))!)).toBe(ROOT_3);
    expect(toBase64((await rootFromInclusionProof(b(LEAF_HASHES[1]), 1, 2, [b(LEAF_HASHES[0])]))!)).toBe(ROOT_2);
    // Too short, too long, an index outside the tree, a hash that is not 32 bytes.
    expect(await rootFromInclusionProof(b(LEAF_HASHES[0]), 0, 3, [b(LEAF_HASHES[1])])).toBeNull();
    expect(await rootFromInclusionProof(b(LEAF_HASHES[2]), 2, 3, [b(ROOT_2), b(ROOT_2)])).toBeNull();
    expect(await rootFromInclusionProof(b(LEAF_HASHES[0]), 3, 3, [b(ROOT_2)])).toBeNull();
    expect(await rootFromInclusionProof(b(LEAF_HASHES[2]), 2, 3, [new Uint8Array(31) as Bytes])).toBeNull();
  });

  it('parses the worked example’s checkpoint and verifier key, and verifies its Ed25519 signature', async () => {
    const cp = parseCheckpointNote(NOTE);
    expect(cp).toMatchObject({ origin: 'agp-audit/acme', size: 3, rootBase64: ROOT_3, extensions: ['time 2026-11-29T10:05:00Z'] });
    expect(cp.text).toBe('agp-audit/acme\n3\n3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=\ntime 2026-11-29T10:05:00Z\n');
    expect(cp.signatures.map((s) => [s.name, s.keyId, s.signature.length])).toEqual([['agp-audit', '44f5f5c1', 64]]);
    const key = await parseVerifierKey(VKEY);
    expect(key).toMatchObject({ name: 'agp-audit', keyId: '44f5f5c1' });
    expect(toBase64(key.publicKey)).toBe('6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=');
    expect(await verifyCheckpointSignature(cp, key)).toBe(true);
    // One changed byte of the signed text (the size) and the signature no longer verifies.
    expect(await verifyCheckpointSignature(parseCheckpointNote(NOTE.replace('\n3\n', '\n4\n')), key)).toBe(false);
  });

  it('refuses a verifier key whose id is not its own, and malformed notes, naming what is wrong', async () => {
    await expect(parseVerifierKey(VKEY.replace('44f5f5c1', '44f5f5c2'))).rejects.toThrow(/id 44f5f5c2 is not the id of its name and key \(44f5f5c1\)/);
    await expect(parseVerifierKey('agp-audit+44f5f5c1+AAAA')).rejects.toThrow(/not an Ed25519 key/);
    await expect(parseVerifierKey('nonsense')).rejects.toThrow(/not a verifier key/);
    expect(() => parseCheckpointNote(NOTE.slice(0, -1))).toThrow(/final newline/);
    expect(() => parseCheckpointNote(NOTE.replace('\n3\n', '\nthree\n'))).toThrow(/tree size/);
    expect(() => parseCheckpointNote(NOTE.replace(ROOT_3, 'AAAA'))).toThrow(/root hash/);
    expect(() => parseCheckpointNote(NOTE.replace('— agp-audit', '- agp-audit'))).toThrow(/signature line/);
  });

  it('verifies a record of the worked example step by step: signature, record, leaf hash, tree size, root', async () => {
    const r = await verifyRecord({ record: RECORD_0, note: NOTE, verifierKey: VKEY, proof: PROOF_0 });
    expect(r.steps.map((s) => [s.id, s.status])).toEqual([
      ['signature', 'pass'],
      ['record', 'pass'],
      ['leaf-hash', 'pass'],
      ['tree-size', 'pass'],
      ['root', 'pass'],
    ]);
    expect(r.valid).toBe(true);
    expect(r.steps.find((s) => s.id === 'root')!.detail).toBe(`${ROOT_3} (2 hashes)`);
    const last = await verifyRecord({ record: '0192f0a0-0000-7000-8000-000000000003', note: NOTE, verifierKey: VKEY, proof: { record: '0192f0a0-0000-7000-8000-000000000003', leaf_index: 2, tree_size: 3, leaf: LEAVES[2], leaf_hash: LEAF_HASHES[2], proof: [ROOT_2] } });
    expect(last.valid).toBe(true);
  });

  it('fails the step that a changed leaf, path, tree size, record or checkpoint breaks', async () => {
    const failed = async (over: Partial<typeof PROOF_0>, note = NOTE, record = RECORD_0) =>
      (await verifyRecord({ record, note, verifierKey: VKEY, proof: { ...PROOF_0, ...over } })).steps.filter((s) => s.status !== 'pass').map((s) => s.id);
    // The leaf's data changed (and the proof's leaf hash left as it was): its hash differs, so does the root.
    expect(await failed({ leaf: LEAVES[0].replace('"run_budget":5', '"run_budget":50') })).toEqual(['leaf-hash', 'root']);
    // A sibling swapped for another hash.
    expect(await failed({ proof: [LEAF_HASHES[2], LEAF_HASHES[1]] })).toEqual(['root']);
    // The proof of another tree size.
    expect(await failed({ tree_size: 2, proof: [LEAF_HASHES[1]] })).toEqual(['tree-size', 'root']);
    // Another record's proof.
    expect(await failed({}, NOTE, '0192f0a0-0000-7000-8000-000000000002')).toEqual(['record']);
    // A checkpoint whose root was changed: the signature fails, and the path does not lead to that root.
    expect(await failed({}, NOTE.replace(ROOT_3, ROOT_2))).toEqual(['signature', 'root']);
  });

  it('says the signature cannot be checked where Web Crypto has no Ed25519, and does not call the record valid', async () => {
    const importKey = crypto.subtle.importKey.bind(crypto.subtle);
    vi.spyOn(crypto.subtle, 'importKey').mockImplementation(((format: string, data: Bytes, alg: { name: string }, ...rest: [boolean, KeyUsage[]]) => {
      if (alg.name === 'Ed25519') return Promise.reject(new DOMException('Unrecognized name.', 'NotSupportedError'));
      return importKey(format as 'raw', data, alg, ...rest);
    }) as typeof crypto.subtle.importKey);
    const r = await verifyRecord({ record: RECORD_0, note: NOTE, verifierKey: VKEY, proof: PROOF_0 });
    expect(r.steps[0]).toMatchObject({ id: 'signature', status: 'unavailable' });
    expect(r.steps[0].detail).toMatch(/no Ed25519/);
    expect(r.steps.slice(1).every((s) => s.status === 'pass')).toBe(true);
    expect(r.valid).toBe(false);
  });
});

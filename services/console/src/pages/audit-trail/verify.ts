/**
 * Checking the audit trail in the browser, with Web Crypto only (`crypto.subtle`: SHA-256 and Ed25519), so that the
 * console does not take the platform's word for it: a checkpoint's signed note is verified against a verifier key
 * from `/.well-known/agp-audit-keys`, a record's leaf is hashed, and its inclusion proof is walked up to a root that
 * is compared with the root the verified checkpoint signs (never with the proof's own `root_hash`).
 *
 * Formats (docs/audit.md): leaf hash SHA-256(0x00 || leaf), node hash SHA-256(0x01 || left || right) (RFC 9162
 * §2.1.1); the inclusion check of RFC 9162 §2.1.3.2; checkpoints as C2SP tlog-checkpoint in a C2SP signed note,
 * signature lines `— <key name> <base64(key id (4 bytes) || Ed25519 signature)>`; verifier keys
 * `<name>+<key id, 8 hex>+<base64(0x01 || 32-byte public key)>`, the key id being the first 4 bytes of
 * SHA-256(name || "\n" || 0x01 || public key). Pure apart from Web Crypto; runs in browsers and in Node 20.
 * Source: docs/audit.md (Leaves, Checkpoints, Keys, Proofs, Worked example).
 */

/** Bytes as Web Crypto takes them (an ArrayBuffer-backed view). */
export type Bytes = Uint8Array<ArrayBuffer>;

/** The length of a SHA-256 hash, bytes. */
const HASH_BYTES = 32;
/** The signed-note signature type of Ed25519. */
const ED25519 = 0x01;
/** The prefix of a signed note's signature line: an em dash and a space. */
const SIG_PREFIX = '\u2014 ';

/** Standard padded base64 of `bytes`. */
export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** The bytes of standard base64 `text`, or null when it is not base64. */
export function fromBase64(text: string): Bytes | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  try {
    const s = atob(text);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The concatenation of `parts`. */
function concat(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const utf8 = (s: string): Bytes => new TextEncoder().encode(s) as Bytes;
const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

/** SHA-256 of `data` (Web Crypto), 32 bytes. */
export async function sha256(data: Bytes): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data));
}

/** The RFC 9162 leaf hash of the leaf text `leaf` (its UTF-8 bytes): SHA-256(0x00 || leaf). */
export function leafHash(leaf: string): Promise<Bytes> {
  return sha256(concat(Uint8Array.of(0), utf8(leaf)));
}

/** The RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Bytes> {
  return sha256(concat(Uint8Array.of(1), left, right));
}

/**
 * The root that the audit path `proof` leads to from leaf hash `leaf` at `index` in the tree of `treeSize` leaves
 * (RFC 9162 §2.1.3.2, the same walk as `verifyInclusion` of `@agp/tlog`), or null when the proof cannot be one of that
 * tree (index outside the tree, a hash that is not 32 bytes, a path too short or too long).
 */
export async function rootFromInclusionProof(leaf: Uint8Array, index: number, treeSize: number, proof: readonly Uint8Array[]): Promise<Bytes | null> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return null;
  let fn = index;
  let sn = treeSize - 1;
  let r: Bytes = new Uint8Array(leaf);
  for (const p of proof) {
    if (p.length !== HASH_BYTES || sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** One signature line of a signed note. */
export interface NoteSignature {
  /** The key name. */
  name: string;
  /** The key id, 8 hex digits (the first 4 bytes of the signature blob). */
  keyId: string;
  /** The signature (the rest of the blob; 64 bytes for Ed25519). */
  signature: Bytes;
}

/** A checkpoint's signed note, parsed (not verified). */
export interface ParsedCheckpoint {
  /** The signed text: every byte above the blank line, the final newline included. */
  text: string;
  origin: string;
  size: number;
  /** The root hash, 32 bytes, and as the note writes it (base64). */
  root: Bytes;
  rootBase64: string;
  /** The extension lines, e.g. `time 2026-11-29T10:05:00Z`. */
  extensions: string[];
  signatures: NoteSignature[];
}

/** Why a note or a key was refused; the message says what is wrong. */
export class AuditFormatError extends Error {}

/**
 * Parse a C2SP signed note holding a tlog-checkpoint.
 * @throws AuditFormatError when the note lacks its blank line or final newline, the size is not a whole number, the
 *   root is not 32 bytes of base64, or a signature line is malformed.
 */
export function parseCheckpointNote(note: string): ParsedCheckpoint {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new AuditFormatError('not a signed note: no blank line before the signatures, or no final newline');
  const text = note.slice(0, split + 1);
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new AuditFormatError('a checkpoint has an origin, a tree size and a root hash');
  const [origin, sizeText, rootBase64, ...extensions] = lines;
  if (!/^(0|[1-9]\d*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new AuditFormatError(`the tree size is not a whole number: ${sizeText.slice(0, 40)}`);
  const root = fromBase64(rootBase64);
  if (!root || root.length !== HASH_BYTES) throw new AuditFormatError('the root hash is not 32 bytes of base64');
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line): NoteSignature => {
      if (!line.startsWith(SIG_PREFIX)) throw new AuditFormatError(`a signature line starts with "— ": ${line.slice(0, 60)}`);
      const [name, b64, extra] = line.slice(SIG_PREFIX.length).split(' ');
      const blob = fromBase64(b64 ?? '');
      if (!name || extra !== undefined || !blob || blob.length < 5) throw new AuditFormatError(`a malformed signature line: ${line.slice(0, 60)}`);
      return { name, keyId: toHex(blob.subarray(0, 4)), signature: blob.slice(4) };
    });
  return { text, origin, size: Number(sizeText), root, rootBase64, extensions, signatures };
}

/** A verifier key, parsed and checked: its name, key id and raw Ed25519 public key. */
export interface ParsedVerifierKey {
  name: string;
  /** 8 hex digits. */
  keyId: string;
  /** The 32-byte Ed25519 public key. */
  publicKey: Bytes;
}

/**
 * Parse a signed-note verifier key (`<name>+<key id>+<base64(0x01 || public key)>`) and check that its id is the id of
 * its name and key.
 * @throws AuditFormatError when it is malformed, not Ed25519, or its id does not match.
 */
export async function parseVerifierKey(vkey: string): Promise<ParsedVerifierKey> {
  const m = /^([^\s+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(vkey);
  if (!m) throw new AuditFormatError(`not a verifier key (name+id+key): ${vkey.slice(0, 80)}`);
  const raw = fromBase64(m[3]);
  if (!raw || raw.length !== 33 || raw[0] !== ED25519) throw new AuditFormatError(`verifier key ${m[1]}: not an Ed25519 key`);
  const publicKey = raw.slice(1);
  const id = toHex((await sha256(concat(utf8(`${m[1]}\n`), raw))).subarray(0, 4));
  if (id !== m[2]) throw new AuditFormatError(`verifier key ${m[1]}: its id ${m[2]} is not the id of its name and key (${id})`);
  return { name: m[1], keyId: m[2], publicKey };
}

/**
 * Whether this browser verifies Ed25519 with Web Crypto (Chromium, Firefox, Safari and Node 20 do; older browsers do
 * not): tries to import a public key.
 */
export async function ed25519Supported(): Promise<boolean> {
  try {
    await crypto.subtle.importKey('raw', new Uint8Array(32), { name: 'Ed25519' }, false, ['verify']);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `checkpoint` carries a signature by `key` (same name and key id) that verifies (Ed25519 over the note's
 * signed text, Web Crypto). False when no signature line is by that key.
 * @throws whatever Web Crypto throws when it has no Ed25519 (check {@link ed25519Supported} first).
 */
export async function verifyCheckpointSignature(checkpoint: ParsedCheckpoint, key: ParsedVerifierKey): Promise<boolean> {
  const sig = checkpoint.signatures.find((s) => s.name === key.name && s.keyId === key.keyId);
  if (!sig) return false;
  const cryptoKey = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, cryptoKey, sig.signature, utf8(checkpoint.text));
}

/** The outcome of one step of {@link verifyRecord}: passed, failed, or could not be run here. */
export type StepStatus = 'pass' | 'fail' | 'unavailable';

/** One step of the check, as the page lists it. */
export interface VerifyStep {
  /** Stable id: `signature`, `record`, `leaf-hash`, `tree-size`, `root`. */
  id: 'signature' | 'record' | 'leaf-hash' | 'tree-size' | 'root';
  /** What was checked, in words. */
  label: string;
  status: StepStatus;
  /** What was found (hashes in base64, the key used, why it failed). */
  detail: string;
}

/** What {@link verifyRecord} checks: a checkpoint's note, the verifier key of its signer, and an inclusion proof. */
export interface VerifyInput {
  /** The record id the user asked about. */
  record: string;
  /** The checkpoint's signed note (as `GET /api/v1/audit/checkpoints` lists it). */
  note: string;
  /** The verifier key of the checkpoint's signer (from `/.well-known/agp-audit-keys`, or one the user trusts). */
  verifierKey: string;
  /** The inclusion proof of the record for the checkpoint's tree size (`GET /api/v1/audit/proofs/inclusion`). */
  proof: { record: string; leaf_index: number; tree_size: number; leaf: string; leaf_hash: string; proof: string[] };
}

/** The result: each step, and whether every step passed. */
export interface VerifyResult {
  steps: VerifyStep[];
  /** True only when every step passed. */
  valid: boolean;
}

/**
 * Check that record `input.record` is in the log the checkpoint signs, step by step: the checkpoint's Ed25519
 * signature against the verifier key (unavailable where the browser has no Ed25519: said so, and then the record is
 * not reported valid); the leaf is the record asked for (its `id`); SHA-256(0x00 || leaf) equals the proof's leaf
 * hash; the proof is for the checkpoint's tree size; the root recomputed from the leaf hash and the audit path
 * equals the checkpoint's root. Every step runs even when an earlier one failed, so the page shows all of them.
 * @throws AuditFormatError when the note or the verifier key cannot be parsed.
 */
export async function verifyRecord(input: VerifyInput): Promise<VerifyResult> {
  const checkpoint = parseCheckpointNote(input.note);
  const key = await parseVerifierKey(input.verifierKey);
  const steps: VerifyStep[] = [];

  if (!(await ed25519Supported())) {
    steps.push({ id: 'signature', label: 'Checkpoint signature (Ed25519)', status: 'unavailable', detail: 'this browser has no Ed25519 in Web Crypto, so the signature cannot be checked here; check the note with another tool (docs/audit.md)' });
  } else {
    const ok = await verifyCheckpointSignature(checkpoint, key);
    const signers = checkpoint.signatures.map((s) => `${s.name} ${s.keyId}`).join(', ') || 'nobody';
    steps.push({
      id: 'signature',
      label: 'Checkpoint signature (Ed25519)',
      status: ok ? 'pass' : 'fail',
      detail: ok ? `valid: signed by ${key.name} (key id ${key.keyId})` : `does not verify with key ${key.name} ${key.keyId} (signed by: ${signers})`,
    });
  }

  let leafId: unknown;
  try {
    leafId = (JSON.parse(input.proof.leaf) as { id?: unknown }).id;
  } catch {
    leafId = undefined;
  }
  steps.push({
    id: 'record',
    label: 'The leaf is the record asked for',
    status: leafId === input.record && input.proof.record === input.record ? 'pass' : 'fail',
    detail: leafId === input.record ? `the leaf's id is ${input.record} (leaf ${input.proof.leaf_index})` : `the leaf's id is ${JSON.stringify(leafId)}, not ${input.record}`,
  });

  const computedLeaf = await leafHash(input.proof.leaf);
  const leafOk = toBase64(computedLeaf) === input.proof.leaf_hash;
  steps.push({
    id: 'leaf-hash',
    label: 'Leaf hash: SHA-256(0x00 || leaf)',
    status: leafOk ? 'pass' : 'fail',
    detail: leafOk ? toBase64(computedLeaf) : `computed ${toBase64(computedLeaf)}, the proof says ${input.proof.leaf_hash}`,
  });

  const sizeOk = input.proof.tree_size === checkpoint.size;
  steps.push({
    id: 'tree-size',
    label: 'The proof is for the checkpoint’s tree',
    status: sizeOk ? 'pass' : 'fail',
    detail: sizeOk ? `${checkpoint.size} leaves` : `the proof is for ${input.proof.tree_size} leaves, the checkpoint for ${checkpoint.size}`,
  });

  const path = input.proof.proof.map(fromBase64);
  const root = path.every((p): p is Bytes => p !== null) ? await rootFromInclusionProof(computedLeaf, input.proof.leaf_index, checkpoint.size, path) : null;
  const rootOk = root !== null && equalBytes(root, checkpoint.root);
  steps.push({
    id: 'root',
    label: 'Root recomputed from the audit path = the checkpoint’s root',
    status: rootOk ? 'pass' : 'fail',
    detail: root === null ? `the audit path (${path.length} hashes) is not a path of leaf ${input.proof.leaf_index} in a tree of ${checkpoint.size}` : rootOk ? `${toBase64(root)} (${path.length} hashes)` : `recomputed ${toBase64(root)}, the checkpoint signs ${checkpoint.rootBase64}`,
  });

  return { steps, valid: steps.every((s) => s.status === 'pass') };
}

/**
 * Signed tree heads in the checkpoint format of the transparency-log ecosystem (C2SP `tlog-checkpoint` inside a C2SP
 * `signed-note`, as Go's sumdb, Sigstore's Rekor v2 and the witness network use them), signed with Ed25519 through
 * `node:crypto`:
 *
 *     <origin>\n<tree size, decimal>\n<root hash, base64>\n[<extension line>\n]…
 *     \n
 *     — <key name> <base64(key id (4 bytes) || Ed25519 signature of the text above the blank line)>\n
 *
 * A key's id is the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key); its verifier key, the string a
 * verifier is configured with, is `<name>+<key id, hex>+<base64(0x01 || public key)>`. Several signatures may follow;
 * a verifier checks those whose key it knows and ignores the others. Source: C2SP signed-note and tlog-checkpoint.
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { HASH_BYTES, type Hash } from './merkle.js';

/** The tree head a checkpoint signs. */
export interface Checkpoint {
  /** The log's name, unique to it (e.g. `agp.example.com/audit/acme`): no spaces, no `+`. */
  origin: string;
  /** The number of leaves. */
  size: number;
  /** The root hash of those leaves. */
  root: Hash;
  /** Extension lines, in order (e.g. `time 2026-11-29T10:00:00Z`); none may be empty. */
  extensions?: string[];
}

/** A signing key: its name (no spaces, no `+`) and its Ed25519 private key. */
export interface CheckpointSigner {
  name: string;
  privateKey: KeyObject;
}

/** A checkpoint whose signatures were checked: the tree head and the names of the keys that verified. */
export interface OpenedCheckpoint extends Checkpoint {
  verifiedBy: string[];
}

/** Why a checkpoint was refused. */
export class CheckpointError extends Error {}

const SIG_PREFIX = '\u2014 ';
const ED25519 = 0x01;
const NAME = /^[^\s+]+$/;

/** The raw 32-byte public key of an Ed25519 key (private or public). */
function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = pub.export({ format: 'jwk' }) as { crv?: string; x?: string };
  if (jwk.crv !== 'Ed25519' || !jwk.x) throw new CheckpointError('the key is not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

/** The 4-byte id of key `name` with raw public key `pub`. */
function keyId(name: string, pub: Buffer): Buffer {
  return createHash('sha256').update(name).update('\n').update(Uint8Array.of(ED25519)).update(pub).digest().subarray(0, 4);
}

/** The verifier key string of a signing key: `<name>+<key id hex>+<base64(0x01 || public key)>`. */
export function verifierKey(name: string, key: KeyObject): string {
  if (!NAME.test(name)) throw new CheckpointError(`a key name has no spaces or "+": ${JSON.stringify(name)}`);
  const pub = rawPublicKey(key);
  return `${name}+${keyId(name, pub).toString('hex')}+${Buffer.concat([Uint8Array.of(ED25519), pub]).toString('base64')}`;
}

/** The text a checkpoint signs. @throws CheckpointError for an origin or extension that cannot be written. */
export function checkpointText(c: Checkpoint): string {
  if (!c.origin || /[\n\r]/.test(c.origin)) throw new CheckpointError('the origin is one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new CheckpointError(`the tree size is a whole number: ${c.size}`);
  if (c.root.length !== HASH_BYTES) throw new CheckpointError('the root hash is 32 bytes');
  const ext = c.extensions ?? [];
  if (ext.some((l) => !l || /[\n\r]/.test(l))) throw new CheckpointError('an extension is one non-empty line');
  return `${c.origin}\n${c.size}\n${Buffer.from(c.root).toString('base64')}\n${ext.map((l) => `${l}\n`).join('')}`;
}

/** The signed note of checkpoint `c`, signed by each of `signers`. @throws CheckpointError */
export function signCheckpoint(c: Checkpoint, signers: readonly CheckpointSigner[]): string {
  const text = checkpointText(c);
  const lines = signers.map((s) => {
    if (!NAME.test(s.name)) throw new CheckpointError(`a key name has no spaces or "+": ${JSON.stringify(s.name)}`);
    const sig = sign(null, Buffer.from(text), s.privateKey);
    return `${SIG_PREFIX}${s.name} ${Buffer.concat([keyId(s.name, rawPublicKey(s.privateKey)), sig]).toString('base64')}\n`;
  });
  return `${text}\n${lines.join('')}`;
}

/** A parsed verifier key. */
interface Verifier {
  name: string;
  id: Buffer;
  key: KeyObject;
}

/** Parse a verifier key string. @throws CheckpointError naming what is wrong. */
export function parseVerifierKey(vkey: string): Verifier {
  // The key's base64 may itself hold "+": the name and the id are the first two fields.
  const m = /^([^\s+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(vkey);
  if (!m) throw new CheckpointError(`not a verifier key (name+id+key): ${vkey.slice(0, 80)}`);
  const parts = [m[1], m[2], m[3]];
  const raw = Buffer.from(parts[2], 'base64');
  if (raw.length !== 33 || raw[0] !== ED25519) throw new CheckpointError(`verifier key ${parts[0]}: not an Ed25519 key`);
  const pub = raw.subarray(1);
  const id = keyId(parts[0], pub);
  if (id.toString('hex') !== parts[1]) throw new CheckpointError(`verifier key ${parts[0]}: its id does not match its key`);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
  return { name: parts[0], id, key };
}

/**
 * Open a signed checkpoint: parse it and check its signatures against `verifierKeys`.
 * @throws CheckpointError when the note is malformed, a signature by a known key does not verify, or no known key
 *   signed it ("signed by no known key" names the signers seen).
 */
export function openCheckpoint(note: string, verifierKeys: readonly string[]): OpenedCheckpoint {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new CheckpointError('not a signed note: no blank line before the signatures, or no final newline');
  const text = note.slice(0, split + 1);
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new CheckpointError('a checkpoint has an origin, a tree size and a root hash');
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (!/^(0|[1-9]\d*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new CheckpointError(`the tree size is not a whole number: ${sizeText.slice(0, 40)}`);
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== HASH_BYTES || root.toString('base64') !== rootText) throw new CheckpointError('the root hash is not 32 bytes of base64');
  const verifiers = verifierKeys.map(parseVerifierKey);
  const verifiedBy: string[] = [];
  const seen: string[] = [];
  for (const line of note.slice(split + 2).split('\n').slice(0, -1)) {
    if (!line.startsWith(SIG_PREFIX)) throw new CheckpointError(`a signature line starts with "— ": ${line.slice(0, 60)}`);
    const [name, b64, extra] = line.slice(SIG_PREFIX.length).split(' ');
    const blob = Buffer.from(b64 ?? '', 'base64');
    if (!name || extra !== undefined || blob.length < 5) throw new CheckpointError(`a malformed signature line: ${line.slice(0, 60)}`);
    seen.push(name);
    const v = verifiers.find((k) => k.name === name && k.id.equals(blob.subarray(0, 4)));
    if (!v) continue;
    if (!verify(null, Buffer.from(text), v.key, blob.subarray(4))) throw new CheckpointError(`the signature of ${name} does not verify: the checkpoint was altered or signed by another key`);
    verifiedBy.push(name);
  }
  if (!verifiedBy.length) throw new CheckpointError(`signed by no known key (signed by: ${seen.join(', ') || 'nobody'})`);
  return { origin, size: Number(sizeText), root: new Uint8Array(root), extensions, verifiedBy };
}

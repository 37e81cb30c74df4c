/**
 * The evidence pack (version 1): an organisation's audit records for a period with everything needed to check them
 * offline: the signing keys, the signed checkpoints, the consistency proofs between them, one line per record (its
 * leaf as the platform's store holds it now and the leaf hash the log holds), a range proof tying the records to the
 * latest checkpoint's root, and an end line with the SHA-256 of every byte before it. JSON Lines, UTF-8, one object per
 * line, each with `kind`, in this order: `agp-audit-pack` (header), `key`…, `checkpoint`…, `consistency`…, `record`…,
 * `range_proof`, `end`. {@link verifyPack} checks a pack with no network; {@link PackWriter} writes one.
 * Source: docs/audit.md (Evidence packs).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@agp/contracts';
import { CheckpointError, openCheckpoint, parseVerifierKey } from './checkpoint.js';
import { HASH_BYTES, leafHash, verifyConsistency, type Hash } from './merkle.js';
import { RangeProofError, rootFromRangeProof } from './range.js';

/** The pack format's version (the header's `version`). */
export const PACK_VERSION = 1;

/** Line 1: what the pack covers. The records are the leaves [start, end); `tree_size` is the latest checkpoint's. */
export interface PackHeaderLine {
  kind: 'agp-audit-pack';
  version: 1;
  /** The log's origin (`<AGP_AUDIT_LOG_NAME>/<organization id>`): every checkpoint's first line. */
  origin: string;
  organization_id: string;
  /** The period asked for, ISO 8601 (`at` in [from, to)); null: unbounded. */
  from: string | null;
  to: string | null;
  /** When the pack was written, ISO 8601 UTC. */
  exported_at: string;
  start: number;
  end: number;
  tree_size: number;
}

/** A key of `/.well-known/agp-audit-keys`. */
export interface PackKeyLine {
  kind: 'key';
  key_id: string;
  name: string;
  algorithm: string;
  /** The signed-note verifier key `<name>+<key id>+<base64(0x01 || public key)>`. */
  verifier_key: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}

/** A signed checkpoint, the note as served. */
export interface PackCheckpointLine {
  kind: 'checkpoint';
  tree_size: number;
  note: string;
}

/** The RFC 9162 consistency proof between two consecutive checkpoints of the pack (hashes base64). */
export interface PackConsistencyLine {
  kind: 'consistency';
  from: number;
  to: number;
  proof: string[];
}

/** A committed field's opening: its salt (base64) and value. Its commitment is {@link commitmentOf}(salt, value). */
export interface PackDisclosure {
  salt: string;
  value: unknown;
}

/** One record: leaf `leaf_index` of the log. */
export interface PackRecordLine {
  kind: 'record';
  leaf_index: number;
  record_id: string;
  /** The event's global position in the event store (decimal), or null when it is not there. */
  position: string | null;
  /** The record as the store holds it now, serialised as the log serialises it; null when `missing`. */
  leaf: string | null;
  /** The leaf hash the log holds, base64. */
  leaf_hash: string;
  /** Openings of the leaf's committed fields, by RFC 6901 JSON Pointer into the leaf record. */
  disclosures?: Record<string, PackDisclosure>;
  /** Pointers of committed fields whose content and salt were erased. */
  redacted?: string[];
  /** True when the record is no longer in the platform's store (and was not erased). */
  missing?: true;
}

/** The range proof of the records [start, end) in the tree of `tree_size` leaves (hashes base64; range.ts). */
export interface PackRangeProofLine {
  kind: 'range_proof';
  tree_size: number;
  start: number;
  end: number;
  proof: string[];
}

/** The last line: the number of records and the hex SHA-256 of every byte before this line. */
export interface PackEndLine {
  kind: 'end';
  records: number;
  sha256: string;
}

/** Any line of a pack. */
export type PackLine = PackHeaderLine | PackKeyLine | PackCheckpointLine | PackConsistencyLine | PackRecordLine | PackRangeProofLine | PackEndLine;

/**
 * The commitment to a field's value: base64 SHA-256(salt || UTF-8 RFC 8785 canonical JSON of the value), written in a
 * version-2 leaf as `{"$commitment": <this>}`. Source: docs/audit.md (Salted commitments).
 */
export function commitmentOf(salt: Uint8Array, value: unknown): string {
  return createHash('sha256').update(salt).update(canonicalJson(value), 'utf8').digest('base64');
}

/** Writes a pack line by line, hashing what it writes, and its end line. */
export class PackWriter {
  private readonly hash = createHash('sha256');
  private records = 0;

  /** The text of `line` (JSON and a newline), counted in the pack's SHA-256. */
  line(line: Exclude<PackLine, PackEndLine>): string {
    const text = `${JSON.stringify(line)}\n`;
    this.hash.update(text, 'utf8');
    if (line.kind === 'record') this.records += 1;
    return text;
  }

  /** The end line's text; call once, last. */
  end(): string {
    return `${JSON.stringify({ kind: 'end', records: this.records, sha256: this.hash.digest('hex') } satisfies PackEndLine)}\n`;
  }
}

/** What a good pack holds: its header's fields (the leaves [start, end) and the latest checkpoint's size), and counts. */
export interface PackSummary extends Omit<PackHeaderLine, 'kind' | 'version'> {
  records: number;
  /** Committed fields opened (disclosures) and erased (redacted), over all records; records with an erased field. */
  disclosed_fields: number;
  redacted_fields: number;
  redacted_records: number;
  checkpoints: number;
  /** The ids of the keys whose signatures verified (8 hex digits). */
  key_ids: string[];
  /** The verifier keys the checkpoints were checked with (the pack's, or those given instead). */
  trusted_keys: string[];
  /** The latest checkpoint's signed note. */
  latest_checkpoint: string;
}

/** The first thing wrong with a pack. `message` is one line naming it: `record <id> (leaf <i>): …`, `checkpoint <n>: …` or `line <n>: …`. */
export interface PackFailure {
  line?: number;
  record_id?: string;
  leaf_index?: number;
  checkpoint?: number;
  reason: string;
  message: string;
}

/** The outcome of {@link verifyPack}. */
export type PackVerification = { ok: true; summary: PackSummary } | { ok: false; failure: PackFailure };

/** Options of {@link verifyPack}. */
export interface PackVerifyOptions {
  /** Verifier keys the auditor trusts, used instead of the pack's own `key` lines. */
  keys?: readonly string[];
}

class PackRefused extends Error {
  constructor(readonly failure: PackFailure) {
    super(failure.message);
  }
}

const lineFailure = (line: number, reason: string) => new PackRefused({ line, reason, message: `line ${line}: ${reason}` });
const recordFailure = (r: { record_id: string; leaf_index: number }, reason: string): PackFailure => ({
  record_id: r.record_id,
  leaf_index: r.leaf_index,
  reason,
  message: `record ${r.record_id} (leaf ${r.leaf_index}): ${reason}`,
});
const checkpointFailure = (size: number, reason: string): PackFailure => ({ checkpoint: size, reason, message: `checkpoint ${size}: ${reason}` });

const ORDER = ['agp-audit-pack', 'key', 'checkpoint', 'consistency', 'record', 'range_proof', 'end'] as const;
const REPEATED = new Set(['key', 'checkpoint', 'consistency', 'record']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** A base64 SHA-256 hash, or null when `s` is not one. */
function hashOf(s: unknown): Hash | null {
  if (typeof s !== 'string') return null;
  const b = Buffer.from(s, 'base64');
  return b.length === HASH_BYTES && b.toString('base64') === s ? new Uint8Array(b) : null;
}

/** The value at RFC 6901 pointer `pointer` in `doc`, or undefined. */
function atPointer(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  if (!pointer.startsWith('/')) return undefined;
  let v: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v) && /^(0|[1-9]\d*)$/.test(token)) v = v[Number(token)];
    else if (isObject(v) && Object.hasOwn(v, token)) v = v[token];
    else return undefined;
  }
  return v;
}

/** The commitment held at a pointer (`{"$commitment": base64}`), or null. */
function commitmentAt(doc: unknown, pointer: string): string | null {
  const v = atPointer(doc, pointer);
  return isObject(v) && Object.keys(v).length === 1 && typeof v.$commitment === 'string' ? v.$commitment : null;
}

/** The key ids (hex) of a note's signature lines. */
function signatureKeyIds(note: string): string[] {
  return note
    .slice(note.lastIndexOf('\n\n') + 2)
    .split('\n')
    .filter(Boolean)
    .map((l) => Buffer.from(l.split(' ')[2] ?? '', 'base64').subarray(0, 4).toString('hex'));
}

async function* linesOf(input: string | Iterable<string> | AsyncIterable<string>): AsyncIterable<string> {
  if (typeof input === 'string') {
    const lines = input.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    yield* lines;
  } else yield* input;
}

/**
 * Verify an evidence pack with no network. Checks, in order: the line structure, the header, the end line (count and
 * SHA-256: a truncated or altered pack fails naming the line); each checkpoint's signature (by a pack key, or by
 * `options.keys` instead), its origin and size; the consistency proof between each two consecutive checkpoints; each
 * record (still in the store; its leaf hashes to the logged leaf hash; its disclosures open their commitments; its
 * redacted fields are commitments; store positions increase with leaf index); and the range proof of the records'
 * logged hashes against the latest checkpoint's root. The first failure is returned, never thrown.
 * @param input the pack's text, or its lines without their newlines (e.g. from `readline`).
 */
export async function verifyPack(input: string | Iterable<string> | AsyncIterable<string>, options: PackVerifyOptions = {}): Promise<PackVerification> {
  try {
    return { ok: true, summary: await check(input, options) };
  } catch (err) {
    if (err instanceof PackRefused) return { ok: false, failure: err.failure };
    throw err;
  }
}

async function check(input: string | Iterable<string> | AsyncIterable<string>, options: PackVerifyOptions): Promise<PackSummary> {
  const sha = createHash('sha256');
  let n = 0;
  let phase = -1;
  let header: PackHeaderLine | undefined;
  let endLine: PackEndLine | undefined;
  let endAt = 0;
  const keys: string[] = [];
  const checkpoints: Array<{ size: number; note: string }> = [];
  const consistency: PackConsistencyLine[] = [];
  let rangeProof: PackRangeProofLine | undefined;
  const leafHashes: Hash[] = [];
  let recordFail: PackFailure | undefined;
  let lastPosition: bigint | null = null;
  let disclosed = 0;
  let redacted = 0;
  let redactedRecords = 0;

  for await (const text of linesOf(input)) {
    n += 1;
    if (endLine) throw lineFailure(n, 'a line after the end line');
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      throw lineFailure(n, 'not a JSON object: the pack is truncated or malformed');
    }
    if (!isObject(line) || typeof line.kind !== 'string') throw lineFailure(n, 'not a JSON object with a "kind"');
    const p = ORDER.indexOf(line.kind as (typeof ORDER)[number]);
    if (p < 0) throw lineFailure(n, `unknown kind ${JSON.stringify(line.kind).slice(0, 40)}`);
    if (n === 1 && p !== 0) throw lineFailure(1, 'the first line is not the pack header (kind "agp-audit-pack")');
    if (p < phase || (p === phase && !REPEATED.has(line.kind))) throw lineFailure(n, `a "${line.kind}" line out of order`);
    phase = p;
    if (line.kind !== 'end') sha.update(text, 'utf8').update('\n');
    switch (line.kind) {
      case 'agp-audit-pack': {
        const h = line;
        if (h.version !== PACK_VERSION) throw lineFailure(n, `pack version ${JSON.stringify(h.version)} is not ${PACK_VERSION}`);
        if (typeof h.origin !== 'string' || typeof h.organization_id !== 'string') throw lineFailure(n, 'the header has no origin or organization_id');
        if (!isCount(h.start) || !isCount(h.end) || !isCount(h.tree_size) || h.start > h.end || h.end > h.tree_size)
          throw lineFailure(n, 'the header’s start, end and tree_size are not whole numbers with start ≤ end ≤ tree_size');
        header = h as unknown as PackHeaderLine;
        break;
      }
      case 'key':
        if (typeof line.verifier_key !== 'string') throw lineFailure(n, 'a key line has no verifier_key');
        try {
          parseVerifierKey(line.verifier_key);
        } catch (err) {
          throw lineFailure(n, (err as Error).message);
        }
        keys.push(line.verifier_key);
        break;
      case 'checkpoint':
        if (!isCount(line.tree_size) || typeof line.note !== 'string') throw lineFailure(n, 'a checkpoint line has no tree_size or note');
        if (checkpoints.length && line.tree_size <= checkpoints[checkpoints.length - 1].size) throw lineFailure(n, 'the checkpoints are not in increasing tree size');
        checkpoints.push({ size: line.tree_size, note: line.note });
        break;
      case 'consistency':
        if (!isCount(line.from) || !isCount(line.to) || !Array.isArray(line.proof)) throw lineFailure(n, 'a consistency line has no from, to or proof');
        consistency.push(line as unknown as PackConsistencyLine);
        break;
      case 'record': {
        const r = line as unknown as PackRecordLine;
        const expected = header!.start + leafHashes.length;
        if (r.leaf_index !== expected || typeof r.record_id !== 'string') throw lineFailure(n, `a record line that is not leaf ${expected}`);
        const logged = hashOf(r.leaf_hash);
        if (!logged) throw lineFailure(n, 'a record’s leaf_hash is not a base64 SHA-256 hash');
        if (r.position !== null && !(typeof r.position === 'string' && /^\d+$/.test(r.position))) throw lineFailure(n, 'a record’s position is not a decimal string or null');
        if (r.leaf !== null && typeof r.leaf !== 'string') throw lineFailure(n, 'a record’s leaf is not a string or null');
        leafHashes.push(logged);
        const fail = recordFail ? undefined : checkRecord(r, logged, header!);
        if (fail) recordFail = fail;
        if (!recordFail && r.position !== null) {
          const pos = BigInt(r.position);
          if (lastPosition !== null && pos <= lastPosition) recordFail = recordFailure(r, 'the store’s order differs from the log’s (its position is not after the previous record’s)');
          lastPosition = pos;
        }
        disclosed += Object.keys(r.disclosures ?? {}).length;
        redacted += r.redacted?.length ?? 0;
        if (r.redacted?.length) redactedRecords += 1;
        break;
      }
      case 'range_proof':
        if (!isCount(line.tree_size) || !isCount(line.start) || !isCount(line.end) || !Array.isArray(line.proof)) throw lineFailure(n, 'a range_proof line has no tree_size, start, end or proof');
        rangeProof = line as unknown as PackRangeProofLine;
        break;
      case 'end':
        if (!isCount(line.records) || typeof line.sha256 !== 'string') throw lineFailure(n, 'the end line has no records or sha256');
        endLine = line as unknown as PackEndLine;
        endAt = n;
        break;
    }
  }
  if (!header) throw lineFailure(1, 'empty: no pack header');
  if (!endLine) throw lineFailure(n + 1, 'truncated: the pack has no end line');
  if (endLine.sha256 !== sha.digest('hex')) throw lineFailure(endAt, 'the SHA-256 of the lines before the end line differs from the end line’s: the pack was altered or truncated');
  if (endLine.records !== leafHashes.length) throw lineFailure(endAt, `the end line counts ${endLine.records} records, the pack holds ${leafHashes.length}`);
  if (leafHashes.length !== header.end - header.start) throw lineFailure(endAt, `the pack holds ${leafHashes.length} records, its header says ${header.end - header.start}`);
  if (!checkpoints.length) throw lineFailure(endAt, 'the pack has no checkpoint');
  if (!rangeProof) throw lineFailure(endAt, 'the pack has no range proof');

  // Checkpoints: signature, origin, size.
  const trusted = options.keys ?? keys;
  const roots: Hash[] = [];
  const keyIds = new Set<string>();
  const trustedIds = new Set<string>();
  for (const k of trusted) {
    try {
      trustedIds.add(parseVerifierKey(k).id.toString('hex'));
    } catch (err) {
      throw new PackRefused({ reason: (err as Error).message, message: `a trusted key: ${(err as Error).message}` });
    }
  }
  for (const c of checkpoints) {
    let opened;
    try {
      opened = openCheckpoint(c.note, trusted);
    } catch (err) {
      if (err instanceof CheckpointError) throw new PackRefused(checkpointFailure(c.size, err.message));
      throw err;
    }
    if (opened.origin !== header.origin) throw new PackRefused(checkpointFailure(c.size, `its origin ${opened.origin} is not the pack’s ${header.origin}`));
    if (opened.size !== c.size) throw new PackRefused(checkpointFailure(c.size, `its note is of tree size ${opened.size}`));
    for (const id of signatureKeyIds(c.note)) if (trustedIds.has(id)) keyIds.add(id);
    roots.push(opened.root);
  }
  const latest = checkpoints[checkpoints.length - 1];
  if (latest.size !== header.tree_size) throw new PackRefused(checkpointFailure(latest.size, `the latest checkpoint is not of the header’s tree size ${header.tree_size}`));

  // Consistency between consecutive checkpoints.
  if (consistency.length !== checkpoints.length - 1) throw new PackRefused(checkpointFailure(latest.size, `${consistency.length} consistency proofs for ${checkpoints.length} checkpoints (one between each two)`));
  for (let i = 1; i < checkpoints.length; i++) {
    const c = consistency[i - 1];
    const [from, to] = [checkpoints[i - 1].size, checkpoints[i].size];
    if (c.from !== from || c.to !== to) throw new PackRefused(checkpointFailure(to, `the consistency proof is from ${c.from} to ${c.to}, not from ${from} to ${to}`));
    const proof = c.proof.map(hashOf);
    if (proof.some((h) => !h) || !verifyConsistency(from, to, proof as Hash[], roots[i - 1], roots[i]))
      throw new PackRefused(checkpointFailure(to, `not consistent with checkpoint ${from}: the log was rewritten between them`));
  }

  if (recordFail) throw new PackRefused(recordFail);

  // The records' logged hashes produce the latest signed root.
  if (rangeProof.tree_size !== header.tree_size || rangeProof.start !== header.start || rangeProof.end !== header.end)
    throw new PackRefused(checkpointFailure(latest.size, `the range proof is for leaves [${rangeProof.start}, ${rangeProof.end}) of a tree of ${rangeProof.tree_size}, not the pack’s [${header.start}, ${header.end}) of ${header.tree_size}`));
  const proof = rangeProof.proof.map(hashOf);
  if (proof.some((h) => !h)) throw new PackRefused(checkpointFailure(latest.size, 'a range proof hash is not a base64 SHA-256 hash'));
  let root: Hash;
  try {
    root = rootFromRangeProof(header.tree_size, header.start, header.end, leafHashes, proof as Hash[]);
  } catch (err) {
    if (err instanceof RangeProofError) throw new PackRefused(checkpointFailure(latest.size, err.message));
    throw err;
  }
  if (!Buffer.from(root).equals(Buffer.from(roots[roots.length - 1])))
    throw new PackRefused(checkpointFailure(latest.size, 'the log’s leaves do not produce the signed root: the log was rewritten'));

  return {
    origin: header.origin,
    organization_id: header.organization_id,
    from: header.from,
    to: header.to,
    exported_at: header.exported_at,
    start: header.start,
    end: header.end,
    tree_size: header.tree_size,
    records: leafHashes.length,
    disclosed_fields: disclosed,
    redacted_fields: redacted,
    redacted_records: redactedRecords,
    checkpoints: checkpoints.length,
    key_ids: [...keyIds],
    trusted_keys: [...trusted],
    latest_checkpoint: latest.note,
  };
}

/** The first thing wrong with one record, or undefined. */
function checkRecord(r: PackRecordLine, logged: Hash, header: PackHeaderLine): PackFailure | undefined {
  if (r.missing) return recordFailure(r, 'no longer in the platform’s store');
  if (r.leaf === null) return recordFailure(r, 'it has no leaf and is not marked missing');
  if (!Buffer.from(leafHash(Buffer.from(r.leaf, 'utf8'))).equals(Buffer.from(logged))) return recordFailure(r, 'changed since it was logged (its leaf does not hash to the logged leaf hash)');
  const disclosures = r.disclosures ?? {};
  const erased = r.redacted ?? [];
  // A leaf is RFC 8785 JSON: its top-level `id` and `organization_id` are adjacent (keys sorted), so a version-1 leaf
  // needs no second parse; one with committed fields is parsed to open them.
  let record: unknown;
  if (!r.leaf.includes(`,"id":${JSON.stringify(r.record_id)},"organization_id":${JSON.stringify(header.organization_id)},`)) {
    try {
      record = JSON.parse(r.leaf);
    } catch {
      return recordFailure(r, 'its leaf is not JSON');
    }
    if (!isObject(record) || record.id !== r.record_id) return recordFailure(r, 'its leaf is of another record');
    if (record.organization_id !== header.organization_id) return recordFailure(r, `its leaf is of organisation ${String(record.organization_id)}, not ${header.organization_id}`);
  }
  if (!Object.keys(disclosures).length && !erased.length) return undefined;
  record ??= JSON.parse(r.leaf);
  if (!isObject(disclosures) || !Array.isArray(erased)) return recordFailure(r, 'its disclosures or redacted fields are malformed');
  for (const [pointer, d] of Object.entries(disclosures)) {
    const c = commitmentAt(record, pointer);
    if (c === null) return recordFailure(r, `its disclosed field ${pointer} is not a commitment in its leaf`);
    if (!isObject(d) || typeof d.salt !== 'string' || !('value' in d)) return recordFailure(r, `its disclosure of ${pointer} has no salt or value`);
    if (commitmentOf(Buffer.from(d.salt, 'base64'), d.value) !== c) return recordFailure(r, `its disclosed field ${pointer} does not match its commitment`);
  }
  for (const pointer of erased) {
    if (typeof pointer !== 'string' || commitmentAt(record, pointer) === null) return recordFailure(r, `its redacted field ${String(pointer)} is not a commitment in its leaf`);
    if (Object.hasOwn(disclosures, pointer)) return recordFailure(r, `its field ${pointer} is both disclosed and redacted`);
  }
  return undefined;
}

/**
 * The audit trail's reads and checkpoints: tree heads and proofs computed from the stored subtree hashes (O(log n)
 * nodes read per answer, `@agp/tlog` stored.ts), signed checkpoints (C2SP signed notes, Ed25519) made at an interval
 * for every organisation whose log grew, and on request. Every read is of one organisation's tree: another
 * organisation's record is not found. Source: docs/audit.md.
 */
import type {
  AuditCheckpoint,
  AuditCheckpointPage,
  AuditConsistencyProof,
  AuditConsistencyQuery,
  AuditInclusionProof,
  AuditInclusionQuery,
  AuditRangeProof,
  AuditRangeQuery,
  AuditRecord,
  AuditRecordPage,
  AuditRecordsQuery,
  ListAuditCheckpointsQuery,
} from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { NotFoundError, ServiceUnavailableError, ValidationError, type Logger } from '@agp/runtime';
import { consistencyProofFromNodes, inclusionProofFromNodes, nodesNeeded, rangeProofFromNodes, signCheckpoint, treeHeadFromNodes, type Hash, type NodeReader } from '@agp/tlog';
import type { AuditSigner } from './keys.js';
import { leafFromStore, saltsOf } from './leaves.js';

const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
const iso = (v: unknown) => new Date(v as string).toISOString();

/** What the trail needs. */
export interface AuditTrailDeps {
  db: SqlExecutor;
  /** The signing key; null: no checkpoint is signed (a request for one answers 503). */
  signer: AuditSigner | null;
  /** The prefix of each log's origin (`<name>/<organization id>`). */
  logName: string;
  /** How often to sign checkpoints of the logs that grew, in ms; 0: only on request. */
  intervalMs: number;
  now: () => Date;
  logger: Logger;
  /** The stored events of these ids (the event store's `readEvents`): the records the leaves commit to, as they are now. */
  readEvents: (eventIds: readonly string[]) => Promise<StoredEvent[]>;
}

interface CheckpointRow {
  tree_size: string;
  root_hash: string;
  at: unknown;
  key_id: string;
  key_name: string;
  origin: string;
  note: string;
}

const CHECKPOINT_COLUMNS = 'tree_size::text AS tree_size, root_hash, at, key_id, key_name, origin, note';
const checkpointOf = (r: CheckpointRow): AuditCheckpoint => ({ origin: r.origin, tree_size: Number(r.tree_size), root_hash: r.root_hash, at: iso(r.at), key_id: r.key_id, key_name: r.key_name, note: r.note });

/** The organisations' verifiable logs: proofs, checkpoints and the checkpoint timer. */
export class AuditTrail {
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;

  constructor(private readonly deps: AuditTrailDeps) {}

  /** Start signing checkpoints every `intervalMs` (none when 0). */
  start(): void {
    if (this.deps.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.ticking ??= this.checkpointAll()
        .catch((err) => this.deps.logger.warn({ err }, 'signing the audit trail’s checkpoints failed; tried again at the next interval'))
        .finally(() => (this.ticking = undefined));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  /** Stop the timer and wait for a round that is signing. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
  }

  /** Sign a checkpoint of every organisation whose log grew since its latest one. */
  async checkpointAll(): Promise<void> {
    if (!this.deps.signer) return;
    const { rows } = await this.deps.db.query<{ organization_id: string }>(
      `SELECT t.organization_id FROM agp_tlog_trees t
        WHERE t.size > COALESCE((SELECT max(c.tree_size) FROM agp_tlog_checkpoints c WHERE c.organization_id = t.organization_id), 0)`,
    );
    for (const r of rows) await this.checkpoint(r.organization_id);
  }

  /** The organisation's tree size now. */
  async size(org: string): Promise<number> {
    const { rows } = await this.deps.db.query<{ size: string }>(`SELECT size::text AS size FROM agp_tlog_trees WHERE organization_id = $1`, [org]);
    return rows.length ? Number(rows[0].size) : 0;
  }

  /** Run `compute` over the organisation's stored nodes: the nodes it needs are read with one query first. */
  private async withNodes<T>(org: string, compute: (node: NodeReader) => T): Promise<T> {
    const needed = nodesNeeded(compute);
    const map = new Map<string, Hash>();
    if (needed.length) {
      const { rows } = await this.deps.db.query<{ level: number; node_index: string; hash: string }>(
        `SELECT n.level, n.node_index::text AS node_index, n.hash FROM agp_tlog_nodes n
         JOIN jsonb_to_recordset($2::jsonb) AS k(l int, i bigint) ON n.level = k.l AND n.node_index = k.i WHERE n.organization_id = $1`,
        [org, JSON.stringify(needed.map((n) => ({ l: n.level, i: n.index })))],
      );
      for (const r of rows) map.set(`${r.level}/${r.node_index}`, new Uint8Array(Buffer.from(r.hash, 'hex')));
    }
    return compute((level, index) => {
      const h = map.get(`${level}/${index}`);
      if (!h) throw new Error(`the audit trail of ${org} lacks its stored node ${level}/${index}`);
      return h;
    });
  }

  /**
   * Sign a checkpoint of the organisation's log now; the latest when the log has not grown since (or is empty and has
   * one). Two processes signing the same size keep the first one stored.
   * @throws ServiceUnavailableError (503) when there is no signing key.
   */
  async checkpoint(org: string): Promise<AuditCheckpoint> {
    const signer = this.deps.signer;
    if (!signer) throw new ServiceUnavailableError('the audit trail has no signing key: set AGP_AUDIT_SIGNING_KEY, or AGP_SECRETS_KEY to keep a generated one');
    const size = await this.size(org);
    const latest = await this.latest(org);
    if (latest && latest.tree_size >= size) return latest;
    const root = await this.withNodes(org, (node) => treeHeadFromNodes(size, node));
    const at = this.deps.now();
    const stamp = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const origin = `${this.deps.logName}/${org}`;
    const note = signCheckpoint({ origin, size, root, extensions: [`time ${stamp}`] }, [{ name: signer.name, privateKey: signer.privateKey }]);
    await this.deps.db.query(
      `INSERT INTO agp_tlog_checkpoints (organization_id, tree_size, root_hash, at, key_id, key_name, origin, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (organization_id, tree_size) DO NOTHING`,
      [org, size, b64(root), stamp, signer.keyId, signer.name, origin, note],
    );
    const { rows } = await this.deps.db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM agp_tlog_checkpoints WHERE organization_id = $1 AND tree_size = $2`, [org, size]);
    return checkpointOf(rows[0]);
  }

  /** The organisation's newest checkpoint, or null. */
  private async latest(org: string): Promise<AuditCheckpoint | null> {
    const { rows } = await this.deps.db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM agp_tlog_checkpoints WHERE organization_id = $1 ORDER BY tree_size DESC LIMIT 1`, [org]);
    return rows.length ? checkpointOf(rows[0]) : null;
  }

  /** One page of the organisation's checkpoints, newest first, with the latest and the current size. */
  async list(org: string, q: ListAuditCheckpointsQuery): Promise<AuditCheckpointPage> {
    const [{ rows }, { rows: count }, size] = await Promise.all([
      this.deps.db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM agp_tlog_checkpoints WHERE organization_id = $1 ORDER BY tree_size DESC LIMIT $2 OFFSET $3`, [org, q.limit, q.skip]),
      this.deps.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM agp_tlog_checkpoints WHERE organization_id = $1`, [org]),
      this.size(org),
    ]);
    const latest = q.skip === 0 ? (rows[0] ? checkpointOf(rows[0]) : null) : await this.latest(org);
    return { checkpoints: rows.map(checkpointOf), latest, tree_size: size, total: Number(count[0].n), skip: q.skip, limit: q.limit };
  }

  /**
   * The inclusion proof of record `q.record` in the organisation's tree of `q.tree_size` leaves (default: now).
   * @throws NotFoundError (404) for a record not in this organisation's log; ValidationError (422, `query.tree_size`)
   *   for a size that does not hold the record or exceeds the log.
   */
  async inclusion(org: string, q: AuditInclusionQuery): Promise<AuditInclusionProof> {
    const { rows } = await this.deps.db.query<{ leaf_index: string; leaf_hash: string; leaf: string }>(
      `SELECT leaf_index::text AS leaf_index, leaf_hash, leaf FROM agp_tlog_leaves WHERE organization_id = $1 AND record_id = $2`,
      [org, q.record],
    );
    if (!rows.length) throw new NotFoundError(`record ${q.record} is not in the organisation’s audit trail`);
    const index = Number(rows[0].leaf_index);
    const current = await this.size(org);
    const size = q.tree_size ?? current;
    if (size > current) throw new ValidationError('tree_size is larger than the log', [{ path: 'query.tree_size', message: `the log holds ${current} leaves` }]);
    if (size <= index) throw new ValidationError('the tree does not hold the record', [{ path: 'query.tree_size', message: `the record is leaf ${index}: a tree that holds it has at least ${index + 1} leaves` }]);
    const { proof, root } = await this.withNodes(org, (node) => ({ proof: inclusionProofFromNodes(size, index, node), root: treeHeadFromNodes(size, node) }));
    return { record: q.record, leaf_index: index, tree_size: size, leaf: rows[0].leaf, leaf_hash: Buffer.from(rows[0].leaf_hash, 'hex').toString('base64'), proof: proof.map(b64), root_hash: b64(root) };
  }

  /**
   * The consistency proof between the organisation's trees of `q.from` and `q.to` leaves.
   * @throws ValidationError (422, `query.to` / `query.from`) for a size larger than the log.
   */
  async consistency(org: string, q: AuditConsistencyQuery): Promise<AuditConsistencyProof> {
    const current = await this.size(org);
    const bad = (['from', 'to'] as const).filter((k) => q[k] > current).map((k) => ({ path: `query.${k}`, message: `the log holds ${current} leaves` }));
    if (bad.length) throw new ValidationError('a tree size is larger than the log', bad);
    const { proof, from, to } = await this.withNodes(org, (node) => ({
      proof: consistencyProofFromNodes(q.from, q.to, node),
      from: treeHeadFromNodes(q.from, node),
      to: treeHeadFromNodes(q.to, node),
    }));
    return { from: q.from, to: q.to, proof: proof.map(b64), from_root: b64(from), to_root: b64(to) };
  }

  /**
   * The range proof of leaves [q.start, q.end) in the organisation's tree of `q.tree_size` leaves (default: now),
   * from stored nodes (`@agp/tlog` range.ts).
   * @throws ValidationError (422, `query.tree_size` / `query.end`) for a tree larger than the log, an empty tree, or a
   *   range beyond the tree.
   */
  async range(org: string, q: AuditRangeQuery): Promise<AuditRangeProof> {
    const current = await this.size(org);
    const size = q.tree_size ?? current;
    if (size > current) throw new ValidationError('tree_size is larger than the log', [{ path: 'query.tree_size', message: `the log holds ${current} leaves` }]);
    if (size === 0) throw new ValidationError('the log is empty', [{ path: 'query.tree_size', message: 'a range proof is of a tree of at least one leaf' }]);
    if (q.end > size) throw new ValidationError('the range is beyond the tree', [{ path: 'query.end', message: `the tree holds ${size} leaves` }]);
    const { proof, root } = await this.withNodes(org, (node) => ({ proof: rangeProofFromNodes(size, q.start, q.end, node), root: treeHeadFromNodes(size, node) }));
    return { tree_size: size, start: q.start, end: q.end, proof: proof.map(b64), root_hash: b64(root) };
  }

  /**
   * One page of the organisation's records in leaf order: the leaves [start, end) (given, or the first leaves stored
   * at or after `from` and `to`), each with its leaf hash as logged and the record as the event store holds it now,
   * serialised as the projection serialises a leaf (`leafFromStore`: a version 2 leaf's committed fields recomputed
   * from their stored salts and disclosed, the erased ones redacted), so that a record changed in the store since it
   * was logged shows; `missing` when the store no longer holds it.
   * @throws ValidationError (422, `query.start` / `query.end` / `query.cursor`) for a range beyond the log or a cursor
   *   outside the range.
   */
  async records(org: string, q: AuditRecordsQuery): Promise<AuditRecordPage> {
    const size = await this.size(org);
    const start = q.start ?? (q.from ? await this.firstStoredFrom(org, size, q.from) : 0);
    const end = Math.max(start, q.end ?? (q.to ? await this.firstStoredFrom(org, size, q.to) : size));
    const bad = [
      ...(start > size ? [{ path: 'query.start', message: `the log holds ${size} leaves` }] : []),
      ...(q.end !== undefined && q.end > size ? [{ path: 'query.end', message: `the log holds ${size} leaves` }] : []),
    ];
    if (bad.length) throw new ValidationError('the range is beyond the log', bad);
    const from = q.cursor === undefined ? start : Number(q.cursor);
    if (from < start || from > end) throw new ValidationError('a cursor of another range', [{ path: 'query.cursor', message: 'expected the next_cursor of the page before, with the same range' }]);
    const upto = Math.min(end, from + q.limit);
    const { rows } = await this.deps.db.query<{ leaf_index: string; record_id: string; leaf_hash: string; leaf: string }>(
      `SELECT leaf_index::text AS leaf_index, record_id, leaf_hash, leaf FROM agp_tlog_leaves WHERE organization_id = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index`,
      [org, from, upto],
    );
    const ids = rows.map((r) => r.record_id);
    const events = new Map((await this.deps.readEvents(ids)).filter((e) => e.metadata.organization_id === org).map((e) => [e.event_id, e]));
    const salts = await saltsOf(this.deps.db, org, ids);
    const records = rows.map((r): AuditRecord => {
      const e = events.get(r.record_id);
      const at = (JSON.parse(r.leaf) as { at?: string }).at ?? null;
      const base = { leaf_index: Number(r.leaf_index), record_id: r.record_id, at, leaf_hash: Buffer.from(r.leaf_hash, 'hex').toString('base64') };
      if (!e) return { ...base, position: null, leaf: null, missing: true };
      const built = leafFromStore(e, salts.get(r.record_id) ?? new Map(), r.leaf);
      return {
        ...base,
        position: String(e.global_position),
        leaf: built.text,
        ...(Object.keys(built.disclosures).length ? { disclosures: built.disclosures } : {}),
        ...(built.redacted.length ? { redacted: built.redacted } : {}),
      };
    });
    return { organization_id: org, origin: `${this.deps.logName}/${org}`, start, end, tree_size: size, records, next_cursor: upto < end ? String(upto) : null };
  }

  /** The first leaf index whose logged `at` is at or after `iso` (`size` when none): a binary search, the leaves being in stored order. */
  private async firstStoredFrom(org: string, size: number, iso: string): Promise<number> {
    const target = new Date(iso).toISOString();
    let [lo, hi] = [0, size];
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const { rows } = await this.deps.db.query<{ at: string }>(`SELECT leaf::json->>'at' AS at FROM agp_tlog_leaves WHERE organization_id = $1 AND leaf_index = $2`, [org, mid]);
      if ((rows[0]?.at ?? '') < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * `agp audit export`, `agp audit verify`, `agp audit erase` and `agp audit retention`: the audit trail's evidence
 * pack, and the erasure of personal data (docs/audit.md, Evidence packs, Retention, Erasure).
 *
 * - `export --from DATE --to DATE --out PACK` asks the platform (read key; a write key also signs a checkpoint when the
 *   log grew since the latest, so the pack covers every record of the period) for its keys, checkpoints, consistency
 *   proofs, the records of the period and their range proof, and writes the pack (JSON Lines, `@agp/tlog` pack.ts).
 * - `verify PACK [--keys FILE]` checks a pack offline; `--live` then checks the platform has kept it: its latest
 *   checkpoint is consistent with the pack's and its records are the pack's; `--live --checkpoint FILE` checks a kept
 *   checkpoint instead of a pack; `--save FILE` keeps the platform's latest verified checkpoint.
 * - `erase --agent ID | --run ID | --intervention ID --reason TEXT` erases the committed fields of that agent's, run's
 *   or intervention's records (`POST /api/v1/audit/erasures`, admin key) and prints what was erased.
 * - `retention [--set DAYS | --keep-all]` prints the organisation's retention (`GET /api/v1/audit/retention`, admin
 *   key), or sets it (`PUT`).
 *
 * Exit codes: 0 verified / exported / done; 1 a pack, checkpoint or record that fails (one line naming it), a refusal
 * (the problem's status, title, detail and each bad field) or a usage error; 2 the platform unreachable.
 */
import { createReadStream } from 'node:fs';
import { open, readFile, rename, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import type { AuditCheckpoint, AuditCheckpointPage, AuditConsistencyProof, AuditErasure, AuditKeys, AuditRangeProof, AuditRecordPage, AuditRetention } from '@agp/contracts';
import { AgpNetworkError } from '@agp/sdk/http';
import { CheckpointError, openCheckpoint, parseVerifierKey, PackWriter, verifyConsistency, verifyPack, type Hash, type OpenedCheckpoint, type PackRecordLine, type PackSummary } from '@agp/tlog';
import { problemError } from './evals/api.js';
import { CliError, positiveInt, problemLine, type CliIo } from './program.js';

interface Connection {
  url?: string;
  key?: string;
}

/** A GET/POST/PUT to the platform as JSON (`body`: sent as JSON). @throws CliError (1: refused, with the problem; 2: unreachable). */
function client(o: Connection, io: CliIo, fetchImpl: typeof fetch = globalThis.fetch) {
  const base = (o.url ?? io.env.AGP_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const key = o.key ?? io.env.AGP_KEY;
  return async <T>(method: 'GET' | 'POST' | 'PUT', path: string, { auth = true, body }: { auth?: boolean; body?: unknown } = {}): Promise<T> => {
    if (auth && !key) throw new CliError('missing API key: pass --key or set AGP_KEY', 1);
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...(auth ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    let res: Response;
    try {
      res = await fetchImpl(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
    } catch (err) {
      throw new CliError(`gateway unreachable: ${new AgpNetworkError(base + path, { cause: err }).message}`, 2, { cause: err });
    }
    if (!res.ok) throw new CliError(problemLine(await problemError(res)), 1);
    return (await res.json()) as T;
  };
}

const b64hash = (s: string): Hash => new Uint8Array(Buffer.from(s, 'base64'));
const qs = (q: Record<string, string | number | undefined>) =>
  new URLSearchParams(Object.entries(q).filter((e): e is [string, string | number] => e[1] !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** A date or date-time argument as ISO 8601 (a date alone: its midnight UTC). @throws CliError for anything else. */
function isoArgument(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const text = /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v;
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(Date.parse(text))) throw new CliError(`${flag}: expected an ISO 8601 date (YYYY-MM-DD) or date-time, got ${JSON.stringify(v)}`, 1);
  return new Date(text).toISOString();
}

/** The verifier keys of a `--keys` file: one a line; blank lines and `#` comments skipped. @throws CliError */
async function readKeys(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch((err: Error) => {
    throw new CliError(`--keys ${file}: ${err.message}`, 1);
  });
  const keys = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (!keys.length) throw new CliError(`--keys ${file}: no verifier key in it`, 1);
  for (const k of keys) {
    try {
      parseVerifierKey(k);
    } catch (err) {
      throw new CliError(`--keys ${file}: ${(err as Error).message}`, 1);
    }
  }
  return keys;
}

interface ExportFlags extends Connection {
  from?: string;
  to?: string;
  out: string;
  quiet?: boolean;
}

/**
 * Export the evidence pack of the records stored in [from, to) to `o.out` (written to `<out>.partial`, then renamed).
 * @returns the number of records and the pack's tree size. @throws CliError
 */
export async function auditExport(o: ExportFlags, io: CliIo, fetchImpl?: typeof fetch): Promise<{ records: number; tree_size: number }> {
  const from = isoArgument('--from', o.from);
  const to = isoArgument('--to', o.to);
  const call = client(o, io, fetchImpl);
  const keys = await call<AuditKeys>('GET', '/.well-known/agp-audit-keys', { auth: false });
  let page = await call<AuditCheckpointPage>('GET', '/api/v1/audit/checkpoints?limit=1');
  let latest: AuditCheckpoint | null = page.latest;
  if (!latest || page.tree_size > latest.tree_size) {
    try {
      latest = await call<AuditCheckpoint>('POST', '/api/v1/audit/checkpoints');
    } catch (err) {
      if (!latest || !(err instanceof CliError) || !/^403 /.test(err.message)) throw err;
      io.err(`note: the log grew since its latest checkpoint (${latest.tree_size}) and this key may not sign one: the pack ends at leaf ${latest.tree_size}\n`);
    }
  }
  const N = latest.tree_size;
  if (N === 0) throw new CliError('the audit trail is empty: nothing to export', 1);
  const first = await call<AuditRecordPage>('GET', `/api/v1/audit/records?${qs({ from, to, limit: 1 })}`);
  const a = Math.min(first.start, N);
  const b = Math.min(first.end, N);

  // Every checkpoint that covers a record of the pack (tree size above a), up to N, oldest first.
  const checkpoints: AuditCheckpoint[] = [];
  for (let skip = 0; ; skip += 200) {
    page = await call<AuditCheckpointPage>('GET', `/api/v1/audit/checkpoints?${qs({ skip, limit: 200 })}`);
    checkpoints.push(...page.checkpoints.filter((c) => c.tree_size > a && c.tree_size <= N));
    if (page.checkpoints.length < 200 || page.checkpoints.at(-1)!.tree_size <= a) break;
  }
  checkpoints.reverse();

  const writer = new PackWriter();
  const partial = `${o.out}.partial`;
  const fh = await open(partial, 'w').catch((err: Error) => {
    throw new CliError(`--out ${o.out}: ${err.message}`, 1);
  });
  try {
    let text = writer.line({ kind: 'agp-audit-pack', version: 1, origin: first.origin, organization_id: first.organization_id, from: from ?? null, to: to ?? null, exported_at: new Date().toISOString(), start: a, end: b, tree_size: N });
    for (const k of keys.keys) text += writer.line({ kind: 'key', ...k });
    for (const c of checkpoints) text += writer.line({ kind: 'checkpoint', tree_size: c.tree_size, note: c.note });
    for (let i = 1; i < checkpoints.length; i++) {
      const p = await call<AuditConsistencyProof>('GET', `/api/v1/audit/proofs/consistency?${qs({ from: checkpoints[i - 1].tree_size, to: checkpoints[i].tree_size })}`);
      text += writer.line({ kind: 'consistency', from: p.from, to: p.to, proof: p.proof });
    }
    await fh.write(text);
    let done = 0;
    let cursor: string | null | undefined;
    while (a < b && cursor !== null) {
      const r = await call<AuditRecordPage>('GET', `/api/v1/audit/records?${qs({ start: a, end: b, cursor: cursor ?? undefined, limit: 2000 })}`);
      await fh.write(
        r.records
          .map((x) => writer.line({ kind: 'record', leaf_index: x.leaf_index, record_id: x.record_id, position: x.position, leaf: x.leaf, leaf_hash: x.leaf_hash, ...(x.missing ? { missing: true as const } : {}), ...extraOf(x) }))
          .join(''),
      );
      done += r.records.length;
      cursor = r.next_cursor;
      if (!o.quiet && b - a > 2000) io.err(`  exported ${done}/${b - a} records\n`);
    }
    const range = await call<AuditRangeProof>('GET', `/api/v1/audit/proofs/range?${qs({ start: a, end: b, tree_size: N })}`);
    await fh.write(writer.line({ kind: 'range_proof', tree_size: N, start: a, end: b, proof: range.proof }) + writer.end());
  } finally {
    await fh.close();
  }
  await rename(partial, o.out);
  return { records: b - a, tree_size: N };
}

/** The disclosures and redacted pointers a record of the records route carries (salted commitments), if any. */
function extraOf(x: object): Pick<PackRecordLine, 'disclosures' | 'redacted'> {
  const { disclosures, redacted } = x as Pick<PackRecordLine, 'disclosures' | 'redacted'>;
  return { ...(disclosures ? { disclosures } : {}), ...(redacted ? { redacted } : {}) };
}

interface VerifyFlags extends Connection {
  keys?: string;
  live?: boolean;
  checkpoint?: string;
  save?: string;
  json?: boolean;
}

/** Open a note with `keys`. @throws CliError naming it. */
function opened(what: string, note: string, keys: readonly string[]): OpenedCheckpoint {
  try {
    return openCheckpoint(note, keys);
  } catch (err) {
    if (err instanceof CheckpointError) throw new CliError(`${what}: ${err.message}`, 1);
    throw err;
  }
}

/**
 * Check that the platform's latest checkpoint is signed by `keys` and consistent with `kept`; with `pack`, that its
 * records [start, end) are the pack's (leaf hash by leaf hash). @returns the platform's latest checkpoint. @throws CliError
 */
async function checkLive(o: VerifyFlags, io: CliIo, keys: readonly string[], kept: OpenedCheckpoint, pack: { start: number; end: number; records: Map<number, { id: string; hash: string }> } | null, fetchImpl?: typeof fetch) {
  const call = client(o, io, fetchImpl);
  const page = await call<AuditCheckpointPage>('GET', '/api/v1/audit/checkpoints?limit=1');
  if (!page.latest) throw new CliError('the platform has no checkpoint: its log was emptied', 1);
  const latest = opened(`the platform's checkpoint ${page.latest.tree_size}`, page.latest.note, keys);
  if (latest.origin !== kept.origin) throw new CliError(`the platform's checkpoint ${latest.size}: its origin ${latest.origin} is not ${kept.origin}`, 1);
  let inconsistent: string | null = null;
  if (latest.size < kept.size) inconsistent = `the platform's latest checkpoint (${latest.size}) is smaller than your checkpoint (${kept.size}): the log was truncated`;
  else {
    const p = await call<AuditConsistencyProof>('GET', `/api/v1/audit/proofs/consistency?${qs({ from: kept.size, to: latest.size })}`);
    if (!verifyConsistency(kept.size, latest.size, p.proof.map(b64hash), kept.root, latest.root))
      inconsistent = `the platform's checkpoint ${latest.size} is not consistent with your checkpoint ${kept.size}: the log was rewritten`;
  }
  if (pack && pack.end > pack.start) {
    let cursor: string | null | undefined;
    const end = Math.min(pack.end, latest.size);
    while (cursor !== null && pack.start < end) {
      const r = await call<AuditRecordPage>('GET', `/api/v1/audit/records?${qs({ start: pack.start, end, cursor: cursor ?? undefined, limit: 2000 })}`);
      for (const x of r.records) {
        const mine = pack.records.get(x.leaf_index)!;
        if (x.record_id !== mine.id || x.leaf_hash !== mine.hash)
          throw new CliError(`record ${mine.id} (leaf ${x.leaf_index}) differs from the one in your pack${inconsistent ? ` (${inconsistent})` : ''}`, 1);
      }
      cursor = r.next_cursor;
    }
    if (end < pack.end) {
      const leaf = end;
      throw new CliError(`record ${pack.records.get(leaf)!.id} (leaf ${leaf}) is no longer in the platform's log (${inconsistent ?? 'the log was truncated'})`, 1);
    }
  }
  if (inconsistent) throw new CliError(inconsistent, 1);
  return { note: page.latest.note, size: latest.size };
}

/**
 * `agp audit verify`: offline (a pack), live (a pack, then the platform), or live from a kept checkpoint.
 * @returns the lines to print. @throws CliError (exit 1 with one line naming what failed; 2 unreachable).
 */
export async function auditVerify(pack: string | undefined, o: VerifyFlags, io: CliIo, fetchImpl?: typeof fetch): Promise<string> {
  const trusted = o.keys ? await readKeys(o.keys) : undefined;
  if (!pack) {
    if (!o.live || !o.checkpoint) throw new CliError('give a PACK, or --live --checkpoint FILE', 1);
    const note = await readFile(o.checkpoint, 'utf8').catch((err: Error) => {
      throw new CliError(`--checkpoint ${o.checkpoint}: ${err.message}`, 1);
    });
    const keys = trusted ?? (await client(o, io, fetchImpl)<AuditKeys>('GET', '/.well-known/agp-audit-keys', { auth: false })).keys.map((k) => k.verifier_key);
    if (!trusted) io.err('note: no --keys: the checkpoints are checked with the keys the platform serves\n');
    const kept = opened(`--checkpoint ${o.checkpoint}`, note, keys);
    const latest = await checkLive(o, io, keys, kept, null, fetchImpl);
    if (o.save) await writeFile(o.save, latest.note);
    return `live: the platform's checkpoint ${latest.size} is consistent with your checkpoint ${kept.size} (${kept.origin})${o.save ? `; saved to ${o.save}` : ''}\n`;
  }
  if (o.checkpoint) throw new CliError('--checkpoint is for --live without a PACK', 1);
  const records = new Map<number, { id: string; hash: string }>();
  const lines = async function* () {
    const rl = createInterface({ input: createReadStream(pack), crlfDelay: Infinity });
    for await (const line of rl) {
      if (o.live && line.startsWith('{"kind":"record"')) {
        try {
          const r = JSON.parse(line) as PackRecordLine;
          records.set(r.leaf_index, { id: r.record_id, hash: r.leaf_hash });
        } catch {
          // the verifier names the malformed line
        }
      }
      yield line;
    }
  };
  let result;
  try {
    result = await verifyPack(lines(), trusted ? { keys: trusted } : {});
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) throw new CliError(`${pack}: ${(err as Error).message}`, 1);
    throw err;
  }
  if (!result.ok) throw new CliError(result.failure.message, 1);
  const s = result.summary;
  let out = o.json ? '' : summaryText(pack, s);
  let live: { note: string; size: number } | undefined;
  if (o.live) {
    const kept = openCheckpoint(s.latest_checkpoint, s.trusted_keys);
    live = await checkLive(o, io, s.trusted_keys, kept, { start: s.start, end: s.end, records }, fetchImpl);
    if (o.save) await writeFile(o.save, live.note);
    out += o.json ? '' : `live: the platform's checkpoint ${live.size} is consistent with the pack's ${s.tree_size}, and holds the pack's ${s.records} records unchanged${o.save ? `; saved to ${o.save}` : ''}\n`;
  }
  if (o.json) {
    const { latest_checkpoint: _c, trusted_keys: _k, ...summary } = s;
    out = `${JSON.stringify({ ok: true, ...summary, ...(live ? { live: { tree_size: live.size } } : {}) })}\n`;
  }
  return out;
}

function summaryText(pack: string, s: PackSummary): string {
  return [
    `${pack}: verified`,
    `  log          ${s.origin}, leaves ${s.start}..${s.end - 1} of ${s.tree_size}${s.from || s.to ? ` (stored ${s.from ?? '…'} to ${s.to ?? '…'})` : ''}`,
    `  records      ${s.records} (${s.redacted_records} with erased fields)`,
    `  fields       ${s.disclosed_fields} disclosed, ${s.redacted_fields} redacted`,
    `  checkpoints  ${s.checkpoints}, consistent; the latest, of ${s.tree_size} leaves, signed by key ${s.key_ids.join(', ')}`,
    '',
  ].join('\n');
}

interface EraseFlags extends Connection {
  agent?: string;
  run?: string;
  intervention?: string;
  reason?: string;
  json?: boolean;
}

/**
 * `agp audit erase`: erase the committed fields of one agent's, run's or intervention's records (admin key).
 * @returns the line(s) to print: what was erased, or the API's answer as one JSON object with `--json`.
 * @throws CliError (1: not exactly one target, no reason, or the platform's refusal; 2: unreachable).
 */
export async function auditErase(o: EraseFlags, io: CliIo, fetchImpl?: typeof fetch): Promise<string> {
  const given = (['agent', 'run', 'intervention'] as const).filter((k) => o[k] !== undefined);
  if (given.length !== 1) throw new CliError(`give exactly one of --agent, --run or --intervention${given.length ? ` (got ${given.map((k) => `--${k}`).join(', ')})` : ''}`, 1);
  if (o.reason === undefined) throw new CliError('missing --reason: say why (e.g. a data subject’s request); it is kept in the erasure’s record', 1);
  const [kind] = given;
  const erased = await client(o, io, fetchImpl)<AuditErasure>('POST', '/api/v1/audit/erasures', { body: { [`${kind}_id`]: o[kind], reason: o.reason } });
  if (o.json) return `${JSON.stringify(erased)}\n`;
  return `erased ${erased.fields} ${erased.fields === 1 ? 'field' : 'fields'} of ${erased.records} ${erased.records === 1 ? 'record' : 'records'} of ${kind} ${o[kind]} (${erased.events_changed} stored ${erased.events_changed === 1 ? 'event' : 'events'} changed); the erasure is record ${erased.id} of the log; every proof still verifies\n`;
}

interface RetentionFlags extends Connection {
  set?: number;
  keepAll?: boolean;
  json?: boolean;
}

/** The retention in words. */
const retentionText = (r: AuditRetention) => (r.audit_retention_days === null ? 'keep everything (no record loses its committed fields by age)' : `${r.audit_retention_days} days (older records lose their committed fields)`);

/**
 * `agp audit retention`: print the organisation's retention, or set it with `--set DAYS` or `--keep-all` (admin key).
 * @returns the line to print (one JSON object with `--json`). @throws CliError (1: both flags, or the platform's refusal; 2: unreachable).
 */
export async function auditRetention(o: RetentionFlags, io: CliIo, fetchImpl?: typeof fetch): Promise<string> {
  if (o.set !== undefined && o.keepAll) throw new CliError('give --set DAYS or --keep-all, not both', 1);
  const call = client(o, io, fetchImpl);
  const setting = o.set !== undefined || o.keepAll;
  const r = setting ? await call<AuditRetention>('PUT', '/api/v1/audit/retention', { body: { audit_retention_days: o.keepAll ? null : o.set } }) : await call<AuditRetention>('GET', '/api/v1/audit/retention');
  if (o.json) return `${JSON.stringify(r)}\n`;
  return `${setting ? 'retention set: ' : 'retention: '}${retentionText(r)}\n`;
}

/** Register `agp audit export`, `verify`, `erase` and `retention` on `program`. */
export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program.command('audit').description('the verifiable audit trail: export an evidence pack, verify one offline or against the platform, erase personal data, set the retention (docs/audit.md)');
  audit
    .command('export')
    .description('write the evidence pack of the records stored in [--from, --to): keys, checkpoints, consistency proofs, records and their range proof')
    .requiredOption('--out <file>', 'required: the pack to write (JSON Lines)')
    .option('--from <date>', 'ISO 8601 date or date-time, inclusive (default: the first record)')
    .option('--to <date>', 'ISO 8601 date or date-time, exclusive (default: the latest record)')
    .option('--url <url>', 'platform base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'API key: read scope; a write key also signs a checkpoint when the log grew (default: env AGP_KEY)')
    .option('--quiet', 'no progress lines on stderr')
    .action(async (o: ExportFlags) => {
      const r = await auditExport(o, io);
      io.out(`wrote ${o.out}: ${r.records} records, checkpoint of ${r.tree_size} leaves\n`);
    });
  audit
    .command('verify')
    .description('verify an evidence pack offline (exit 0, or 1 with the first failing record or checkpoint); --live also checks the platform still holds it')
    .argument('[pack]', 'the pack (omit with --live --checkpoint)')
    .option('--keys <file>', 'verifier keys you trust, one a line, instead of the pack’s own')
    .option('--live', 'then check the platform: its latest checkpoint is consistent with the pack’s, and its records are the pack’s')
    .option('--checkpoint <file>', 'with --live and no pack: check the platform against a checkpoint you kept (a signed note)')
    .option('--save <file>', 'with --live: write the platform’s latest verified checkpoint to this file')
    .option('--url <url>', 'platform base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'API key, read scope (default: env AGP_KEY)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (pack: string | undefined, o: VerifyFlags) => {
      if (o.save && !o.live) throw new CliError('--save is for --live', 1);
      io.out(await auditVerify(pack, o, io));
    });
  audit
    .command('erase')
    .description('erase the personal data (committed fields and their salts) of one agent’s, run’s or intervention’s audit records; leaves, checkpoints and proofs stay valid (admin key)')
    .option('--agent <id>', 'the agent whose records to erase (its interventions, approvals, outcome changes, deletions and kill switches)')
    .option('--run <id>', 'the run whose records to erase')
    .option('--intervention <id>', 'the intervention whose records to erase')
    .option('--reason <text>', 'required: why (e.g. a data subject’s request); kept in the erasure’s own record')
    .option('--url <url>', 'platform base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'API key, admin scope (default: env AGP_KEY)')
    .option('--json', 'print the platform’s answer as one JSON object')
    .action(async (o: EraseFlags) => {
      io.out(await auditErase(o, io));
    });
  audit
    .command('retention')
    .description('print the organisation’s audit retention, or set it: records older than it lose their committed fields; leaves and proofs stay (admin key)')
    .option('--set <days>', 'erase the committed fields of records older than this many days (a whole number from 1 to 36500)', positiveInt)
    .option('--keep-all', 'keep everything (the default): no record is erased by age')
    .option('--url <url>', 'platform base URL (default: env AGP_URL, else http://127.0.0.1:8080)')
    .option('--key <key>', 'API key, admin scope (default: env AGP_KEY)')
    .option('--json', 'print the retention as one JSON object')
    .action(async (o: RetentionFlags) => {
      io.out(await auditRetention(o, io));
    });
}

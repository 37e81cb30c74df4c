/**
 * Audit trail (`/audit-trail`): the organisation's verifiable log (docs/audit.md). The latest checkpoint (origin, tree
 * size, root hash, time, key; its signed note, to copy) and "Sign a checkpoint now" for a write key
 * (`POST /api/v1/audit/checkpoints`); "Verify a record": a record id (an event id, e.g. an audit-log entry's id; also
 * `?record=` in the URL, which the audit log links to) is checked in the browser against the latest checkpoint with Web
 * Crypto (./verify.ts): the checkpoint's Ed25519 signature with the key of `/.well-known/agp-audit-keys`, the leaf
 * hash, and the root recomputed from the inclusion proof (`GET /api/v1/audit/proofs/inclusion` at the checkpoint's
 * tree size), each step shown; the checkpoints, paged (`GET /api/v1/audit/checkpoints`); the public keys; and, for an
 * admin, the retention and the erasure of an agent's, run's or intervention's personal data (./Erasure.tsx).
 * Source: docs/audit.md; docs/console.md (Audit trail).
 */
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { useSession } from '../../auth/session.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import type { AuditCheckpoint, AuditCheckpointPage, AuditInclusionProof, AuditKeys } from '../../api/types.js';
import { ProblemError } from '../../api/client.js';
import { PageHeader } from '../../components/PageHeader.js';
import { DataTable, Pagination, type Column } from '../../components/DataTable.js';
import { Time, Truncate } from '../../components/Cells.js';
import { Empty, Loading, ProblemMessage, QueryState } from '../../components/States.js';
import { JsonView } from '../../components/LongText.js';
import { WriteButton } from '../../components/WriteButton.js';
import { count } from '../../components/format.js';
import { ed25519Supported, verifyRecord, type VerifyResult } from './verify.js';
import { PersonalData } from './Erasure.js';

const CHECKPOINTS = '/api/v1/audit/checkpoints';
const KEYS = '/.well-known/agp-audit-keys';
const PAGE = 20;

/** A signed note, as text to select, with a copy button. */
function NoteText({ note, id }: { note: string; id: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = () =>
    navigator.clipboard.writeText(note).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return (
    <div>
      <pre className="long-text-body" data-testid={id} tabIndex={0}>
        {note}
      </pre>
      <p className="actions-row">
        <button type="button" onClick={() => void copy()}>
          Copy the signed note
        </button>
        <span role="status">{copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'The browser refused to copy: select the text above.' : ''}</span>
      </p>
    </div>
  );
}

/** The latest checkpoint and the log's size, with "Sign a checkpoint now". */
function Latest({ page }: { page: AuditCheckpointPage }) {
  const sign = useApiMutation((api, _: void) => api.post<AuditCheckpoint>(CHECKPOINTS), [CHECKPOINTS]);
  const c = page.latest;
  const behind = page.tree_size - (c?.tree_size ?? 0);
  return (
    <section className="panel" aria-labelledby="latest-heading" data-testid="latest-checkpoint">
      <h2 id="latest-heading">Latest checkpoint</h2>
      {c ? (
        <>
          <dl className="fields">
            <dt>Origin</dt>
            <dd>
              <code>{c.origin}</code>
            </dd>
            <dt>Tree size</dt>
            <dd data-field="tree_size">{count(c.tree_size)} records</dd>
            <dt>Root hash</dt>
            <dd>
              <code data-field="root_hash">{c.root_hash}</code>
            </dd>
            <dt>Signed</dt>
            <dd>
              <Time iso={c.at} />
            </dd>
            <dt>Key</dt>
            <dd>
              {c.key_name} <code>{c.key_id}</code>
            </dd>
          </dl>
          <h3>Signed note</h3>
          <NoteText note={c.note} id="latest-note" />
        </>
      ) : (
        <Empty>No checkpoint yet: the platform signs one at its next interval once the log holds a record, or sign one now.</Empty>
      )}
      <p className="actions-row">
        <span>
          The log holds {count(page.tree_size)} records{behind > 0 ? `; ${count(behind)} of them after the latest checkpoint` : ''}.
        </span>
        <WriteButton onClick={() => sign.mutate()} disabled={sign.isPending || behind <= 0}>
          Sign a checkpoint now
        </WriteButton>
      </p>
      {sign.error ? <ProblemMessage error={sign.error} /> : null}
    </section>
  );
}

const STATUS_TEXT = { pass: 'passed', fail: 'failed', unavailable: 'not checked' } as const;
const STATUS_MARK = { pass: '✓', fail: '✗', unavailable: '?' } as const;

/** The steps of a check and its verdict. */
function Steps({ result, proof, checkpoint }: { result: VerifyResult; proof: AuditInclusionProof; checkpoint: AuditCheckpoint }) {
  let leaf: unknown = proof.leaf;
  try {
    leaf = JSON.parse(proof.leaf);
  } catch {
    /* shown as text */
  }
  return (
    <div data-testid="verify-result" data-valid={String(result.valid)}>
      <p className={result.valid ? 'success' : 'problem'} role="status">
        {result.valid ? (
          <>
            <strong>Valid.</strong> Record <code>{proof.record}</code> is leaf {count(proof.leaf_index)} of the {count(checkpoint.tree_size)} records that the checkpoint signed by {checkpoint.key_name} ({checkpoint.key_id}) commits to — checked in this browser.
          </>
        ) : (
          <>
            <strong>Not verified.</strong> A step below did not pass.
          </>
        )}
      </p>
      <ol className="verify-steps">
        {result.steps.map((s) => (
          <li key={s.id} data-step={s.id} data-status={s.status} className={`verify-step verify-${s.status}`}>
            <span aria-hidden="true">{STATUS_MARK[s.status]} </span>
            <strong>{s.label}</strong>: {STATUS_TEXT[s.status]}
            <div className="mono verify-detail">{s.detail}</div>
          </li>
        ))}
      </ol>
      <h3>The record as the leaf holds it</h3>
      <JsonView value={leaf} />
    </div>
  );
}

/**
 * "Verify a record": the id in the URL (`?record=`), the proof fetched for the checkpoint's tree size and checked
 * in the browser against the checkpoint and its key from the keys document.
 */
function VerifyRecord({ checkpoint, keys }: { checkpoint: AuditCheckpoint | null; keys: AuditKeys | undefined }) {
  const { api } = useSession();
  const [params, setParams] = useSearchParams();
  const record = params.get('record') ?? '';
  const [draft, setDraft] = useState(record);
  const supported = useQuery({ queryKey: ['ed25519-supported'], queryFn: ed25519Supported, staleTime: Infinity });
  const key = keys?.keys.find((k) => k.key_id === checkpoint?.key_id);
  const check = useQuery<{ result: VerifyResult; proof: AuditInclusionProof }, Error>({
    queryKey: ['audit-verify', record, checkpoint?.tree_size, key?.verifier_key],
    enabled: record !== '' && checkpoint !== null && key !== undefined,
    retry: false,
    queryFn: async () => {
      const proof = await api.get<AuditInclusionProof>('/api/v1/audit/proofs/inclusion', { record, tree_size: checkpoint!.tree_size });
      const result = await verifyRecord({ record, note: checkpoint!.note, verifierKey: key!.verifier_key, proof });
      return { result, proof };
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const next = new URLSearchParams(params);
    if (draft.trim()) next.set('record', draft.trim());
    else next.delete('record');
    setParams(next);
  };
  const notCovered = check.error instanceof ProblemError && check.error.status === 422 && check.error.errors.some((f) => f.path === 'query.tree_size');
  return (
    <section className="panel" aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify a record</h2>
      <p className="muted">
        The record's leaf and its inclusion proof are fetched for the latest checkpoint; this browser hashes the leaf (SHA-256), walks the proof up to a root (RFC 9162) and compares it with the root the checkpoint signs, and checks the checkpoint's Ed25519 signature with the key the platform publishes at <code>{KEYS}</code>. A record's id is the id of
        its event (an audit-log entry's id, for instance).
      </p>
      {supported.data === false ? (
        <p className="notice" role="note">
          This browser has no Ed25519 in Web Crypto: the checkpoint's signature cannot be checked here (the hashes still are). Use a current Chromium, Firefox or Safari, or check the signed note with another tool (docs/audit.md).
        </p>
      ) : null}
      <form className="actions-row" onSubmit={submit} aria-label="Verify a record">
        <label htmlFor="audit-record">Record id</label>
        <input id="audit-record" className="mono" size={40} value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="0192f0a0-…" />
        <button type="submit" className="primary" disabled={!draft.trim()}>
          Verify
        </button>
      </form>
      {record === '' ? null : checkpoint === null ? (
        <Empty>There is no checkpoint to verify against yet.</Empty>
      ) : keys && !key ? (
        <ProblemMessage error={new Error(`no key in ${KEYS} has the checkpoint's key id ${checkpoint.key_id}`)} />
      ) : check.isError ? (
        <div data-testid="verify-error">
          <ProblemMessage error={check.error} />
          {notCovered ? <p className="notice">The latest checkpoint does not cover this record yet: sign a checkpoint now (write key), or wait for the next one.</p> : null}
        </div>
      ) : check.data ? (
        <Steps result={check.data.result} proof={check.data.proof} checkpoint={checkpoint} />
      ) : (
        <Loading what="the proof" />
      )}
    </section>
  );
}

/** The organisation's checkpoints, newest first, paged; a row opens its signed note. */
function Checkpoints({ page, onSkip }: { page: AuditCheckpointPage; onSkip: (skip: number) => void }) {
  const columns: Column<AuditCheckpoint>[] = [
    { key: 'size', header: 'Tree size', numeric: true, cell: (c) => count(c.tree_size) },
    { key: 'root', header: 'Root hash', cell: (c) => <Truncate text={c.root_hash} mono /> },
    { key: 'at', header: 'Signed', cell: (c) => <Time iso={c.at} /> },
    { key: 'key', header: 'Key', cell: (c) => `${c.key_name} ${c.key_id}` },
  ];
  return (
    <section aria-labelledby="checkpoints-heading">
      <h2 id="checkpoints-heading">Checkpoints</h2>
      {page.total === 0 ? (
        <Empty>No checkpoints yet.</Empty>
      ) : (
        <>
          <DataTable caption="Checkpoints, newest first" columns={columns} rows={page.checkpoints} rowKey={(c) => String(c.tree_size)} rowId={(c) => String(c.tree_size)} detail={(c) => <NoteText note={c.note} id={`note-${c.tree_size}`} />} />
          <Pagination total={page.total} skip={page.skip} limit={page.limit} onSkip={onSkip} />
        </>
      )}
    </section>
  );
}

/** The public keys of `/.well-known/agp-audit-keys`. */
function Keys({ keys }: { keys: AuditKeys }) {
  const columns: Column<AuditKeys['keys'][number]>[] = [
    { key: 'id', header: 'Key id', cell: (k) => <code>{k.key_id}</code> },
    { key: 'name', header: 'Name', cell: (k) => k.name },
    { key: 'vkey', header: 'Verifier key', wrap: true, cell: (k) => <code>{k.verifier_key}</code> },
    { key: 'created', header: 'Created', cell: (k) => <Time iso={k.created_at} /> },
    { key: 'state', header: 'State', cell: (k) => (k.retired_at ? <>retired <Time iso={k.retired_at} /></> : 'current') },
  ];
  return keys.keys.length ? <DataTable caption="Signing keys, the current one first" columns={columns} rows={keys.keys} rowKey={(k) => k.key_id} rowId={(k) => k.key_id} /> : <Empty>No signing key yet.</Empty>;
}

/** See the module's doc. */
export function AuditTrailPage() {
  const [skip, setSkip] = useState(0);
  const list = useApiQuery<AuditCheckpointPage>(CHECKPOINTS, { skip, limit: PAGE });
  const keys = useApiQuery<AuditKeys>(KEYS);
  return (
    <>
      <PageHeader title="Audit trail" />
      <p className="muted">
        Every governance record (interventions and their outcomes, approvals, policy versions, kill switches, agents, keys, members, MCP servers, deletions) is a leaf of the organisation's append-only Merkle tree. Signed checkpoints commit to the tree; anyone holding the public key can check a record without trusting the platform's database.
      </p>
      <QueryState query={list} what="the audit trail">
        {(page) => (
          <>
            <Latest page={page} />
            <VerifyRecord checkpoint={page.latest} keys={keys.data} />
            <Checkpoints page={page} onSkip={setSkip} />
          </>
        )}
      </QueryState>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Public keys</h2>
        <p className="muted">
          From <code>{KEYS}</code> (no credentials needed). The document is only as trustworthy as the platform serving it: keep a copy of the verifier keys you trust elsewhere.
        </p>
        <QueryState query={keys} what="the keys">
          {(k) => <Keys keys={k} />}
        </QueryState>
      </section>
      <PersonalData />
    </>
  );
}

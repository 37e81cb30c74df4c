/**
 * The audit trail page's personal-data controls (admin only): the organisation's retention
 * (`GET/PUT /api/v1/audit/retention`: a whole number of days, or keep everything) and an erasure form
 * (`POST /api/v1/audit/erasures`: an agent's, a run's or an intervention's records, with a reason), each change
 * confirmed in a dialog that says what is erased and that every proof still verifies. The answer (records and fields
 * erased) is shown; a 422's field errors show under the input they name. For a read or write key, or a person without
 * the admin role, the section says so and does not ask the API. Source: docs/audit.md (Retention, Erasure).
 */
import { useState, type FormEvent } from 'react';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { ProblemError } from '../../api/client.js';
import type { AuditErasure, AuditRetention } from '../../api/types.js';
import { useSession } from '../../auth/session.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { Field } from '../../components/Field.js';
import { ProblemMessage, QueryState } from '../../components/States.js';
import { WriteButton } from '../../components/WriteButton.js';
import { count } from '../../components/format.js';

const RETENTION = '/api/v1/audit/retention';
const ERASURES = '/api/v1/audit/erasures';
/** The EU AI Act's minimum for deployers' logs (Art. 26(6)): six months. */
const EU_AI_ACT_DAYS = 183;

/** What the erasure and retention erase, and what stays: the text of both confirmations. */
function WhatStays() {
  return (
    <p>
      The leaves, checkpoints and signatures stay: every inclusion and consistency proof still verifies, and an evidence pack lists the erased fields as redacted. The erasure is itself a record of the log. This cannot be undone.
    </p>
  );
}

/** The retention: shown, and set by an admin (a number of days, or keep everything) after a confirmation. */
function Retention({ current }: { current: AuditRetention }) {
  const [mode, setMode] = useState<'keep' | 'days'>(current.audit_retention_days === null ? 'keep' : 'days');
  const [days, setDays] = useState(current.audit_retention_days === null ? String(EU_AI_ACT_DAYS) : String(current.audit_retention_days));
  const [confirming, setConfirming] = useState(false);
  const put = useApiMutation((api, body: { audit_retention_days: number | null }) => api.put<AuditRetention>(RETENTION, body), [RETENTION]);
  const errors = put.error instanceof ProblemError ? put.error.errors : [];
  const value = mode === 'keep' ? null : Number(days);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    put.reset();
    setConfirming(true);
  };
  const d = current.audit_retention_days;
  return (
    <div data-testid="audit-retention">
      <p data-field="audit_retention_days">
        {d === null ? (
          <>
            <strong>Keep everything</strong> (the default): no record loses its committed fields by age.
          </>
        ) : (
          <>
            <strong>{count(d)} days</strong>: records older than that lose their committed fields (values and salts).
          </>
        )}
      </p>
      <form className="policy-form" onSubmit={submit} aria-label="Audit retention" noValidate>
        <fieldset>
          <legend>Change the retention</legend>
          <label className="check-row">
            <input type="radio" name="retention-mode" checked={mode === 'keep'} onChange={() => setMode('keep')} /> Keep everything
          </label>
          <label className="check-row">
            <input type="radio" name="retention-mode" checked={mode === 'days'} onChange={() => setMode('days')} /> Erase the committed fields of records older than a number of days
          </label>
          {mode === 'days' ? (
            <Field id="retention-days" label="Days" path="audit_retention_days" errors={errors} hint={`A whole number from 1 to 36500. The EU AI Act asks deployers to keep logs at least six months (${EU_AI_ACT_DAYS} days).`}>
              {(a) => <input {...a} type="number" inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} />}
            </Field>
          ) : null}
        </fieldset>
        {put.error && !confirming ? <ProblemMessage error={put.error} /> : null}
        {put.isSuccess ? (
          <p className="success" role="status">
            Saved: {put.data.audit_retention_days === null ? 'keep everything' : `${count(put.data.audit_retention_days)} days`}.
          </p>
        ) : null}
        <WriteButton admin type="submit" className="primary" disabled={put.isPending || (mode === 'days' && days.trim() === '')}>
          Save the retention
        </WriteButton>
      </form>
      <ConfirmDialog
        open={confirming}
        title={value === null ? 'Keep every record?' : `Erase records older than ${days} days?`}
        confirmLabel="Save the retention"
        danger={value !== null}
        busy={put.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => put.mutate({ audit_retention_days: value }, { onSettled: () => setConfirming(false) })}
      >
        {value === null ? (
          <p>No record loses its committed fields by age from now on. Fields already erased stay erased.</p>
        ) : (
          <>
            <p>
              The platform erases the committed fields (inputs, reasons, intents, notes, guardrail context …) and their salts of every record stored more than {days} days ago — now, and then every hour.
            </p>
            <WhatStays />
          </>
        )}
      </ConfirmDialog>
    </div>
  );
}

/** The kinds of erasure target and the body field each is sent as. */
const TARGETS = { agent: 'agent_id', run: 'run_id', intervention: 'intervention_id' } as const;
type TargetKind = keyof typeof TARGETS;
/** What each kind covers, for the confirmation. */
const COVERS: Record<TargetKind, string> = {
  agent: "its interventions with every outcome change, approval and deletion, and the kill switches engaged on it",
  run: 'its interventions with every outcome change, approval and deletion',
  intervention: 'its record, approvals, outcome changes and deletion',
};

/** The erasure form: a target (agent, run or intervention, and its id) and a reason, confirmed, then the answer. */
function EraseForm() {
  const [kind, setKind] = useState<TargetKind>('agent');
  const [id, setId] = useState('');
  const [reason, setReason] = useState('');
  const [confirming, setConfirming] = useState(false);
  const erase = useApiMutation((api, body: Record<string, string>) => api.post<AuditErasure>(ERASURES, body), [ERASURES]);
  const errors = erase.error instanceof ProblemError ? erase.error.errors : [];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    erase.reset();
    setConfirming(true);
  };
  const target = id.trim();
  return (
    <>
      <form className="policy-form" onSubmit={submit} aria-label="Erase personal data" noValidate>
        <div className="form-row">
          <label htmlFor="erase-kind">Erase the records of</label>
          <select id="erase-kind" value={kind} onChange={(e) => setKind(e.target.value as TargetKind)}>
            <option value="agent">an agent</option>
            <option value="run">a run</option>
            <option value="intervention">an intervention</option>
          </select>
        </div>
        <Field id="erase-id" label={`${kind[0].toUpperCase()}${kind.slice(1)} id`} path={TARGETS[kind]} errors={errors}>
          {(a) => <input {...a} type="text" className="mono" value={id} onChange={(e) => setId(e.target.value)} />}
        </Field>
        <Field id="erase-reason" label="Reason" path="reason" errors={errors} hint="Why, e.g. a data subject's request; kept in the erasure's own record">
          {(a) => <textarea {...a} value={reason} onChange={(e) => setReason(e.target.value)} />}
        </Field>
        {erase.error && !confirming ? <ProblemMessage error={erase.error} /> : null}
        {erase.isSuccess ? (
          <p className="success" role="status" data-testid="erasure-result">
            Erased {count(erase.data.fields)} {erase.data.fields === 1 ? 'field' : 'fields'} of {count(erase.data.records)} {erase.data.records === 1 ? 'record' : 'records'} ({count(erase.data.events_changed)} stored {erase.data.events_changed === 1 ? 'event' : 'events'} changed); the erasure's record is <code>{erase.data.id}</code>.
          </p>
        ) : null}
        <WriteButton admin type="submit" className="danger" disabled={erase.isPending || target === ''}>
          Erase…
        </WriteButton>
      </form>
      <ConfirmDialog
        open={confirming}
        title={`Erase the personal data of ${kind} ${target}?`}
        confirmLabel="Erase"
        danger
        busy={erase.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => erase.mutate({ [TARGETS[kind]]: target, reason }, { onSettled: () => setConfirming(false) })}
      >
        <p>
          The committed fields (inputs, reasons, intents, notes, guardrail context …) of every audit record of {kind} <code>{target}</code> — {COVERS[kind]} — are removed from the stored events and the read models, and their salts deleted.
        </p>
        <WhatStays />
      </ConfirmDialog>
    </>
  );
}

/** See the module's doc. */
export function PersonalData() {
  const { notAdminReason } = useSession();
  const retention = useApiQuery<AuditRetention>(notAdminReason ? null : RETENTION);
  return (
    <section className="panel" aria-labelledby="personal-data-heading">
      <h2 id="personal-data-heading">Retention and erasure</h2>
      <p className="muted">
        A record's personal data (its committed fields) can be erased without breaking the log: its leaf holds only salted commitments, so erasing the values and salts leaves every proof valid. Records logged before commitments existed keep theirs.
      </p>
      {notAdminReason ? (
        <p className="notice" role="note">
          {notAdminReason} Only an admin reads or sets the retention and erases records.
        </p>
      ) : (
        <>
          <h3>Retention</h3>
          <QueryState query={retention} what="the retention">
            {(r) => <Retention current={r} />}
          </QueryState>
          <h3>Erase personal data</h3>
          <EraseForm />
        </>
      )}
    </section>
  );
}

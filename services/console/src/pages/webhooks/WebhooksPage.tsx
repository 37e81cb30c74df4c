/**
 * Webhooks (`/webhooks`): the organisation's webhook subscriptions (`GET /api/v1/webhooks`), each row opening its
 * delivery log (`GET /api/v1/webhooks/{id}/deliveries`: status, attempts, last response code and latency, next
 * attempt) with a redeliver button per delivery. An admin creates a subscription (url, event kinds, description),
 * enables or disables it, rotates its secret (24 h overlap) or deletes it; a created or rotated secret is shown once,
 * above the list, until dismissed. Other keys see the page and get the API's 403 as a message: managing webhooks needs
 * admin. Below them, the Slack connection (./SlackSection.tsx). Source: docs/notifications.md; docs/console.md (Webhooks).
 */
import { useState, type FormEvent } from 'react';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import type { Page, Webhook, WebhookDelivery, WebhookWithSecret } from '../../api/types.js';
import { DataTable, Pagination, type Column } from '../../components/DataTable.js';
import { Time, Truncate } from '../../components/Cells.js';
import { ProblemMessage, QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { WriteButton } from '../../components/WriteButton.js';
import { SlackSection } from './SlackSection.js';

/** The event kinds the platform sends (docs/notifications.md); the others are accepted by the API but not sent yet. */
const SENT_KINDS = ['approval.requested', 'approval.decided', 'intervention.created', 'kill_switch.changed', 'policy.changed', 'eval.regression', 'delivery.disabled'] as const;

const BASE = '/api/v1/webhooks';
const path = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

/** A subscription's delivery log with a redeliver button per delivery. */
function Deliveries({ hook }: { hook: Webhook }) {
  const [skip, setSkip] = useState(0);
  const q = useApiQuery<Page<'deliveries', WebhookDelivery>>(`${path(hook.id)}/deliveries`, { skip, limit: 20 });
  const redeliver = useApiMutation((api, d: WebhookDelivery) => api.post<WebhookDelivery>(`${path(hook.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`), [BASE]);
  const columns: Column<WebhookDelivery>[] = [
    { key: 'id', header: 'Webhook id', cell: (d) => <Truncate text={d.id} mono /> },
    { key: 'event', header: 'Event', cell: (d) => d.event },
    { key: 'status', header: 'Status', cell: (d) => <Tag value={d.status} /> },
    { key: 'attempts', header: 'Attempts', numeric: true, cell: (d) => d.attempts },
    { key: 'code', header: 'Response', numeric: true, cell: (d) => d.response_status ?? '—' },
    { key: 'latency', header: 'Latency (ms)', numeric: true, cell: (d) => d.latency_ms ?? '—' },
    { key: 'next', header: 'Next attempt', cell: (d) => <Time iso={d.next_attempt_at} /> },
    { key: 'error', header: 'Last error', wrap: true, cell: (d) => d.last_error ?? '' },
    {
      key: 'redeliver',
      header: '',
      cell: (d) => (
        <WriteButton onClick={() => redeliver.mutate(d)} disabled={!hook.enabled || redeliver.isPending} aria-label={`Redeliver ${d.id}`}>
          Redeliver
        </WriteButton>
      ),
    },
  ];
  return (
    <>
      {redeliver.error ? <ProblemMessage error={redeliver.error} /> : null}
      <QueryState query={q} what="deliveries" isEmpty={(p) => p.total === 0} empty="No deliveries yet.">
        {(p) => (
          <>
            <DataTable caption={`Deliveries of ${hook.url}, newest first`} columns={columns} rows={p.deliveries} rowKey={(d) => d.id} rowId={(d) => d.id} />
            <Pagination total={p.total} skip={p.skip} limit={p.limit} onSkip={setSkip} />
          </>
        )}
      </QueryState>
    </>
  );
}

/** The form that creates a subscription. */
function CreateForm({ onCreated }: { onCreated: (w: WebhookWithSecret) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['approval.requested', 'approval.decided']);
  const [description, setDescription] = useState('');
  const create = useApiMutation((api, body: Record<string, unknown>) => api.post<WebhookWithSecret>(BASE, body), [BASE]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {}) }, { onSuccess: (w) => (onCreated(w), setUrl(''), setDescription('')) });
  };
  return (
    <form className="policy-form" onSubmit={submit} aria-label="New webhook subscription">
      <div className="form-row">
        <label htmlFor="webhook-url">URL</label>
        <input id="webhook-url" type="url" required maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://hooks.example.com/agp" />
      </div>
      <fieldset className="policy-categories">
        <legend>Events</legend>
        {SENT_KINDS.map((k) => (
          <label key={k} className="check-row">
            <input type="checkbox" checked={events.includes(k)} onChange={(e) => setEvents(e.target.checked ? [...events, k] : events.filter((x) => x !== k))} /> {k}
          </label>
        ))}
      </fieldset>
      <div className="form-row">
        <label htmlFor="webhook-description">Description</label>
        <input id="webhook-description" maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
      </div>
      {create.error ? <ProblemMessage error={create.error} /> : null}
      <button type="submit" className="primary" disabled={create.isPending || events.length === 0}>
        Create subscription
      </button>
    </form>
  );
}

/** See the module's doc. */
export function WebhooksPage() {
  const [skip, setSkip] = useState(0);
  const [secret, setSecret] = useState<WebhookWithSecret | null>(null);
  const q = useApiQuery<Page<'webhooks', Webhook>>(BASE, { skip, limit: 50 });
  const toggle = useApiMutation((api, w: Webhook) => api.patch<Webhook>(path(w.id), { enabled: !w.enabled }), [BASE]);
  const rotate = useApiMutation((api, w: Webhook) => api.post<WebhookWithSecret>(`${path(w.id)}/rotate-secret`, { overlap_seconds: 86_400 }), [BASE]);
  const remove = useApiMutation((api, w: Webhook) => api.request('DELETE', path(w.id)), [BASE]);
  const failed = toggle.error ?? rotate.error ?? remove.error;
  const columns: Column<Webhook>[] = [
    { key: 'url', header: 'URL', cell: (w) => <Truncate text={w.url} width="text" /> },
    { key: 'description', header: 'Description', fill: true, cell: (w) => <Truncate text={w.description ?? ''} width="fill" /> },
    { key: 'events', header: 'Events', wrap: true, cell: (w) => w.events.join(', ') },
    { key: 'state', header: 'State', cell: (w) => <Tag value={w.enabled ? 'enabled' : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`} /> },
    { key: 'failures', header: 'Failures', numeric: true, cell: (w) => w.consecutive_failures },
    { key: 'created', header: 'Created', cell: (w) => <Time iso={w.created_at} /> },
    {
      key: 'actions',
      header: '',
      cell: (w) => (
        <span className="row-actions">
          <WriteButton onClick={() => toggle.mutate(w)} aria-label={`${w.enabled ? 'Disable' : 'Enable'} ${w.url}`}>
            {w.enabled ? 'Disable' : 'Enable'}
          </WriteButton>
          <WriteButton onClick={() => rotate.mutate(w, { onSuccess: setSecret })} aria-label={`Rotate the secret of ${w.url}`}>
            Rotate secret
          </WriteButton>
          <WriteButton className="danger" onClick={() => remove.mutate(w)} aria-label={`Delete ${w.url}`}>
            Delete
          </WriteButton>
        </span>
      ),
    },
  ];
  return (
    <>
      <PageHeader title="Webhooks" />
      <p className="muted">Signed (Standard Webhooks) deliveries of approvals, interventions, kill switches and policy changes. Managing them needs an admin key.</p>
      {secret ? (
        <div className="notice" role="status">
          <p>
            Signing secret of {secret.url} — shown once, copy it now: <code>{secret.secret}</code>
          </p>
          <button type="button" onClick={() => setSecret(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      {failed ? <ProblemMessage error={failed} /> : null}
      <QueryState query={q} what="webhook subscriptions" isEmpty={(p) => p.total === 0} empty="No webhook subscriptions yet.">
        {(p) => (
          <>
            <DataTable caption="Webhook subscriptions, oldest first" columns={columns} rows={p.webhooks} rowKey={(w) => w.id} rowId={(w) => w.id} detail={(w) => <Deliveries hook={w} />} />
            <Pagination total={p.total} skip={p.skip} limit={p.limit} onSkip={setSkip} />
          </>
        )}
      </QueryState>
      <h2>New subscription</h2>
      <CreateForm onCreated={setSecret} />
      <SlackSection />
    </>
  );
}

/**
 * Approvals in Slack, a section of the Webhooks page (`/webhooks`): the organisation's Slack connection
 * (`GET /api/v1/integrations/slack`: its channels and their filters, the bot token's last four characters, that a
 * signing secret is set, when it was set and last replaced — never the token or the secret), a form that saves it
 * (`PUT`, replacing it whole: the bot token and the signing secret are write-only inputs, entered again on every save)
 * and a button that removes it after a confirmation (`DELETE`). The API's 422 field errors show under the input they
 * name. Only an admin reads or changes it: for any other key or role the section says so and its controls are
 * disabled with that reason. The API answers no Slack team or workspace name, so none is shown.
 * Source: docs/notifications.md (Approvals in Slack); docs/console.md (Webhooks).
 */
import { useState, type FormEvent } from 'react';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { ProblemError } from '../../api/client.js';
import type { SlackChannel, SlackConnection } from '../../api/types.js';
import { INTERVENTION_TYPES, RISK_LEVELS } from '../../api/enums.js';
import { useSession } from '../../auth/session.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Cells.js';
import { errorsAt, Field } from '../../components/Field.js';
import { Empty, Loading, ProblemMessage } from '../../components/States.js';
import { WriteButton } from '../../components/WriteButton.js';

const SLACK = '/api/v1/integrations/slack';

/** One channel row of the form: texts as typed (agent ids comma-separated), the chosen types, the lowest risk level ('' = any). */
interface ChannelDraft {
  channel: string;
  agents: string;
  types: string[];
  minRisk: string;
}

const emptyChannel = (): ChannelDraft => ({ channel: '', agents: '', types: [], minRisk: '' });

/** A saved channel as a form row. */
function draftOf(c: SlackChannel): ChannelDraft {
  return { channel: c.channel, agents: (c.filter?.agent_ids ?? []).join(', '), types: [...(c.filter?.intervention_types ?? [])], minRisk: c.filter?.min_risk_level ?? '' };
}

/** A form row as the API's channel: an empty filter part is left out, no filter at all when every part is empty. */
function channelOf(d: ChannelDraft): Record<string, unknown> {
  const agents = d.agents.split(',').map((a) => a.trim()).filter(Boolean);
  const filter = { ...(agents.length ? { agent_ids: agents } : {}), ...(d.types.length ? { intervention_types: d.types } : {}), ...(d.minRisk ? { min_risk_level: d.minRisk } : {}) };
  return { channel: d.channel.trim(), ...(Object.keys(filter).length ? { filter } : {}) };
}

/** A channel's filter in words ("every approval request" when it has none). */
function filterText(c: SlackChannel): string {
  const f = c.filter;
  const parts = [f?.agent_ids ? `agents ${f.agent_ids.join(', ')}` : '', f?.intervention_types ? `types ${f.intervention_types.join(', ')}` : '', f?.min_risk_level ? `risk ${f.min_risk_level} or above` : ''].filter(Boolean);
  return parts.length ? parts.join('; ') : 'every approval request';
}

/** The saved connection: channels with their filters, which secrets are set, when. */
function Connection({ connection }: { connection: SlackConnection }) {
  const columns: Column<SlackChannel>[] = [
    { key: 'channel', header: 'Channel', cell: (c) => <code>{c.channel}</code> },
    { key: 'filter', header: 'Approval requests posted', wrap: true, fill: true, cell: filterText },
  ];
  return (
    <div data-testid="slack-connection">
      <dl className="fields">
        <dt>Bot token</dt>
        <dd data-field="bot_token">set, ending in …{connection.bot_token_hint}</dd>
        <dt>Signing secret</dt>
        <dd data-field="signing_secret">set (never shown)</dd>
        <dt>Connected</dt>
        <dd>
          <Time iso={connection.created_at} />
        </dd>
        <dt>Last replaced</dt>
        <dd>
          <Time iso={connection.updated_at} />
        </dd>
      </dl>
      <DataTable caption="Slack channels approval requests are posted to" columns={columns} rows={connection.channels} rowKey={(c) => c.channel} rowId={(c) => c.channel} />
    </div>
  );
}

/** The form that saves (replaces) the connection; `saved` fills the channels, never the token or the secret. */
function SlackForm({ saved }: { saved: SlackConnection | null }) {
  const [token, setToken] = useState('');
  const [secret, setSecret] = useState('');
  const [channels, setChannels] = useState<ChannelDraft[]>(() => (saved?.channels.length ? saved.channels.map(draftOf) : [emptyChannel()]));
  const save = useApiMutation((api, body: Record<string, unknown>) => api.put<SlackConnection>(SLACK, body), [SLACK]);
  const errors = save.error instanceof ProblemError ? save.error.errors : [];
  const set = (i: number, patch: Partial<ChannelDraft>) => setChannels(channels.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({ bot_token: token.trim(), signing_secret: secret.trim(), channels: channels.map(channelOf) }, { onSuccess: () => (setToken(''), setSecret('')) });
  };
  const rowErrors = (i: number) => errorsAt(errors, `channels.${i}`).filter((e) => !/^body\.channels\.\d+\.(channel|filter\.agent_ids)(\.|$)/.test(e.path));
  return (
    <form className="policy-form" onSubmit={submit} aria-label="Slack connection" noValidate>
      <p className="muted">
        Saving replaces the connection whole: enter the bot token and the signing secret each time (they are stored sealed and never shown again).
      </p>
      <Field id="slack-token" label="Bot token" path="bot_token" errors={errors} hint="xoxb-…, with the chat:write and users:read.email scopes">
        {(a) => <input {...a} type="password" autoComplete="off" className="mono" maxLength={512} value={token} onChange={(e) => setToken(e.target.value)} />}
      </Field>
      <Field id="slack-secret" label="Signing secret" path="signing_secret" errors={errors} hint="The Slack app's signing secret (Basic Information); verifies its button clicks">
        {(a) => <input {...a} type="password" autoComplete="off" className="mono" maxLength={256} value={secret} onChange={(e) => setSecret(e.target.value)} />}
      </Field>
      <fieldset>
        <legend>Channels</legend>
        {channels.map((c, i) => (
          <div key={i} className="rule-row" data-testid={`slack-channel-${i}`}>
            <Field id={`slack-channel-${i}`} label={`Channel ${i + 1}`} path={`channels.${i}.channel`} errors={errors} hint="Id (C0123ABCD) or name; invite the bot">
              {(a) => <input {...a} type="text" maxLength={80} value={c.channel} onChange={(e) => set(i, { channel: e.target.value })} />}
            </Field>
            <Field id={`slack-agents-${i}`} label={`Agents of channel ${i + 1}`} path={`channels.${i}.filter.agent_ids`} errors={errors} hint="Comma-separated; empty: every agent">
              {(a) => <input {...a} type="text" value={c.agents} onChange={(e) => set(i, { agents: e.target.value })} />}
            </Field>
            <div className="form-row">
              <label htmlFor={`slack-risk-${i}`}>{`Lowest risk of channel ${i + 1}`}</label>
              <select id={`slack-risk-${i}`} value={c.minRisk} onChange={(e) => set(i, { minRisk: e.target.value })}>
                <option value="">any</option>
                {RISK_LEVELS.map((r) => (
                  <option key={r} value={r}>
                    {r} or above
                  </option>
                ))}
              </select>
            </div>
            <fieldset className="policy-categories">
              <legend>{`Types of channel ${i + 1} (none ticked: every type)`}</legend>
              <div className="check-row">
                {INTERVENTION_TYPES.map((t) => (
                  <label key={t}>
                    <input type="checkbox" checked={c.types.includes(t)} onChange={(e) => set(i, { types: e.target.checked ? [...c.types, t] : c.types.filter((x) => x !== t) })} /> {t.replace(/_/g, ' ')}
                  </label>
                ))}
              </div>
            </fieldset>
            {rowErrors(i).length ? <span className="field-error">{rowErrors(i).map((e) => `${e.path.replace(/^body\./, '')}: ${e.message}`).join('; ')}</span> : null}
            {channels.length > 1 ? (
              <button type="button" className="link-button" onClick={() => setChannels(channels.filter((_, j) => j !== i))}>
                Remove channel {i + 1}
              </button>
            ) : null}
          </div>
        ))}
        {errors.some((e) => e.path === 'body.channels') ? (
          <span className="field-error">
            {errors
              .filter((e) => e.path === 'body.channels')
              .map((e) => e.message)
              .join('; ')}
          </span>
        ) : null}
        <button type="button" onClick={() => setChannels([...channels, emptyChannel()])} disabled={channels.length >= 20}>
          Add a channel
        </button>
      </fieldset>
      {save.error ? <ProblemMessage error={save.error} /> : null}
      {save.isSuccess && !save.isPending ? (
        <p className="success" role="status">
          Saved: approval requests are posted to {save.data.channels.length === 1 ? '1 channel' : `${save.data.channels.length} channels`}.
        </p>
      ) : null}
      <WriteButton admin type="submit" className="primary" disabled={save.isPending}>
        {saved ? 'Replace the Slack connection' : 'Connect Slack'}
      </WriteButton>
    </form>
  );
}

/** See the module's doc. */
export function SlackSection() {
  const { notAdminReason } = useSession();
  const q = useApiQuery<SlackConnection>(notAdminReason ? null : SLACK, undefined, { retry: false });
  const [confirming, setConfirming] = useState(false);
  const remove = useApiMutation((api, _: void) => api.request('DELETE', SLACK), [SLACK]);
  const none = q.error instanceof ProblemError && q.error.status === 404;
  const saved = q.data && !none ? q.data : null;
  return (
    <section className="panel" aria-labelledby="slack-heading">
      <h2 id="slack-heading">Approvals in Slack</h2>
      <p className="muted">
        Approval requests are posted to these Slack channels with Approve and Reject buttons; a click decides the approval as the member with the Slack user's e-mail. Set the Slack app's interactivity request URL to <code>/api/v1/integrations/slack/interactivity</code> on this platform's address.
      </p>
      {notAdminReason ? (
        <p className="notice" role="note">
          {notAdminReason} Only an admin reads or changes the Slack connection.
        </p>
      ) : q.isPending ? (
        <Loading what="the Slack connection" />
      ) : q.isError && !none ? (
        <ProblemMessage error={q.error} />
      ) : saved ? (
        <>
          <Connection connection={saved} />
          <p className="actions-row">
            <WriteButton admin className="danger" onClick={() => setConfirming(true)}>
              Remove the Slack connection
            </WriteButton>
          </p>
        </>
      ) : (
        <Empty>No Slack connection: approval requests are not posted to Slack.</Empty>
      )}
      {notAdminReason || q.isPending || (q.isError && !none) ? null : <SlackForm key={saved?.updated_at ?? 'new'} saved={saved} />}
      <ConfirmDialog
        open={confirming}
        title="Remove the Slack connection?"
        confirmLabel="Remove"
        danger
        busy={remove.isPending}
        error={remove.error}
        onCancel={() => (setConfirming(false), remove.reset())}
        onConfirm={() => remove.mutate(undefined, { onSuccess: () => setConfirming(false) })}
      >
        <p>The bot token and signing secret are deleted; approval requests are no longer posted to Slack, and messages not yet posted or updated are dropped. Buttons on messages already in Slack stop working. Approvals are still decided in the console and the API.</p>
      </ConfirmDialog>
    </section>
  );
}

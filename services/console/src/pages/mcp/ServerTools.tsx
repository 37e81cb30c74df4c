/**
 * One proxied MCP server's tools as the platform pinned them, and its recent calls, on the Tool gateway page
 * (`/mcp?server=<name>`). Source: docs/mcp-proxy.md (Tool pinning), docs/console.md (Tool gateway).
 * - The pins (`GET /api/v1/mcp/servers/{name}/tools`): each tool's status (pinned, changed, new), description and
 *   hash as listed now; the tools awaiting acceptance first, each with its description and input schema as accepted
 *   and as listed now, and an Accept button (write role; `POST /api/v1/mcp/servers/{name}/tools/{tool}/accept` with
 *   the hash shown, so a tool that changed again since is refused with 409).
 * - Standing for an agent (`?agent_id=`, a filter bound to the URL): each tool's standing for that agent beside its
 *   pin (`GET /api/v1/mcp/servers/{name}/tools?agent_id=`): allowed, denied or escalates by name, the deciding
 *   policy, and whether its pin holds its calls.
 * - Recent calls: the runs the proxy recorded for the server (named `mcp:<server>`, from `GET /api/v1/runs`, the
 *   newest 200 read; only the agent's with `?agent_id=`), each linking to its actions; and per tool, a link to its
 *   interventions (`action_name` = action prefix + tool).
 */
import { Link } from 'react-router';
import type { McpServer, McpToolPin, McpToolPinList, McpToolStanding, RunPage } from '@agp/contracts';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { DataTable } from '../../components/DataTable.js';
import { FilterBar, type FilterField } from '../../components/FilterBar.js';
import { count, relative, usd, when } from '../../components/format.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { ProblemMessage, QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { WriteButton } from '../../components/WriteButton.js';
import { useUrlFilters } from '../../components/url.js';

/** How many of the newest runs are read to find the server's. */
const RUNS_READ = 200;

/** The agent picker: the standing shown is this agent's (any agent id, registered or not). */
const AGENT_FILTER: FilterField[] = [{ name: 'agent_id', label: 'Standing for agent', kind: 'text', placeholder: 'agent id' }];

/** A tool's standing for the picked agent: the decision by name, the policy deciding it, and whether its pin holds it. */
function Standing({ standing }: { standing: McpToolStanding }) {
  return (
    <span data-testid={`standing-${standing.action}`}>
      <Tag value={standing.decision} />
      {standing.policy ? (
        <>
          {' by '}
          <Link to={`/policies/${encodeURIComponent(standing.policy.id)}`}>{standing.policy.name}</Link>
        </>
      ) : null}
      {standing.held ? <span className="muted"> · held until accepted</span> : null}
    </span>
  );
}

/** The first 12 hex digits of a hash, for display. */
const short = (hash: string | null) => (hash ? `${hash.slice(0, 12)}…` : '—');

/** A held tool: what was accepted and what the upstream lists now, and Accept. */
function PendingTool({ server, pin }: { server: string; pin: McpToolPin }) {
  const accept = useApiMutation<void, McpToolPin>((api) => api.post(`/api/v1/mcp/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(pin.tool)}/accept`, { hash: pin.hash }), [`/api/v1/mcp/servers/${server}/tools`]);
  return (
    <div className="panel" data-testid={`pending-${pin.tool}`}>
      <h4>
        <code>{pin.tool}</code> <Tag value={pin.status} /> <span className="muted">hash {short(pin.hash)}</span>
      </h4>
      <p className="muted">
        {pin.status === 'new' ? 'Listed after the tools were pinned, never accepted: its calls are refused until it is.' : 'Its description or input schema changed since it was accepted: its calls are refused until the change is accepted.'}
      </p>
      <dl className="fields">
        {pin.pinned_description !== null ? (
          <>
            <dt>Description as accepted</dt>
            <dd data-testid={`pinned-description-${pin.tool}`}>
              <LongText text={pin.pinned_description || '(none)'} foldAt={600} />
            </dd>
          </>
        ) : null}
        <dt>Description listed now</dt>
        <dd data-testid={`listed-description-${pin.tool}`}>
          <LongText text={pin.description || '(none)'} foldAt={600} />
        </dd>
      </dl>
      <details>
        <summary>Input schema{pin.pinned_input_schema ? ': as accepted, and listed now' : ' listed now'}</summary>
        {pin.pinned_input_schema ? <JsonView value={pin.pinned_input_schema} /> : null}
        <JsonView value={pin.input_schema} />
      </details>
      <div className="actions-row">
        <WriteButton className="primary" disabled={accept.isPending} onClick={() => accept.mutate()}>
          {accept.isPending ? 'Accepting…' : `Accept ${pin.tool}`}
        </WriteButton>
        <span className="muted">Accepting trusts what the server lists now; calls flow again within seconds.</span>
      </div>
      {accept.isError ? <ProblemMessage error={accept.error} /> : null}
    </div>
  );
}

/** The pins of `server`: held tools first, then every tool, with its standing for `agentId` when one is picked. */
function Pins({ server, agentId }: { server: McpServer; agentId: string }) {
  const q = useApiQuery<McpToolPinList>(`/api/v1/mcp/servers/${encodeURIComponent(server.name)}/tools`, agentId ? { agent_id: agentId } : undefined);
  return (
    <QueryState query={q} what={`the tools of ${server.name}`} isEmpty={(d) => d.tools.length === 0} empty="The platform has not read this server's tool list yet: its tools are pinned when the hosted proxy first reaches it.">
      {(d) => {
        const pending = d.tools.filter((t) => t.listed && t.status !== 'pinned');
        return (
          <>
            <h4>
              Awaiting acceptance (<span data-testid="awaiting-count">{count(d.awaiting_acceptance)}</span>)
            </h4>
            {pending.length === 0 ? <p className="muted">Every listed tool is as accepted.</p> : pending.map((p) => <PendingTool key={p.tool} server={server.name} pin={p} />)}
            <DataTable
              caption={`Tools of ${server.name}`}
              rows={d.tools}
              rowKey={(t) => t.tool}
              columns={[
                { key: 'tool', header: 'Tool', cell: (t) => <code data-testid={`tool-${t.tool}`}>{t.tool}</code> },
                { key: 'status', header: 'Pin', cell: (t) => <span data-testid={`status-${t.tool}`}>{t.listed ? <Tag value={t.status} /> : 'no longer listed'}</span> },
                ...(agentId ? [{ key: 'standing', header: `Standing for ${agentId}`, cell: (t: McpToolPin) => (t.standing ? <Standing standing={t.standing} /> : '—') }] : []),
                { key: 'desc', header: 'Description', wrap: true, cell: (t) => <LongText text={t.description} foldAt={160} /> },
                { key: 'hash', header: 'Hash', cell: (t) => <code title={t.hash}>{short(t.hash)}</code> },
                { key: 'accepted', header: 'Accepted', cell: (t) => when(t.accepted_at) },
                { key: 'calls', header: 'Interventions', cell: (t) => <Link to={`/interventions?action_name=${encodeURIComponent(server.action_prefix + t.tool)}`}>{server.action_prefix + t.tool}</Link> },
              ]}
            />
            <p className="muted">Tool list last read {d.seen_at ? relative(d.seen_at) : 'never'}.</p>
          </>
        );
      }}
    </QueryState>
  );
}

/** The server's recent runs through the proxy (one per MCP session or `AGP-Run-Id`), newest first; only `agentId`'s when one is picked. */
function RecentCalls({ server, agentId }: { server: McpServer; agentId: string }) {
  const q = useApiQuery<RunPage>('/api/v1/runs', { limit: RUNS_READ, agent_id: agentId || undefined });
  const name = `mcp:${server.name}`;
  return (
    <QueryState query={q} what="runs" isEmpty={(d) => !d.runs.some((r) => r.name === name)} empty={`No run through the proxy among the newest ${RUNS_READ} runs.`}>
      {(d) => (
        <DataTable
          caption={`Recent runs through ${server.name}`}
          rows={d.runs.filter((r) => r.name === name)}
          rowKey={(r) => r.id}
          columns={[
            { key: 'run', header: 'Run', cell: (r) => <Link to={`/runs/${encodeURIComponent(r.id)}`}>{r.id}</Link> },
            { key: 'agent', header: 'Agent', cell: (r) => r.agent_id },
            { key: 'status', header: 'Status', cell: (r) => <Tag value={r.status} /> },
            { key: 'calls', header: 'Calls', numeric: true, cell: (r) => <span data-testid={`run-calls-${r.id}`}>{count(r.action_count)}</span> },
            { key: 'cost', header: 'Cost', numeric: true, cell: (r) => usd(r.cost_usd) },
            { key: 'started', header: 'Started', cell: (r) => relative(r.started_at) },
          ]}
        />
      )}
    </QueryState>
  );
}

/** The selected server's tools (pins), each tool's standing for the picked agent, and recent calls. */
export function ServerTools({ server }: { server: McpServer }) {
  const { values, set } = useUrlFilters(['agent_id'] as const);
  return (
    <section className="panel" aria-labelledby="server-tools-heading" data-testid="server-tools">
      <h3 id="server-tools-heading">
        Tools of <code>{server.name}</code>
      </h3>
      <p className="muted">
        The first tool list the platform reads after registration is pinned (a hash of each tool's name, description and input schema). A tool whose description or schema
        changes later, or that appears later, is held: left out of the agent's tool list and its calls refused, recorded as an intervention, until accepted here.
      </p>
      <p className="muted">
        Pick an agent to see each tool's standing for it: denied (a policy blocks the action by name; hidden from the agent when the server hides denied tools), escalates
        (every call waits for approval) or allowed by name, and whether its pin holds its calls. Budgets, rate limits, guardrails and kill switches are decided per call.
      </p>
      <FilterBar fields={AGENT_FILTER} values={values} onChange={(name, value) => set({ [name]: value })} onClear={() => set({ agent_id: '' })} />
      <Pins server={server} agentId={values.agent_id} />
      <h4>Recent calls{values.agent_id ? ` of ${values.agent_id}` : ''}</h4>
      <RecentCalls server={server} agentId={values.agent_id} />
    </section>
  );
}

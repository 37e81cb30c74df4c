/**
 * Tool gateway (`/mcp`): what the platform serves to MCP clients and a way to try it, through the REST facade.
 * - Live counts from the un-prefixed lists `GET /mcp/tools`, `/mcp/resources` (resources, with templates beside them)
 *   and `/mcp/prompts`.
 * - Each tool's `input_schema` as a form ({@link SchemaForm}); "Try it" calls `POST /api/v1/mcp/call` and shows the
 *   envelope `{success, data, error, metadata}` with its HTTP status, an error envelope included. Tools with
 *   `changes_state` are disabled for a read key (the API would answer 403 `forbidden`).
 * - Resources read inline (`GET /api/v1/mcp/resources/{uri}`, the URI percent-encoded), templates filled in first;
 *   prompts rendered with their arguments (`POST /api/v1/mcp/prompts/{name}`).
 * - The MCP endpoint (`<origin>/api/v1/mcp`) and a client config to copy, with a placeholder for the key unless the
 *   user ticks to include theirs.
 * - The organisation's proxied upstream MCP servers (`GET /api/v1/mcp/servers`): URL, action prefix, approval mode,
 *   timeout, per-tool costs (USD) and header names (never values), each with the `agp mcp proxy` command that governs
 *   an agent's calls to it; the selected one's (`?server=`) pinned tools, changes awaiting acceptance with Accept, each
 *   tool's standing for an agent picked (`?agent_id=`), and recent calls ({@link ServerTools}).
 * `/mcp/*` is the API, so this page has no sub-paths: the selected tool, resource and prompt are search parameters
 * (`?tool=`, `?resource=`, `?prompt=`, `?server=`). Source: spec §Tool gateway.
 */
import { useMemo, useState, type ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import type { McpPromptDescriptor, McpPromptResult, McpResourceContent, McpResourceDescriptor, McpResourceTemplateDescriptor, McpServerPage, McpToolDescriptor, McpToolEnvelope } from '@agp/contracts';
import { PageHeader } from '../../components/PageHeader.js';
import { useSession } from '../../auth/session.js';
import { ProblemError } from '../../api/client.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { DataTable } from '../../components/DataTable.js';
import { count, plural } from '../../components/format.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { Empty, ProblemMessage, QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { WriteButton } from '../../components/WriteButton.js';
import { StatCards } from '../../components/StatCard.js';
import { formArguments, formFields, SchemaForm, type FormValues, type SchemaNode } from './SchemaForm.js';
import { ServerTools } from './ServerTools.js';
import '../evals/areas.css';

/** The placeholder the client config shows instead of the key. */
const KEY_PLACEHOLDER = 'agp_your_read_or_write_key';

/** `?name=value` on top of the current search parameters (value '' removes it), for a link. */
function useParamHref(): (changes: Record<string, string>) => string {
  const [params] = useSearchParams();
  return (changes) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    return `?${next.toString()}`;
  };
}

/** The MCP endpoint of this platform and a Streamable HTTP client config to copy. */
function Endpoint() {
  const { key } = useSession();
  const [withKey, setWithKey] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const url = `${window.location.origin}/api/v1/mcp`;
  const config = JSON.stringify({ mcpServers: { agp: { type: 'http', url, headers: { Authorization: `Bearer ${withKey && key ? key : KEY_PLACEHOLDER}` } } } }, null, 2);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(config);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the text above and copy it.');
    }
  };
  return (
    <section className="panel" aria-labelledby="endpoint-heading">
      <h2 id="endpoint-heading">Endpoint</h2>
      <dl className="fields">
        <dt>MCP endpoint (Streamable HTTP)</dt>
        <dd>
          <code data-testid="mcp-endpoint">{url}</code>
        </dd>
        <dt>Authentication</dt>
        <dd>
          <code>Authorization: Bearer &lt;key&gt;</code>, the same keys as the REST API; a read key cannot call tools that change state.
        </dd>
      </dl>
      <h3>Client config</h3>
      <p className="muted">For a client that takes a URL and headers (Cursor's mcp.json; VS Code's servers take the same url, type and headers).</p>
      <pre className="long-text-body mono" data-testid="mcp-config">
        {config}
      </pre>
      <div className="actions-row">
        <button type="button" onClick={() => void copy()}>
          Copy config
        </button>
        <label>
          <input type="checkbox" checked={withKey} onChange={(e) => setWithKey(e.target.checked)} /> Include my API key in the config
        </label>
        <span role="status" className="muted">
          {copied ?? ''}
        </span>
      </div>
      {withKey ? <p className="notice">The config above now holds your key: keep it out of shared files and screenshots.</p> : null}
    </section>
  );
}

/** One count card, linking to its section. */
function CountCard({ label, value, href, testid, note }: { label: string; value: ReactNode; href: string; testid: string; note?: ReactNode }) {
  return (
    <div className="card">
      <p className="card-label">
        <a href={href}>{label}</a>
      </p>
      <p className="card-value" data-testid={testid}>
        {value}
      </p>
      {note ? <p className="card-label">{note}</p> : null}
    </div>
  );
}

/** A list's length for a count card: '…' while loading, 'error' when it failed (the section below shows why). */
function countOf<T>(q: UseQueryResult<T, ProblemError>, len: (d: T) => number): string {
  if (q.isPending) return '…';
  if (q.isError) return 'error';
  return count(len(q.data));
}

/** Whether a thrown error's body is a tool-call envelope (the API answers a failed call with one, not a problem). */
function isEnvelope(v: unknown): v is McpToolEnvelope {
  return !!v && typeof v === 'object' && 'success' in v && 'error' in v;
}

/** A tool call's answer: its HTTP status and envelope. */
interface CallAnswer {
  status: number;
  envelope: McpToolEnvelope;
}

/** The envelope of a call, with its status and outcome in words. */
function Envelope({ answer }: { answer: CallAnswer }) {
  const e = answer.envelope;
  return (
    <div className="panel" data-testid="call-result" data-success={e.success ? 'true' : 'false'}>
      <h4>
        Result: HTTP {answer.status} · {e.success ? 'success' : `error ${e.error?.code ?? ''}`} <span className="muted">({e.metadata?.execution_time_ms ?? '—'} ms)</span>
      </h4>
      {e.error ? (
        <div className="problem" role="alert" data-testid="call-error">
          <p className="problem-title">
            <strong>{e.error.code}</strong>
          </p>
          <p className="problem-detail">{e.error.message}</p>
        </div>
      ) : null}
      <JsonView value={e} />
    </div>
  );
}

/** The selected tool: its description, the form of its input schema and "Try it". */
function ToolTry({ tool }: { tool: McpToolDescriptor }) {
  const fields = useMemo(() => formFields(tool.input_schema as SchemaNode), [tool]);
  const [values, setValues] = useState<FormValues>({});
  const [local, setLocal] = useState<string | null>(null);
  const built = formArguments(fields, values);
  const call = useApiMutation<Record<string, unknown>, CallAnswer>(
    async (api, args) => {
      try {
        const r = await api.request<McpToolEnvelope>('POST', '/api/v1/mcp/call', { body: { tool_name: tool.name, arguments: args } });
        return { status: r.status, envelope: r.body };
      } catch (err) {
        if (err instanceof ProblemError && isEnvelope(err.body)) return { status: err.status, envelope: err.body };
        throw err;
      }
    },
    tool.changes_state ? ['/api/v1', '/mcp'] : [],
  );
  const submit = () => {
    if ('error' in built) {
      setLocal(built.error);
      return;
    }
    setLocal(null);
    call.mutate(built.arguments);
  };
  const label = call.isPending ? 'Calling…' : `Try ${tool.name}`;
  return (
    <section className="panel" aria-labelledby="tool-heading" data-testid="tool-panel">
      <h3 id="tool-heading">
        {tool.title} <code>{tool.name}</code> {tool.changes_state ? <Tag value="changes_state" /> : <Tag value="read_only" />}
      </h3>
      <LongText text={tool.description} foldAt={800} />
      <form
        className="area-form"
        aria-label={`Arguments of ${tool.name}`}
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <SchemaForm fields={fields} values={values} onChange={(name, v) => setValues((s) => ({ ...s, [name]: v }))} />
        <details>
          <summary>Request body</summary>
          <JsonView value={{ tool_name: tool.name, arguments: 'arguments' in built ? built.arguments : '(invalid)' }} />
        </details>
        <div className="actions-row">
          {tool.changes_state ? (
            <WriteButton type="submit" className="primary" disabled={call.isPending}>
              {label}
            </WriteButton>
          ) : (
            <button type="submit" className="primary" disabled={call.isPending}>
              {label}
            </button>
          )}
          {tool.changes_state ? <span className="muted">This tool changes data: it needs a write key.</span> : null}
        </div>
      </form>
      {local ? <ProblemMessage error={new Error(local)} /> : null}
      {call.isError ? <ProblemMessage error={call.error} /> : null}
      {call.data ? <Envelope answer={call.data} /> : null}
    </section>
  );
}

/** The tools: the selected one's form, then the list. */
function Tools({ tools, selected }: { tools: McpToolDescriptor[]; selected: string }) {
  const href = useParamHref();
  const tool = tools.find((t) => t.name === selected);
  return (
    <section id="tools" aria-labelledby="tools-heading">
      <h2 id="tools-heading">Tools ({count(tools.length)})</h2>
      {selected && !tool ? <Empty>There is no tool named "{selected}".</Empty> : null}
      {tool ? <ToolTry key={tool.name} tool={tool} /> : <p className="muted">Pick a tool to see its arguments and try it.</p>}
      <DataTable
        caption="Tools"
        rows={tools}
        rowKey={(t) => t.name}
        columns={[
          {
            key: 'name',
            header: 'Tool',
            cell: (t) => (
              <>
                <Link to={href({ tool: t.name })} className="nowrap" aria-current={t.name === selected ? 'true' : undefined}>
                  {t.name}
                </Link>
                <span className="sub-line">{t.title}</span>
              </>
            ),
          },
          { key: 'state', header: 'Changes state', cell: (t) => (t.changes_state ? 'yes' : 'no') },
          { key: 'args', header: 'Arguments', cell: (t) => count(Object.keys(t.input_schema.properties ?? {}).length), numeric: true },
          { key: 'desc', header: 'Description', wrap: true, cell: (t) => <LongText text={t.description} foldAt={160} /> },
        ]}
      />
    </section>
  );
}

/** A resource's content, read inline. */
function ResourceContent({ uri }: { uri: string }) {
  const q = useApiQuery<McpResourceContent>(`/api/v1/mcp/resources/${encodeURIComponent(uri)}`);
  return (
    <section className="panel" aria-labelledby="resource-heading" data-testid="resource-panel">
      <h3 id="resource-heading">
        <code>{uri}</code>
      </h3>
      <QueryState query={q} what={`resource ${uri}`}>
        {(r) => (
          <>
            <p className="muted">{r.mime_type}</p>
            <JsonView value={r.data} />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** The names of a URI template's `{variables}`. */
const templateVars = (t: string) => [...t.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

/** A resource template with one input per variable, read once filled in. */
function TemplateForm({ template }: { template: McpResourceTemplateDescriptor }) {
  const vars = templateVars(template.uri_template);
  const [values, setValues] = useState<Record<string, string>>({});
  const [, setParams] = useSearchParams();
  const uri = vars.reduce((u, v) => u.replace(`{${v}}`, encodeURIComponent(values[v]?.trim() ?? '')), template.uri_template);
  const missing = vars.some((v) => !values[v]?.trim());
  return (
    <form
      className="filter-bar"
      aria-label={`Read ${template.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        setParams((p) => {
          const next = new URLSearchParams(p);
          next.set('resource', uri);
          return next;
        });
      }}
    >
      <p className="filter">
        <strong>{template.name}</strong> <code>{template.uri_template}</code>
        <span className="muted">{template.description}</span>
      </p>
      {vars.map((v) => (
        <div className="filter" key={v}>
          <label htmlFor={`tpl-${template.uri_template}-${v}`}>{v}</label>
          <input id={`tpl-${template.uri_template}-${v}`} value={values[v] ?? ''} onChange={(e) => setValues((s) => ({ ...s, [v]: e.target.value }))} />
        </div>
      ))}
      <div className="filter filter-actions">
        <button type="submit" disabled={missing}>
          Read
        </button>
      </div>
    </form>
  );
}

/** The resources and templates, and the selected resource's content. */
function Resources({ resources, templates, selected }: { resources: McpResourceDescriptor[]; templates: McpResourceTemplateDescriptor[]; selected: string }) {
  const href = useParamHref();
  return (
    <section id="resources" aria-labelledby="resources-heading">
      <h2 id="resources-heading">Resources ({count(resources.length)})</h2>
      {selected ? <ResourceContent key={selected} uri={selected} /> : null}
      <DataTable
        caption="Resources"
        rows={resources}
        rowKey={(r) => r.uri}
        columns={[
          {
            key: 'uri',
            header: 'URI',
            cell: (r) => (
              <Link to={href({ resource: r.uri })} aria-label={`Read ${r.uri}`}>
                {r.uri}
              </Link>
            ),
          },
          { key: 'name', header: 'Name', cell: (r) => r.name },
          { key: 'mime', header: 'Type', cell: (r) => r.mime_type },
          { key: 'desc', header: 'Description', wrap: true, cell: (r) => <LongText text={r.description} foldAt={160} /> },
        ]}
      />
      <h3>Resource templates ({count(templates.length)})</h3>
      {templates.length === 0 ? <Empty>No resource templates.</Empty> : templates.map((t) => <TemplateForm key={t.uri_template} template={t} />)}
    </section>
  );
}

/** The selected prompt: its arguments as a form, and the rendered prompt. */
function PromptTry({ prompt }: { prompt: McpPromptDescriptor }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const render = useApiMutation<Record<string, string>, McpPromptResult>((api, args) => api.post(`/api/v1/mcp/prompts/${encodeURIComponent(prompt.name)}`, { arguments: args }));
  return (
    <section className="panel" aria-labelledby="prompt-heading" data-testid="prompt-panel">
      <h3 id="prompt-heading">
        <code>{prompt.name}</code>
      </h3>
      <LongText text={prompt.description} />
      <form
        className="area-form"
        aria-label={`Arguments of ${prompt.name}`}
        onSubmit={(e) => {
          e.preventDefault();
          render.mutate(Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '')));
        }}
      >
        {prompt.arguments.length === 0 ? <p className="muted">This prompt takes no arguments.</p> : null}
        {prompt.arguments.map((a) => (
          <div className="form-row" key={a.name}>
            <label htmlFor={`prompt-arg-${a.name}`}>
              <code>{a.name}</code>
              {a.required ? (
                <>
                  <span aria-hidden="true"> *</span>
                  <span className="visually-hidden"> (required)</span>
                </>
              ) : null}
            </label>
            <input
              id={`prompt-arg-${a.name}`}
              aria-required={a.required || undefined}
              aria-describedby={`prompt-arg-${a.name}-help`}
              value={values[a.name] ?? ''}
              onChange={(e) => setValues((s) => ({ ...s, [a.name]: e.target.value }))}
            />
            <small id={`prompt-arg-${a.name}-help`} className="muted">
              {a.description}
            </small>
          </div>
        ))}
        <div className="actions-row">
          <button type="submit" className="primary" disabled={render.isPending}>
            {render.isPending ? 'Rendering…' : 'Render prompt'}
          </button>
        </div>
      </form>
      {render.isError ? <ProblemMessage error={render.error} /> : null}
      {render.data ? (
        <div data-testid="prompt-result">
          <h4>Summary</h4>
          <LongText text={render.data.data.summary} />
          <h4>Messages</h4>
          {render.data.messages.map((m, i) => (
            <div key={i} className="panel">
              <p className="muted">{m.role}</p>
              <LongText text={m.content.text} foldAt={1500} />
            </div>
          ))}
          <h4>Details</h4>
          <JsonView value={render.data.data.details} />
        </div>
      ) : null}
    </section>
  );
}

/** The prompts, and the selected one's form. */
function Prompts({ prompts, selected }: { prompts: McpPromptDescriptor[]; selected: string }) {
  const href = useParamHref();
  const prompt = prompts.find((p) => p.name === selected);
  return (
    <section id="prompts" aria-labelledby="prompts-heading">
      <h2 id="prompts-heading">Prompts ({count(prompts.length)})</h2>
      {selected && !prompt ? <Empty>There is no prompt named "{selected}".</Empty> : null}
      {prompt ? <PromptTry key={prompt.name} prompt={prompt} /> : null}
      <DataTable
        caption="Prompts"
        rows={prompts}
        rowKey={(p) => p.name}
        columns={[
          { key: 'name', header: 'Prompt', cell: (p) => <Link to={href({ prompt: p.name })} className="nowrap">{p.name}</Link> },
          { key: 'args', header: 'Arguments', wrap: true, cell: (p) => (p.arguments.length ? p.arguments.map((a) => `${a.name}${a.required ? ' *' : ''}`).join(', ') : '—') },
          { key: 'desc', header: 'Description', wrap: true, cell: (p) => <LongText text={p.description} foldAt={160} /> },
        ]}
      />
    </section>
  );
}

/** The command that runs the local governed proxy in front of registered server `s` (the key from AGP_KEY). */
function localProxyCommand(s: { name: string; url: string; action_prefix: string }): string {
  const prefix = s.action_prefix === `${s.name}.` ? '' : ` --action-prefix '${s.action_prefix}'`;
  return `npx agp mcp proxy --server ${s.name} --upstream-url ${s.url}${prefix} --agent <agent id>`;
}

/** The organisation's registered upstream MCP servers, which the MCP proxy governs; the selected one's tools and calls. */
function ProxiedServers({ selected }: { selected: string }) {
  const href = useParamHref();
  const q = useApiQuery<McpServerPage>('/api/v1/mcp/servers', { limit: 100 });
  return (
    <section aria-labelledby="servers-heading">
      <h2 id="servers-heading">Proxied MCP servers</h2>
      <p className="muted">
        Upstream MCP servers registered for the governed proxy (<code>POST /api/v1/mcp/servers</code>, or the <code>register_mcp_server</code> tool). Each
        tool call through the proxy is decided as the action <code>&lt;action prefix&gt;&lt;tool&gt;</code>. Header values are kept sealed and never shown.
      </p>
      <QueryState query={q} what="MCP servers" isEmpty={(d) => d.servers.length === 0} empty="No upstream MCP server is registered.">
        {(d) => (
          <>
          <DataTable
            caption="Proxied MCP servers"
            rows={d.servers}
            rowKey={(s) => s.name}
            columns={[
              {
                key: 'name',
                header: 'Server',
                cell: (s) => (
                  <Link to={href({ server: s.name })} className="nowrap" data-testid={`server-${s.name}`} aria-current={s.name === selected ? 'true' : undefined}>
                    {s.name}
                  </Link>
                ),
              },
              { key: 'url', header: 'Upstream URL', wrap: true, cell: (s) => <code>{s.url}</code> },
              { key: 'prefix', header: 'Action prefix', cell: (s) => <code>{s.action_prefix}</code> },
              { key: 'approval', header: 'Approval', cell: (s) => <Tag value={s.approval} /> },
              { key: 'timeout', header: 'Timeout', cell: (s) => `${count(s.timeout_ms)} ms` },
              {
                key: 'costs',
                header: 'Tool costs (USD)',
                wrap: true,
                cell: (s) => (Object.keys(s.tool_costs_usd).length ? Object.entries(s.tool_costs_usd).map(([t, c]) => `${t}: ${c}`).join(', ') : '—'),
              },
              { key: 'headers', header: 'Headers', wrap: true, cell: (s) => (s.header_names.length ? s.header_names.join(', ') : '—') },
              { key: 'hide', header: 'Hides denied tools', cell: (s) => (s.hide_denied_tools ? 'yes' : 'no') },
              { key: 'cmd', header: 'Local proxy', wrap: true, cell: (s) => <code data-testid={`proxy-command-${s.name}`}>{localProxyCommand(s)}</code> },
            ]}
          />
          {selected && !d.servers.some((s) => s.name === selected) ? <Empty>There is no server named "{selected}".</Empty> : null}
          {d.servers.filter((s) => s.name === selected).map((s) => <ServerTools key={s.name} server={s} />)}
          {selected ? null : <p className="muted">Pick a server to see its tools, the changes awaiting acceptance and its recent calls.</p>}
          </>
        )}
      </QueryState>
    </section>
  );
}

/** The Tool gateway page. */
export function McpPage() {
  const [params] = useSearchParams();
  const tools = useApiQuery<{ tools: McpToolDescriptor[] }>('/mcp/tools');
  const resources = useApiQuery<{ resources: McpResourceDescriptor[]; resource_templates: McpResourceTemplateDescriptor[] }>('/mcp/resources');
  const prompts = useApiQuery<{ prompts: McpPromptDescriptor[] }>('/mcp/prompts');
  return (
    <>
      <PageHeader title="Tool gateway">
        The tools, resources and prompts the platform serves to MCP clients at <code>{window.location.origin}/api/v1/mcp</code>, live from the gateway; try any of them here, or{' '}
        <a href="#endpoint-heading">copy a client config</a>.
      </PageHeader>
      <StatCards label="Live counts">
        <CountCard label="Tools" href="#tools" testid="count-tools" value={countOf(tools, (d) => d.tools.length)} />
        <CountCard
          label="Resources"
          href="#resources"
          testid="count-resources"
          value={countOf(resources, (d) => d.resources.length)}
          note={resources.data ? `plus ${plural(resources.data.resource_templates.length, 'template')}` : undefined}
        />
        <CountCard label="Prompts" href="#prompts" testid="count-prompts" value={countOf(prompts, (d) => d.prompts.length)} />
      </StatCards>
      <QueryState query={tools} what="tools" isEmpty={(d) => d.tools.length === 0} empty="The gateway lists no tools.">
        {(d) => <Tools tools={d.tools} selected={params.get('tool') ?? ''} />}
      </QueryState>
      <QueryState query={resources} what="resources" isEmpty={(d) => d.resources.length === 0 && d.resource_templates.length === 0} empty="The gateway lists no resources.">
        {(d) => <Resources resources={d.resources} templates={d.resource_templates} selected={params.get('resource') ?? ''} />}
      </QueryState>
      <QueryState query={prompts} what="prompts" isEmpty={(d) => d.prompts.length === 0} empty="The gateway lists no prompts.">
        {(d) => <Prompts prompts={d.prompts} selected={params.get('prompt') ?? ''} />}
      </QueryState>
      <ProxiedServers selected={params.get('server') ?? ''} />
      <Endpoint />
    </>
  );
}

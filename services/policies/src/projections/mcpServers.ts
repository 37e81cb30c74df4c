import type { McpServer } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { NO_MCP_SERVER, evolveMcpServer, type McpServerState } from '../mcpservers/mcpserver.js';

const key = (org: string, name: string) => JSON.stringify([org, name]);
const parse = <T>(doc: unknown): T => (typeof doc === 'string' ? JSON.parse(doc) : doc) as T;

/**
 * Apply McpServerRegistered, McpServerUpdated and McpServerDeleted events to `agp_mcp_servers` inside the projection's
 * transaction: the rows the batch touches are read with one query, each event folded with {@link evolveMcpServer}
 * (the decider's fold), then the registered ones upserted (record and sealed headers) and the deleted ones removed.
 */
export async function applyMcpServerEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const keys = new Map<string, [string, string]>();
  for (const e of events) {
    const org = e.metadata.organization_id;
    const name = String((e.data as { name: string }).name);
    keys.set(key(org, name), [org, name]);
  }
  const states = new Map<string, McpServerState>();
  const { rows } = await tx.query<{ organization_id: string; name: string; doc: unknown; sealed_headers: string | null }>(
    `SELECT s.organization_id, s.name, s.doc, s.sealed_headers FROM agp_mcp_servers s
     JOIN jsonb_to_recordset($1::jsonb) AS k(o text, n text) ON s.organization_id = k.o AND s.name = k.n FOR UPDATE OF s`,
    [JSON.stringify([...keys.values()].map(([o, n]) => ({ o, n })))],
  );
  for (const r of rows) {
    const server = parse<McpServer>(r.doc);
    states.set(key(r.organization_id, r.name), { version: server.version, record: { organization_id: r.organization_id, server, sealed_headers: r.sealed_headers } });
  }
  for (const e of events) {
    const k = key(e.metadata.organization_id, String((e.data as { name: string }).name));
    states.set(k, evolveMcpServer(states.get(k) ?? NO_MCP_SERVER, e));
  }
  const live = [...states.values()].flatMap((s) => (s.record ? [s.record] : []));
  const gone = [...states.entries()].filter(([, s]) => !s.record).map(([k]) => JSON.parse(k) as [string, string]);
  if (live.length) {
    await tx.query(
      `INSERT INTO agp_mcp_servers (organization_id, name, doc, sealed_headers)
       SELECT x.o, x.doc->>'name', x.doc, x.s FROM jsonb_to_recordset($1::jsonb) AS x(o text, doc jsonb, s text)
       ON CONFLICT (organization_id, name) DO UPDATE SET doc = excluded.doc, sealed_headers = excluded.sealed_headers`,
      [JSON.stringify(live.map((r) => ({ o: r.organization_id, doc: r.server, s: r.sealed_headers })))],
    );
  }
  if (gone.length) {
    await tx.query(
      `DELETE FROM agp_mcp_servers s USING jsonb_to_recordset($1::jsonb) AS k(o text, n text) WHERE s.organization_id = k.o AND s.name = k.n`,
      [JSON.stringify(gone.map(([o, n]) => ({ o, n })))],
    );
  }
}

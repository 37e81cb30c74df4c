import { describe, expect, it } from 'vitest';
import { McpServerEvents, McpServerRegistrationSchema } from '@agp/contracts';
import { AgpError } from '@agp/runtime';
import { NO_MCP_SERVER, decideDeleteMcpServer, decideRegisterMcpServer, decideUpdateMcpServer, evolveMcpServer, mcpServerStream, type McpServerState } from './mcpserver.js';

const T0 = '2026-11-22T10:00:00.000Z';
const T1 = '2026-11-22T11:00:00.000Z';
const stored = (d: { type: string; data: object }, v: number) => ({ type: d.type, data: d.data as Record<string, unknown>, stream_version: v, metadata: { organization_id: 'acme', actor: 'key:k', schema_version: 1 } });
const sealed = { header_names: ['Authorization'], sealed_headers: 'agp1.k.iv.body' };
const statusOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as AgpError).status;
  }
  return null;
};

describe('the MCP server decider', () => {
  it('registers with defaults, refuses a taken name, updates the whole settings, keeps headers a patch leaves out, deletes', () => {
    const body = McpServerRegistrationSchema.parse({ name: 'github', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'x' } });
    const reg = decideRegisterMcpServer(NO_MCP_SERVER, body, sealed, T0);
    expect(reg).toEqual({ type: McpServerEvents.Registered, data: { name: 'github', url: 'https://mcp.example.com/mcp', action_prefix: 'github.', tool_costs_usd: {}, hide_denied_tools: false, timeout_ms: 30000, approval: 'platform', ...sealed, at: T0 } });
    const s1: McpServerState = evolveMcpServer(NO_MCP_SERVER, stored(reg, 1));
    expect(s1.record).toMatchObject({ organization_id: 'acme', sealed_headers: sealed.sealed_headers, server: { name: 'github', header_names: ['Authorization'], created_at: T0, updated_at: T0, version: 1 } });
    expect(statusOf(() => decideRegisterMcpServer(s1, body, sealed, T1))).toBe(409);

    expect(decideUpdateMcpServer(s1, 'github', { timeout_ms: 30000 }, null, null, T1)).toBeNull();
    expect(statusOf(() => decideUpdateMcpServer(s1, 'github', { timeout_ms: 1000 }, 2, null, T1))).toBe(409);
    const upd = decideUpdateMcpServer(s1, 'github', { timeout_ms: 1000 }, 1, null, T1)!;
    expect(upd.data).toMatchObject({ timeout_ms: 1000, url: 'https://mcp.example.com/mcp', ...sealed, at: T1 });
    const s2 = evolveMcpServer(s1, stored(upd, 2));
    expect(s2.record!.server).toMatchObject({ timeout_ms: 1000, created_at: T0, updated_at: T1, version: 2 });

    const del = decideDeleteMcpServer(s2, 'github', T1);
    const s3 = evolveMcpServer(s2, stored(del, 3));
    expect(s3).toEqual({ record: null, version: 3 });
    expect(statusOf(() => decideDeleteMcpServer(s3, 'github', T1))).toBe(404);
    expect(statusOf(() => decideUpdateMcpServer(s3, 'github', { timeout_ms: 1000 }, null, null, T1))).toBe(404);
  });

  it('names a stream per organisation and name', () => {
    expect(mcpServerStream('acme', 'github')).toBe(mcpServerStream('acme', 'github'));
    expect(mcpServerStream('acme', 'github')).not.toBe(mcpServerStream('globex', 'github'));
    expect(mcpServerStream('acme', 'github')).toMatch(/^mcp-server-/);
  });
});

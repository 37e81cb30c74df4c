import { describe, expect, it } from 'vitest';
import { McpServerRegistrationSchema, McpUpstreamSettingsSchema } from './mcp.js';

const paths = (r: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }) => (r.error?.issues ?? []).map((i) => i.path.join('.'));

describe('MCP server registrations', () => {
  it('applies the defaults and keeps the binding fields', () => {
    const r = McpServerRegistrationSchema.parse({ name: 'github', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ghp_x' } });
    expect(r).toEqual({ name: 'github', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ghp_x' }, tool_costs_usd: {}, hide_denied_tools: false, timeout_ms: 30000, approval: 'platform' });
    const full = { name: 'github', url: 'https://mcp.example.com/mcp', action_prefix: 'github.', tool_costs_usd: { create_issue: 0 }, hide_denied_tools: true, timeout_ms: 30000, approval: 'client' as const };
    expect(McpUpstreamSettingsSchema.parse(full)).toEqual(full);
  });

  it('names each bad field: scheme, name, header name and value with control characters, reserved headers, unknown fields', () => {
    const r = McpServerRegistrationSchema.safeParse({
      name: 'Git Hub',
      url: 'file:///etc/passwd',
      headers: { 'Bad Name': 'x', Authorization: 'Bearer a\r\nX-Injected: 1', Host: 'evil' },
      timeout_ms: 5,
      approval: 'nobody',
      extra: 1,
    });
    expect(r.success).toBe(false);
    expect(paths(r).sort()).toEqual(['', 'approval', 'headers.Authorization', 'headers.Bad Name', 'headers.Host', 'name', 'timeout_ms', 'url'].sort());
    expect(McpUpstreamSettingsSchema.safeParse({ name: 'x', url: 'https://a', action_prefix: '', tool_costs_usd: {}, hide_denied_tools: false, timeout_ms: 1000, approval: 'platform', headers: {} }).success).toBe(false);
  });
});

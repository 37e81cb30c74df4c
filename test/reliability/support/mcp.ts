/**
 * JSON-RPC over the MCP endpoint (`POST /api/v1/mcp`, Streamable HTTP, stateless) for the reliability suites: one
 * request, its HTTP answer, and the JSON-RPC message it carried (from a JSON body or the `data:` line of an
 * `event: message`). Source: the reliability suite (docs/reliability.md).
 */
import type { RawAnswer, RawClient } from './raw-http.js';

/** The protocol revision the suites speak (a 2025 revision, through the SDK's legacy stateless mode). */
export const MCP_PROTOCOL_VERSION = '2025-06-18';

/** A JSON-RPC answer: the HTTP answer and the message, when one came. */
export interface McpAnswer {
  http: RawAnswer;
  message: { jsonrpc?: string; id?: unknown; result?: any; error?: { code: number; message: string; data?: unknown } } | null;
}

/** The JSON-RPC message of an MCP answer: a JSON body, or the data of the first SSE `message` event. */
export function jsonRpcMessage(a: RawAnswer): McpAnswer['message'] {
  const type = String(a.headers['content-type'] ?? '');
  let text = a.text;
  if (type.startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
    text = data.join('');
  }
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

let nextId = 1;

/** Send JSON-RPC `method` with `params` (or the raw `body` text) with `key`; answers the HTTP answer and its message. */
export async function mcpRpc(client: RawClient, key: string | null, method: string, params: unknown, body?: string): Promise<McpAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_PROTOCOL_VERSION };
  if (key) headers.authorization = `Bearer ${key}`;
  const http = await client.send({ method: 'POST', path: '/api/v1/mcp', headers, body: body ?? JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) });
  return { http, message: jsonRpcMessage(http) };
}

/** Every item of a paginated MCP list (`tools/list`, `resources/list`, ...). @throws Error on an error answer. */
export async function mcpList(client: RawClient, key: string, method: string, field: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  do {
    const a = await mcpRpc(client, key, method, cursor ? { cursor } : {});
    if (!a.message?.result) throw new Error(`${method}: ${a.http.status} ${a.http.text.slice(0, 300)}`);
    items.push(...(a.message.result[field] ?? []));
    cursor = a.message.result.nextCursor;
  } while (cursor);
  return items;
}

/**
 * The tool gateway's REST facade: `/api/v1/mcp/tools`, `/call`, `/resources`, `/resources/{uri}`, `/prompts`,
 * `/prompts/{name}`, and the un-prefixed lists `/mcp/tools`, `/mcp/resources`, `/mcp/prompts` (same bodies, same auth),
 * forwarded to the mcp service's registry. The lists are cacheable: a strong `ETag` (hash of the body) and
 * `Cache-Control`, with 304 for a matching `If-None-Match`.
 * Source: spec §Tool gateway; architecture §4 (Tool call errors); docs/mcp.md (REST facade).
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { context } from '@opentelemetry/api';
import { MCP_MAX_BODY_BYTES, MCP_TOOL_ERROR_STATUS, Wire, type McpToolEnvelope } from '@agp/contracts';
import { call, callUnchecked } from '@agp/bus';
import { parseOrThrow, retryAfterHeaders } from '@agp/runtime';
import { noneMatch } from '../etag.js';
import type { RouteAnswer, RouteCall } from '../router.js';

/** How long a client may reuse a list without asking again, in seconds. */
export const MCP_LIST_MAX_AGE_S = 60;

/** Prefix of the resource route; what follows is the resource URI. */
const RESOURCE_PREFIX = '/api/v1/mcp/resources/';

/**
 * Accept a resource URI raw in the path (`/api/v1/mcp/resources/platform://stats/dashboard`): the URL of such a
 * request in the percent-encoded form its row matches (one path segment); any other URL as it is. A URI without `/`
 * is taken as already percent-encoded. Pure. Called by the edge before it matches the row. Source: docs/mcp.md (REST facade).
 */
export function rawResourceUrl(method: string, url: string): string {
  if ((method !== 'GET' && method !== 'HEAD') || !url.startsWith(RESOURCE_PREFIX)) return url;
  const q = url.indexOf('?');
  const trimmed = url.slice(RESOURCE_PREFIX.length, q < 0 ? undefined : q).replace(/\/+$/, '');
  return trimmed.includes('/') ? RESOURCE_PREFIX + encodeURIComponent(trimmed) + (q < 0 ? '' : url.slice(q)) : url;
}

/** Send a list with a strong ETag of its bytes and Cache-Control, or 304 when the client holds that ETag. */
function sendList(req: Request, res: Response, body: unknown): void {
  const json = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  res.set({ etag, 'cache-control': `private, max-age=${MCP_LIST_MAX_AGE_S}`, vary: 'Authorization, X-API-Key' });
  if (noneMatch(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  res.type('application/json').send(json);
}

/** GET /api/v1/mcp/tools and /mcp/tools: `{tools: [{name, title, description, input_schema, changes_state}]}`. */
export async function listMcpTools({ req, res, ctx, deps }: RouteCall): Promise<void> {
  const { tools } = await call(deps.bus, 'mcp.catalog', ctx, {});
  sendList(req, res, { tools });
}

/** GET /api/v1/mcp/resources and /mcp/resources: `{resources, resource_templates}`. */
export async function listMcpResources({ req, res, ctx, deps }: RouteCall): Promise<void> {
  const { resources, resource_templates } = await call(deps.bus, 'mcp.catalog', ctx, {});
  sendList(req, res, { resources, resource_templates });
}

/** GET /api/v1/mcp/prompts and /mcp/prompts: `{prompts: [{name, description, arguments}]}`. */
export async function listMcpPrompts({ req, res, ctx, deps }: RouteCall): Promise<void> {
  const { prompts } = await call(deps.bus, 'mcp.catalog', ctx, {});
  sendList(req, res, { prompts });
}

/**
 * POST /api/v1/mcp/call `{tool_name, arguments}`: the envelope `{success, data, error, metadata: {execution_time_ms}}`
 * with the HTTP status of its error code (200 on success). A body that is not `{tool_name, arguments}` is a 422
 * problem, like every other route's.
 */
export async function callMcpTool({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const started = performance.now();
  const body = req.body ?? {};
  parseOrThrow(Wire['mcp.call-tool'].request, { body });
  const outcome = await callUnchecked(deps.bus, 'mcp.call-tool', ctx, { body });
  const envelope: McpToolEnvelope = { ...outcome, metadata: { execution_time_ms: Math.round((performance.now() - started) * 1000) / 1000 } };
  const status = outcome.error ? MCP_TOOL_ERROR_STATUS[outcome.error.code] : 200;
  res.set(retryAfterHeaders(status));
  return { body: envelope, status };
}

/** Request headers the MCP endpoint forwards to the protocol, besides every `mcp-*` one (the key stays at the gateway). */
export const FORWARDED_HEADERS: ReadonlySet<string> = new Set(['accept', 'content-type', 'origin', 'last-event-id', 'user-agent']);

/** A JSON-RPC error answer the gateway gives itself (the body never reached the protocol). */
export function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).set(retryAfterHeaders(status)).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

/**
 * The MCP endpoint `/api/v1/mcp` (Streamable HTTP), every method: reads the body as text (at most
 * MCP_MAX_BODY_BYTES, else 413), forwards the exchange (method, URL, protocol headers, body) to the mcp service as one
 * `mcp.http` message with the caller's context, and writes back the protocol's status, headers and body. After
 * authentication (401 without a key); its row's `bodyAs: 'handler'` keeps the JSON body reader away, so a malformed
 * body is the protocol's JSON-RPC parse error, never a problem document. Source: docs/mcp.md (The MCP endpoint).
 */
export function mcpEndpoint({ req, res, ctx, deps }: RouteCall): void {
  const method = req.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') {
    res.set('allow', 'GET, POST, DELETE');
    return jsonRpcError(res, 405, -32000, 'Method not allowed.');
  }
  // Whatever these callbacks throw is answered here (an exception in a stream callback would be uncaught and end
  // the process; a rejected promise left unhandled, too).
  const internal = () => {
    if (!res.headersSent) jsonRpcError(res, 500, -32603, 'internal error');
  };
  readMcpBody(req, res, (body) => {
    try {
      const headers: Record<string, string> = {};
      for (const [name, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && (FORWARDED_HEADERS.has(name) || name.startsWith('mcp-'))) headers[name] = v;
      }
      const url = `http://${req.get('host') ?? 'localhost'}${req.originalUrl}`;
      call(deps.bus, 'mcp.http', ctx, { method, url, headers, body: body.toString('utf8') }, 30_000)
        .then(
          (answer) => {
            res.status(answer.status);
            for (const [name, value] of Object.entries(answer.headers)) if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') res.set(name, value);
            // No body (a 202 for a notification): none is sent, so express does not label it text/html.
            if (answer.body) res.send(answer.body);
            else res.end();
          },
          (err: unknown) => {
            const status = (err as { status?: number })?.status;
            jsonRpcError(res, status === 422 ? 400 : 503, status === 422 ? -32600 : -32603, status === 422 ? 'invalid request' : 'the tool gateway is unavailable; retry');
          },
        )
        .catch(internal);
    } catch {
      internal();
    }
  });
}

/**
 * Read an MCP request's body whole, at most MCP_MAX_BODY_BYTES (else a JSON-RPC 413 is answered and `onBody` is not
 * called), and call `onBody` with it once it has ended, bound to the request's trace context (the stream's events run
 * in the connection's, and a bus span must be the child of this request's server span). A body that fails mid-way is
 * dropped without an answer (the connection is gone).
 */
export function readMcpBody(req: Request, res: Response, onBody: (body: Buffer) => void): void {
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > MCP_MAX_BODY_BYTES) {
    req.resume();
    return jsonRpcError(res, 413, -32600, `request body is over ${MCP_MAX_BODY_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (c: Buffer) => {
    if (refused) return;
    size += c.length;
    if (size > MCP_MAX_BODY_BYTES) {
      refused = true;
      jsonRpcError(res, 413, -32600, `request body is over ${MCP_MAX_BODY_BYTES} bytes`);
      return;
    }
    chunks.push(c);
  });
  req.on('error', () => {
    refused = true;
  });
  req.on('end', context.bind(context.active(), () => {
    if (!refused) onBody(Buffer.concat(chunks));
  }));
}

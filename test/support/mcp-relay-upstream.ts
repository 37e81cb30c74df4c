/**
 * A small upstream MCP server for the hosted proxy's session tests, built with the official SDK (`McpServer` over the
 * SDK's sessionful `WebStandardStreamableHTTPServerTransport`, 2025 revisions, on loopback), whose tools use what only
 * a session can carry back to the agent:
 * - `work`: sends `notifications/progress` (when the call carries a progress token), a log message
 *   (`notifications/message`, data `{ step: 'working' }`) and `notifications/tools/list_changed`, then answers `done`;
 * - `ask-model`: asks the client to sample (`sampling/createMessage`) and answers the sampled text;
 * - `ask-user`: asks the client for input (`elicitation/create`, form: `{ colour }`) and answers the action and content.
 * A request the client refuses comes back as a tool error with the error's code and message.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';

/** A started relay upstream: its URL, and how to stop it. */
export interface RelayUpstream {
  url: string;
  /** Sessions the upstream holds open now (each hosted proxy session opens its own). */
  sessions: Map<string, WebStandardStreamableHTTPServerTransport>;
  stop(): Promise<void>;
}

/** A tool error naming the failure's code (a JSON-RPC error's, when it has one) and message. */
const failed = (err: unknown) => ({ content: [{ type: 'text' as const, text: `failed ${(err as { code?: unknown }).code ?? ''}: ${err instanceof Error ? err.message : String(err)}` }], isError: true });

/** One session's server. */
function relayServer(): McpServer {
  const server = new McpServer({ name: 'relay-upstream', version: '1.0.0' }, { capabilities: { logging: {}, tools: { listChanged: true } } });
  server.registerTool('work', { description: 'Report progress and a log message, and say the tool list changed', inputSchema: z.object({}) }, async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2, message: 'halfway' } });
    await ctx.mcpReq.log('info', { step: 'working' }, 'relay-upstream');
    server.sendToolListChanged();
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool('ask-model', { description: 'Ask the client to sample', inputSchema: z.object({ prompt: z.string() }) }, async ({ prompt }, ctx) => {
    try {
      const answer = await ctx.mcpReq.requestSampling({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 });
      const content = Array.isArray(answer.content) ? answer.content[0] : answer.content;
      return { content: [{ type: 'text', text: `sampled: ${content?.type === 'text' ? content.text : content?.type}` }] };
    } catch (err) {
      return failed(err);
    }
  });
  server.registerTool('ask-user', { description: 'Ask the client for input', inputSchema: z.object({}) }, async (_args, ctx) => {
    try {
      const answer = await ctx.mcpReq.elicitInput({ mode: 'form', message: 'Pick a colour', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] } });
      return { content: [{ type: 'text', text: `${answer.action}: ${JSON.stringify(answer.content ?? {})}` }] };
    } catch (err) {
      return failed(err);
    }
  });
  return server;
}

/** Start the upstream on a random loopback port. */
export async function startRelayUpstream(): Promise<RelayUpstream> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}) });
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      const opened = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, opened), onsessionclosed: (sid) => void sessions.delete(sid) });
      await relayServer().connect(opened);
      transport = opened;
    }
    const answer = await transport.handleRequest(request);
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) {
      const body = Readable.fromWeb(answer.body as never);
      res.once('close', () => body.destroy());
      body.pipe(res);
    } else res.end();
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    sessions,
    async stop() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise((ok) => http.close(ok));
    },
  };
}

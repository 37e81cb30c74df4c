/**
 * A small upstream MCP server for the tool pinning tests, built with the official SDK (`McpServer`, served statelessly
 * over Streamable HTTP by `createMcpHandler` on loopback): tools `echo` and `add` whose descriptions a test can change,
 * and a tool `extra` it can add, after the server was registered (the "rug pull"). Counts the calls that reach it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';

/** A started pinning upstream: its URL, what it lists (changeable), the calls it answered by tool, and how to stop it. */
export interface PinUpstream {
  url: string;
  /** The description each tool is listed with now; change it to change the tool. */
  descriptions: Record<'echo' | 'add', string>;
  /** Whether `extra` is listed (a tool added after registration). */
  extra: boolean;
  /** Calls answered, by tool name. */
  calls: Record<string, number>;
  stop(): Promise<void>;
}

/** Start the upstream on a random loopback port. */
export async function startPinUpstream(): Promise<PinUpstream> {
  const state: Omit<PinUpstream, 'url' | 'stop'> = { descriptions: { echo: 'Echo the message back', add: 'Add two numbers' }, extra: false, calls: {} };
  const counted = (tool: string) => (state.calls[tool] = (state.calls[tool] ?? 0) + 1);
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'pin-upstream', version: '1.0.0' });
      server.registerTool('echo', { description: state.descriptions.echo, inputSchema: z.object({ message: z.string() }) }, async ({ message }) => (counted('echo'), { content: [{ type: 'text', text: `Echo: ${message}` }] }));
      server.registerTool('add', { description: state.descriptions.add, inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => (counted('add'), { content: [{ type: 'text', text: String(a + b) }] }));
      if (state.extra) server.registerTool('extra', { description: 'A tool added later', inputSchema: z.object({}) }, async () => (counted('extra'), { content: [{ type: 'text', text: 'extra' }] }));
      return server;
    },
    { legacy: 'stateless', responseMode: 'json' },
  );
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const answer = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}) }));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) Readable.fromWeb(answer.body as never).pipe(res);
    else res.end();
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', () => ok()));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async stop() {
      http.closeAllConnections();
      await new Promise((ok) => http.close(ok));
      await handler.close();
    },
  });
}

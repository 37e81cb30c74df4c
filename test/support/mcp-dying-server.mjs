// An MCP server (the official SDK, stdio) whose `die` tool ends its process mid-call (an upstream that dies) and whose
// `hang` tool never answers (an upstream too slow). An argument, ms, delays its start (an upstream slow to start).
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'dying', version: '1.0.0' });
server.registerTool('ping', { description: 'answers pong', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
server.registerTool('die', { description: 'ends the server process before answering', inputSchema: z.object({}) }, async () => {
  setTimeout(() => process.exit(1), 10);
  return new Promise(() => {});
});
server.registerTool('hang', { description: 'never answers (a slow upstream)', inputSchema: z.object({}) }, async () => new Promise(() => {}));
const startDelayMs = Number(process.argv[2] ?? 0);
if (startDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, startDelayMs));
await server.connect(new StdioServerTransport());

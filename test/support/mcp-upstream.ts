/**
 * A real upstream MCP server on loopback for the MCP proxy tests: `@modelcontextprotocol/server-everything` in its
 * Streamable HTTP mode, behind a relay that records the headers of every request it is sent (so a test can check the
 * upstream got its own header and never the AGP key).
 */
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';

const EVERYTHING = resolve(import.meta.dirname, '../../node_modules/.bin/mcp-server-everything');

/** A started upstream: its MCP URL (the relay's), the headers each request arrived with, and how to stop both. */
export interface RecordedUpstream {
  url: string;
  seen: Array<Record<string, string | string[] | undefined>>;
  stop(): Promise<void>;
}

/** Start server-everything (Streamable HTTP, a random port) and its recording relay. @throws Error when the server exits before it listens. */
export async function startRecordedUpstream(): Promise<RecordedUpstream> {
  const port = 19000 + Math.floor(Math.random() * 1000);
  const upstream = spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((ok, fail) => {
    upstream.stderr!.on('data', (d) => String(d).includes('listening') && ok());
    upstream.on('exit', (code) => fail(new Error(`server-everything exited ${code}`)));
  });
  const seen: RecordedUpstream['seen'] = [];
  const relay = createServer((req, res) => {
    seen.push({ ...req.headers });
    const out = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((ok) => relay.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/mcp`,
    seen,
    async stop() {
      upstream.kill('SIGTERM');
      relay.closeAllConnections();
      await new Promise((ok) => relay.close(ok));
    },
  };
}

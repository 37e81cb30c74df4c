/**
 * A raw HTTP client for the reliability suites: sends exactly the bytes asked for (a path with bad percent-encoding,
 * a GET with a body, any content type, a 5 MiB body), which `fetch` refuses or normalises, over a keep-alive agent
 * with at most `sockets` requests in flight. Source: the reliability suite (docs/reliability.md, "Fuzzing").
 */
import http from 'node:http';

/** One request as sent: method, path with its query (already encoded, sent as is), headers and body bytes. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One answer: status, headers (lower-case names) and the body as UTF-8 text. */
export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A client bound to one base URL (`http://127.0.0.1:port`). */
export interface RawClient {
  send(req: RawRequest): Promise<RawAnswer>;
  close(): void;
}

/** How long an event stream's answer is read before the client closes it, ms. */
const SSE_READ_MS = 300;

/**
 * A raw client of `baseUrl` with at most `sockets` concurrent connections (further requests queue in the agent).
 * A request that gets no answer within `timeoutMs` rejects (a hung gateway is a failure, not a wait).
 */
export function rawClient(baseUrl: string, sockets = 8, timeoutMs = 10_000): RawClient {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const once = (req: RawRequest, body: Buffer | undefined) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const headers: Record<string, string | number> = { ...(req.headers ?? {}) };
      if (body) headers['content-length'] = body.length;
      let answered = false;
      const r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', done);
        res.on('error', reject);
        // A stream of events (the governance push channel) never ends: its answer is what arrived in the first
        // SSE_READ_MS, then the connection is closed.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream') && req.path !== '/api/v1/mcp' && !req.path.startsWith('/api/v1/mcp/proxy/')) {
          setTimeout(() => {
            done();
            r.destroy();
          }, SSE_READ_MS);
        }
      });
      r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      r.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server had just closed (after a 431 or a 413): not an answer, send again.
        if ((err.code === 'ECONNRESET' || err.code === 'EPIPE') && r.reusedSocket && !answered) return reject(Object.assign(err, { retry: true }));
        // The server may answer (413) and close before the whole body is written: wait for that answer.
        if (err.code === 'EPIPE' || err.code === 'ECONNRESET') return void setTimeout(() => (answered ? undefined : reject(err)), 100);
        reject(err);
      });
      r.end(body);
    });
  return {
    async send(req) {
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      try {
        return await once(req, body);
      } catch (err) {
        if ((err as { retry?: boolean }).retry) return once(req, body);
        throw err;
      }
    },
    close: () => agent.destroy(),
  };
}

/**
 * Run `work` over `items` with at most `concurrency` at a time; resolves to the results in order.
 * Source: the reliability suite's bounded load (a fuzzer that floods the gateway measures the machine, not the API).
 */
export async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

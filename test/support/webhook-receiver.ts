/**
 * A real loopback webhook receiver for the webhook tests: every request is verified with the stock
 * `standardwebhooks` library against the secrets registered for its path. Source: docs/notifications.md.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, with whether its signature verified (stock `Webhook.verify`) under the path's secrets. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  verifiedWith: string[];
  at: number;
  /** The status the receiver answered. */
  status: number;
}

/**
 * A real loopback webhook receiver. Each path behaves as its `behaviour` says (answer a status, fail n times, hang,
 * redirect) and every request is checked with the `standardwebhooks` library against each secret registered for it.
 */
export class Receiver {
  readonly got: Received[] = [];
  readonly secrets = new Map<string, string[]>();
  readonly behaviour = new Map<string, (n: number) => { status: number; delayMs?: number; location?: string }>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const verifiedWith = (this.secrets.get(path) ?? []).filter((s) => {
          try {
            new Webhook(s).verify(body, req.headers as Record<string, string>);
            return true;
          } catch {
            return false;
          }
        });
        const n = this.got.filter((g) => g.path === path).length;
        const b = this.behaviour.get(path)?.(n) ?? { status: 204 };
        this.got.push({ path, headers: req.headers, body, verifiedWith, at: Date.now(), status: b.status });
        setTimeout(() => res.writeHead(b.status, b.location ? { location: b.location } : {}).end(), b.delayMs ?? 0).unref();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  at(path: string): Received[] {
    return this.got.filter((g) => g.path === path);
  }
}


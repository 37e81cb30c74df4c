import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateInterventionSchema, INGEST_CREATED, IngestEventSchema, type IngestResponse } from '@agp/contracts';

/** A request the fake gateway received. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Milliseconds since the gateway started. */
  at: number;
}

/** What a handler answers: a status, optional headers, and a JSON body (or a raw string). */
export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * The AGP ingest contract in a few lines: validates each event with the real schemas, accepts the valid ones
 * (`{status: 201, result: "created"}`) and rejects the rest (422), like the platform's 207 answer.
 */
export function ingestLikeThePlatform(req: RecordedRequest): FakeAnswer {
  const { batch } = JSON.parse(req.body) as { batch: unknown[] };
  const answer: IngestResponse = { successes: [], errors: [] };
  for (const item of batch) {
    const event = IngestEventSchema.safeParse(item);
    const body = event.success ? CreateInterventionSchema.safeParse(event.data.body) : undefined;
    const id = (item as { id?: string }).id ?? null;
    if (event.success && body?.success) answer.successes.push({ id: event.data.id, ...INGEST_CREATED });
    else answer.errors.push({ id, status: 422, message: (event.success ? body?.error?.message : event.error.message) ?? 'invalid' });
  }
  return { status: 207, body: answer };
}

/**
 * A loopback HTTP server standing in for the AGP gateway. `handler` answers each request; every request is
 * recorded in `requests`.
 */
export async function startFakeGateway(handler: (req: RecordedRequest, n: number) => FakeAnswer | Promise<FakeAnswer>) {
  const started = Date.now();
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() - started };
      requests.push(recorded);
      const a = await handler(recorded, requests.length - 1);
      const raw = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      const type = typeof a.body === 'string' ? 'text/html' : a.status >= 400 ? 'application/problem+json' : 'application/json';
      res.writeHead(a.status, { ...(raw ? { 'content-type': type } : {}), ...a.headers });
      res.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A URL on loopback where nothing listens (a port that was just freed). */
export async function unusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

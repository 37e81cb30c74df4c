import { expect } from 'vitest';
import { KeyStore } from '@agp/auth';
import type { Sql } from '@agp/eventstore';
import { settleIsolated } from '@agp/bus';
import { INGEST_SCHEMA_VERSION } from '@agp/contracts';

/** A booted platform as the end-to-end scenarios see it: only its URL, keys and a look at its event log. */
export interface BootedPlatform {
  url: string;
  writeKey: string;
  readKey: string;
  /** An admin key of the first organisation (manages its API keys), named `test admin key`. */
  adminKey: string;
  /** A write key of a second organisation, to prove isolation. */
  otherOrgWriteKey: string;
  /** An admin key of that second organisation. */
  otherOrgAdminKey: string;
  /** A read key of that second organisation. */
  otherOrgReadKey: string;
  /** A write key of the first organisation, revoked before it was ever used (every request with it is a 401). */
  revokedKey: string;
  /** Events in the event store, every organisation (to prove that a refused request wrote nothing). */
  eventCount(): Promise<number>;
  /** Events stored in a stream (read straight from the event store, to check that history stays). */
  streamEventTypes(streamId: string): Promise<string[]>;
  /** The metadata of each event of a stream, in order (organisation, actor, correlation id, traceparent). */
  streamMetadata(streamId: string): Promise<Array<Record<string, unknown>>>;
  /** What an operator finds in `agp_projection_dead_letters`: events a projection parked or refused, with the reason. */
  projectionDeadLetters(): Promise<Array<{ subscription: string; event_type: string; stream_id: string; error: string }>>;
  /**
   * Dead-letter an ingest log message holding `events` of organisation `org`, as the stats consumer does with a
   * message PostgreSQL refuses on its data (the real `settleIsolated` writes the row).
   */
  deadLetterIngest(org: string, events: Array<Record<string, unknown>>): Promise<void>;
  /** Rows of a read-only query against the platform's database (to check what a table holds). */
  queryRows(text: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Distributed mode: the pid of each service process, by service name (the gateway included). */
  pids?: Record<string, number>;
  /**
   * Distributed mode: each service process that has ended while the platform was up (not stopped by the test), as
   * `<label> (pid …) ended: code 1` followed by its last lines of output; empty while every process runs.
   */
  deadServices?(): string[];
  /** Distributed mode: kill a service's process with SIGKILL, then start it again and wait until it is ready. */
  killAndRestart?(service: string): Promise<void>;
  stop(): Promise<void>;
}

/** fetch JSON with a key; returns status, headers and the parsed body (or text). */
export async function call(
  p: { url: string },
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string | Buffer; contentType?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(p.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes (then throw with the last value). */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000, intervalMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}

/**
 * The parts of a {@link BootedPlatform} that read the platform's database directly: an admin key of the first
 * organisation, an admin, a write and a read key of a second organisation (`globex`, created here), a revoked key of the first, the event count and the event types of a stream.
 */
export async function databaseHandles(sql: Sql): Promise<Pick<BootedPlatform, 'adminKey' | 'otherOrgAdminKey' | 'otherOrgWriteKey' | 'otherOrgReadKey' | 'revokedKey' | 'eventCount' | 'streamEventTypes' | 'streamMetadata' | 'projectionDeadLetters' | 'deadLetterIngest' | 'queryRows'>> {
  const keys = new KeyStore(sql);
  await keys.createOrganization('globex');
  const other = await keys.createKey({ organizationId: 'globex', scope: 'write' });
  const otherRead = await keys.createKey({ organizationId: 'globex', scope: 'read' });
  const admin = await keys.createKey({ organizationId: 'acme', scope: 'admin', name: 'test admin key' });
  const otherAdmin = await keys.createKey({ organizationId: 'globex', scope: 'admin', name: 'globex admin key' });
  const revoked = await keys.createKey({ organizationId: 'acme', scope: 'write', name: 'revoked' });
  await keys.revoke(revoked.id);
  return {
    adminKey: admin.key,
    otherOrgAdminKey: otherAdmin.key,
    otherOrgWriteKey: other.key,
    otherOrgReadKey: otherRead.key,
    revokedKey: revoked.key,
    async eventCount() {
      const { rows } = await sql.query<{ n: string | number }>('SELECT count(*) AS n FROM agp_events');
      return Number(rows[0].n);
    },
    async queryRows(text, params = []) {
      return (await sql.query<Record<string, unknown>>(text, params)).rows;
    },
    async streamEventTypes(streamId) {
      const { rows } = await sql.query<{ event_type: string }>('SELECT event_type FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [streamId]);
      return rows.map((r) => r.event_type);
    },
    async streamMetadata(streamId) {
      const { rows } = await sql.query<{ metadata: Record<string, unknown> | string }>('SELECT metadata FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [streamId]);
      return rows.map((r) => (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata));
    },
    async projectionDeadLetters() {
      const { rows } = await sql.query<{ subscription: string; event_type: string; stream_id: string; error: string }>(
        'SELECT subscription, event_type, stream_id, error FROM agp_projection_dead_letters ORDER BY global_position',
      );
      return rows;
    },
    async deadLetterIngest(org, events) {
      const payload = { organization_id: org, actor: 'key:test', received_at: new Date().toISOString(), events };
      const message = { subject: `agp.ingest.${org}.stats`, msg_id: `dead-${Date.now()}-${Math.random()}`, schema: INGEST_SCHEMA_VERSION, payload, attempt: 1, ack: async () => {}, nak: async () => {} };
      const refused = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
      await settleIsolated([message], () => Promise.reject(refused), { consumer: 'stats-ingest', sql, logger: { error: () => {}, warn: () => {} } });
    },
  };
}

/**
 * Assert an RFC 9457 problem answer: `status`, `application/problem+json`, a body with `status`, `type`, `title` and
 * `detail`, and, when `paths` is given, exactly those field paths in `errors`, in order. Source: architecture §4 (Errors).
 */
export function expectProblem(r: { status: number; headers: Headers; body: any }, status: number, paths: string[] = []): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
  if (paths.length) expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual(paths);
}

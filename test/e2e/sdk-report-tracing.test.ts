/**
 * The agent SDK's reports carry the trace context of the acts that made them: agent processes
 * (test/support/sdk-report-agent.ts, the OpenTelemetry SDK's in-memory exporter as their tracer provider) act against
 * the embedded platform run as a user runs it (its built launcher) exporting its own spans to a loopback OTLP/HTTP
 * receiver, through a loopback HTTP relay that records each ingest request's `traceparent` header.
 * - Each batch the SDK posts is an `agp.report` span (CLIENT, root) linked to the `agp.act` span of each report it
 *   carries (one link per act however many reports it made); its context is the request's `traceparent`, so the
 *   gateway's server span for that POST is its child and the platform's trace of the reports hangs under it.
 * - A report left in the durable spool and sent by the next process still links to its act.
 * - Without a tracer provider the POST carries no `traceparent` (even with a propagator and a caller's context).
 * Source: docs/sdk.md (Tracing); docs/operations.md (Tracing).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { call, eventually } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startEmbeddedProcess, stopQuickstart } from '../support/quickstart.js';
import type { PrintedReportSpan } from '../support/sdk-report-agent.js';

const WRITE_KEY = 'agp_sdk_trace_write_01';
const READ_KEY = 'agp_sdk_trace_read_001';

let receiver: OtlpReceiver;
let platform: ChildProcess | undefined;
let platformUrl = '';
let relay: Server;
let relayUrl = '';
/** Each ingest request through the relay: its `traceparent` header (null when absent), its events' ids, the answer's status. */
const ingests: Array<{ traceparent: string | null; ids: string[]; status?: number }> = [];
const spoolDir = mkdtempSync(join(tmpdir(), 'agp-sdk-report-'));
const uniq = () => Math.random().toString(36).slice(2, 10);

/** A loopback relay to the platform that records each `POST /api/v1/ingest/`. */
function startRelay(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let seen: (typeof ingests)[number] | undefined;
      if (req.method === 'POST' && req.url?.startsWith('/api/v1/ingest')) {
        const batch = (JSON.parse(body.toString()) as { batch: Array<{ id: string }> }).batch;
        seen = { traceparent: (req.headers.traceparent as string | undefined) ?? null, ids: batch.map((e) => e.id) };
        ingests.push(seen);
      }
      const target = new URL(req.url ?? '/', platformUrl);
      const out = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (up) => {
        if (seen) seen.status = up.statusCode;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => res.writeHead(502).end());
      out.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Run the agent in `mode` (its own process) and return the spans it ended. */
async function agent(mode: 'traced' | 'spool' | 'resend' | 'untraced', agentId: string, spool?: string): Promise<PrintedReportSpan[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/sdk-report-agent.ts', mode, relayUrl, WRITE_KEY, agentId, ...(spool ? [spool] : [])], { cwd: REPO_ROOT, timeout: 90_000 });
  return (JSON.parse(stdout) as { spans: PrintedReportSpan[] }).spans;
}

/** The platform's spans of trace `traceId`, once the gateway's server span and the ingest log's producer span are in. */
function platformTrace(traceId: string): Promise<ReceivedSpan[]> {
  return eventually(async () => {
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    return spans.some((s) => s.name === 'POST /api/v1/ingest') && spans.some((s) => /^send .*\.ingested\./.test(s.name)) ? spans : undefined;
  }, 20_000);
}

const hex = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  ({ child: platform, url: platformUrl } = await startEmbeddedProcess({ AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' }));
  relay = await startRelay();
  const addr = relay.address() as { port: number };
  relayUrl = `http://127.0.0.1:${addr.port}`;
}, 120_000);
afterAll(async () => {
  await new Promise((r) => relay?.close(r));
  if (platform) await stopQuickstart(platform);
  await receiver?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

it('a batch of reports is an agp.report span linked to each act; the gateway’s server span for its POST is its child', async () => {
  const agentId = `report-${uniq()}`;
  const policy = await call({ url: platformUrl }, 'POST', '/api/v1/policies', { key: WRITE_KEY, body: { name: `report ${agentId}`, agent_ids: [agentId], denied_actions: ['drop_table'] } });
  expect(policy.status).toBe(201);
  const spans = await agent('traced', agentId);
  const acts = spans.filter((s) => s.name === 'agp.act');
  expect(acts.map((s) => s.attributes['gen_ai.tool.name'])).toEqual(['lookup', 'drop_table']);
  const reports = spans.filter((s) => s.name === 'agp.report');
  expect(reports.length).toBeGreaterThanOrEqual(1);
  for (const r of reports) expect(r).toMatchObject({ kind: SpanKind.CLIENT, parentSpanId: null, attributes: { 'messaging.operation.type': 'send' } });
  // Every act is linked from the span of the request that carried its reports, once per span (the blocked act made
  // an intervention and a ledger entry: one link).
  for (const r of reports) expect(new Set(r.links.map((l) => l.spanId)).size).toBe(r.links.length);
  const links = reports.flatMap((r) => r.links);
  for (const act of acts) expect(links).toContainEqual({ traceId: act.traceId, spanId: act.spanId, traceFlags: 1 });
  expect(links.every((l) => acts.some((act) => act.spanId === l.spanId))).toBe(true);
  const batches = reports.reduce((n, r) => n + Number(r.attributes['messaging.batch.message_count']), 0);
  expect(batches).toBe(5); // run.start, 2 ledger entries, 1 intervention, run.end

  // Each request carried its span's context, and the platform's trace of it hangs under that span.
  const linked = reports.find((r) => r.links.length > 0)!;
  const sent = ingests.filter((i) => i.traceparent === hex(linked.traceId, linked.spanId));
  expect(sent).toHaveLength(1);
  const trace = await platformTrace(linked.traceId);
  const server = trace.filter((s) => s.name === 'POST /api/v1/ingest');
  expect(server).toHaveLength(1);
  expect(server[0]).toMatchObject({ kind: 2, parentSpanId: linked.spanId, service: 'agp' });
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const under = (s: ReceivedSpan): boolean => s.parentSpanId === linked.spanId || (byId.has(s.parentSpanId) && under(byId.get(s.parentSpanId)!));
  expect(trace.filter((s) => /^send .*\.ingested\./.test(s.name)).every(under)).toBe(true);
}, 120_000);

it('a report spooled to disk and sent by the next process still links to its act', async () => {
  const agentId = `report-${uniq()}`;
  const before = ingests.length;
  const first = await agent('spool', agentId, spoolDir);
  expect(ingests.length).toBe(before); // nothing was sent: the reports wait in the spool
  const act = first.find((s) => s.name === 'agp.act')!;
  expect(first.some((s) => s.name === 'agp.report')).toBe(false);
  const second = await agent('resend', agentId, spoolDir);
  expect(second.some((s) => s.name === 'agp.act')).toBe(false);
  const reports = second.filter((s) => s.name === 'agp.report');
  const report = reports.find((r) => r.links.some((l) => l.spanId === act.spanId));
  expect(report, JSON.stringify(reports)).toBeDefined();
  expect(report!.links).toEqual([{ traceId: act.traceId, spanId: act.spanId, traceFlags: 1 }]);
  expect(report!.traceId).not.toBe(act.traceId);
  expect(ingests.slice(before).map((i) => i.traceparent)).toContain(hex(report!.traceId, report!.spanId));
  const trace = await platformTrace(report!.traceId);
  expect(trace.find((s) => s.name === 'POST /api/v1/ingest')?.parentSpanId).toBe(report!.spanId);
}, 120_000);

it('without a tracer provider the POST carries no traceparent, even with a propagator and a caller’s context active', async () => {
  const agentId = `report-${uniq()}`;
  const before = ingests.length;
  expect(await agent('untraced', agentId)).toEqual([]);
  const sent = ingests.slice(before);
  expect(sent.flatMap((i) => i.ids).some((id) => id.startsWith('run.'))).toBe(true);
  expect(sent.map((i) => i.traceparent)).toEqual(sent.map(() => null));
  // And the platform took them as usual.
  expect(sent.map((i) => i.status)).toEqual(sent.map(() => 207));
}, 120_000);

/**
 * An agent process that traces (test/e2e/sdk-tracing.test.ts runs it with `node --import tsx`): the OpenTelemetry
 * SDK's in-memory exporter registered as its tracer provider before `Governor.connect`, then one `run.act` per
 * scenario, each agent id given on the command line (its policy was created by the test):
 *   allow  — `send_email` under the caller's active span `agent.turn`, its function making a span `smtp.send`;
 *   block  — `drop_table`, denied by the agent's policy;
 *   pii    — `post_reply` with an e-mail address, blocked by the agent's PII guardrail (`onBlocked: 'return'`);
 *   throws — `lookup`, whose function rejects with a RangeError quoting the argument.
 * Every argument holds {@link TRACED_SECRET}. On stdout: one JSON document `{outcomes, spans}` (each ended span's name,
 * kind, scope, ids, parent span id, attributes, events and status). Exits 0 once the governors are closed.
 * Usage: sdk-tracing-agent.ts <url> <key> <allow agent> <block agent> <pii agent> <throws agent>
 */
import { context, trace } from '@opentelemetry/api';
import { Governor } from '../../packages/sdk/src/index.js';
import { startMemoryTracing } from './spans.js';

/** The value every argument carries; no span may. */
export const TRACED_SECRET = 'ann.secret@example.com';

/** One ended span as the agent prints it. */
export interface PrintedSpan {
  name: string;
  kind: number;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  events: unknown[];
  status: { code: number; message?: string };
}

async function main(): Promise<void> {
  const [url, key, allowAgent, blockAgent, piiAgent, throwsAgent] = process.argv.slice(2);
  const tracing = startMemoryTracing();
  const connect = (agentId: string) => Governor.connect({ url, key, agentId, onReportError: () => undefined });
  const outcomes: Record<string, unknown> = {};
  const govs: Governor[] = [];

  const allow = await connect(allowAgent);
  govs.push(allow);
  const caller = trace.getTracer('agent').startSpan('agent.turn');
  outcomes.allow = await context.with(trace.setSpan(context.active(), caller), () =>
    allow.startRun().act('send_email', { to: TRACED_SECRET, body: `hello ${TRACED_SECRET}` }, async (args) => {
      trace.getTracer('agent').startSpan('smtp.send').end();
      return `sent to ${String(args.to)}`;
    }),
  );
  caller.end();
  outcomes.caller = { traceId: caller.spanContext().traceId, spanId: caller.spanContext().spanId };

  const block = await connect(blockAgent);
  govs.push(block);
  outcomes.block = await block
    .startRun()
    .act('drop_table', { table: TRACED_SECRET }, () => 'dropped')
    .catch((err: Error) => err.name);

  const pii = await connect(piiAgent);
  govs.push(pii);
  const piiResult = await pii.startRun().act('post_reply', { text: `write to ${TRACED_SECRET}` }, () => 'posted', { onBlocked: 'return' });
  outcomes.pii = typeof piiResult === 'object' ? piiResult.decision.decision : piiResult;

  const throws = await connect(throwsAgent);
  govs.push(throws);
  outcomes.throws = await throws
    .startRun()
    .act('lookup', { q: TRACED_SECRET }, (args) => Promise.reject(new RangeError(`no such user ${String(args.q)}`)))
    .catch((err: Error) => err.name);

  for (const g of govs) await g.close({ timeoutMs: 10_000 });
  const spans: PrintedSpan[] = tracing.spans().map((s) => ({
    name: s.name,
    kind: s.kind,
    scope: s.instrumentationScope.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId ?? null,
    attributes: { ...s.attributes },
    events: s.events,
    status: s.status,
  }));
  await tracing.stop();
  process.stdout.write(JSON.stringify({ outcomes, spans }));
}

// Run as a script only: the test imports this module for its secret and types.
if (process.argv[1]?.endsWith('sdk-tracing-agent.ts')) await main();

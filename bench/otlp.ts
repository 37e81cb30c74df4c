/**
 * OTLP trace ingest, the gateway's own work per export (not a test; docs/performance.md (OTLP trace ingest)): decode an
 * `ExportTraceServiceRequest` of 510 GenAI spans (bench/otlp-spans.ts: 102 agent runs of an `invoke_agent` span, two
 * `chat` spans with usage, two `execute_tool` spans), encoded by the OpenTelemetry SDK's own serializers in protobuf and in JSON, and map it to
 * ingest events, the model calls priced by the price database (@pydantic/genai-prices), and again with an operator
 * table (`AGP_OTLP_PRICE_TABLE`) that holds the model, so the database is not asked. Prints ms per export and spans per
 * second: decode alone, decode + map, decode + map with the operator table; then the CPU time of pricing one model
 * call (µs, the database and the operator table, interleaved) and the time a fresh Node process takes to import the
 * price database (median of 5).
 * Run: `node --import tsx bench/otlp.ts` (BENCH_OTLP_ROUNDS, default 200).
 */
import { execFileSync } from 'node:child_process';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { decodeTraceRequest, type OtlpEncoding } from '../services/gateway/src/otlp/decode.js';
import { mapSpans } from '../services/gateway/src/otlp/mapping.js';
import { GENAI_PRICES_SOURCE, loadPriceDatabase, priceCall, type PriceTable } from '../services/gateway/src/otlp/prices.js';
import { benchSpans } from './otlp-spans.js';

const ROUNDS = Number(process.env.BENCH_OTLP_ROUNDS ?? 200);
/** An operator table that prices the benchmark's model itself (the price database is then not asked). */
const OPERATOR_TABLE: PriceTable = { version: 'bench', models: { 'gpt-4o': { input_usd_per_1m: 2.5, output_usd_per_1m: 10 } } };

await loadPriceDatabase();
const spans = await benchSpans();

/** Mean ms of `fn` over {@link ROUNDS} runs after 20 warm-up runs. */
function time(fn: () => void): number {
  for (let i = 0; i < 20; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e6 / ROUNDS;
}

const bodies: Array<[OtlpEncoding, Buffer]> = [
  ['protobuf', Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!)],
  ['json', Buffer.from(JsonTraceSerializer.serializeRequest(spans)!)],
];
for (const [encoding, body] of bodies) {
  const decode = time(() => decodeTraceRequest(body, encoding));
  const both = time(() => mapSpans('acme', decodeTraceRequest(body, encoding), null));
  const table = time(() => mapSpans('acme', decodeTraceRequest(body, encoding), OPERATOR_TABLE));
  console.log(`${encoding}: ${spans.length} spans, ${body.length} bytes; decode ${decode.toFixed(2)} ms, decode + map ${both.toFixed(2)} ms per export (${Math.round((spans.length / both) * 1000)} spans/s), decode + map with an operator table ${table.toFixed(2)} ms`);
}

/** CPU µs per call of `fn` over `n` calls (user + system time: robust to other work on a shared machine). */
function cpuMicros(fn: () => void, n: number): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}
const at = new Date();
const call = { model: 'gpt-4o-2024-08-06', provider: 'openai', inputTokens: 1200, outputTokens: 300, at };
const samples: Record<'database' | 'table', number[]> = { database: [], table: [] };
for (let i = 0; i < 5; i++) {
  samples.database.push(cpuMicros(() => priceCall(null, call), 4000));
  samples.table.push(cpuMicros(() => priceCall(OPERATOR_TABLE, call), 4000));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`pricing one model call (CPU, median of 5 × 4000): ${GENAI_PRICES_SOURCE} ${median(samples.database).toFixed(1)} µs, operator table ${median(samples.table).toFixed(2)} µs`);
const imports = Array.from({ length: 5 }, () =>
  Number(execFileSync(process.execPath, ['--input-type=module', '-e', "const t = performance.now(); await import('@pydantic/genai-prices'); console.log(performance.now() - t)"], { encoding: 'utf8' })),
);
console.log(`import @pydantic/genai-prices in a fresh process: median ${median(imports).toFixed(0)} ms (of ${imports.map((x) => x.toFixed(0)).join(', ')})`);

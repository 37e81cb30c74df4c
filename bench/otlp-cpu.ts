/**
 * OTLP trace ingest, A/B of the gateway's CPU time per export between two checkouts (not a test; docs/performance.md
 * (OTLP trace ingest: prices from the price database)). Encodes the 510 spans of bench/otlp-spans.ts with the
 * OpenTelemetry SDK's protobuf serializer, imports `decode.ts`, `mapping.ts` and `prices.ts` of the checkout given,
 * and prints the CPU time (user + system, `process.cpuUsage`: robust to other work on a shared machine) of decode +
 * map per export, median, min and max of 7 × 50 exports after 30 warm-up ones. A checkout whose `prices.ts` ships a price table
 * (`SHIPPED_PRICE_TABLE`) maps with it; one without maps with no operator table (the price database alone).
 * Run: `node --import tsx bench/otlp-cpu.ts <checkout>` (default: this one), once per checkout, interleaved.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { benchSpans } from './otlp-spans.js';

const checkout = resolve(process.argv[2] ?? resolve(import.meta.dirname, '..'));
const load = (file: string) => import(pathToFileURL(resolve(checkout, 'services/gateway/src/otlp', file)).href);
const { decodeTraceRequest } = await load('decode.ts');
const { mapSpans } = await load('mapping.ts');
const prices = await load('prices.ts');
const table = prices.SHIPPED_PRICE_TABLE ?? null;
await prices.loadPriceDatabase?.(); // loaded on the first export since it is lazy; earlier checkouts import it statically

const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(await benchSpans())!);
const once = () => mapSpans('acme', decodeTraceRequest(body, 'protobuf'), table);
for (let i = 0; i < 30; i++) once();
const ms: number[] = [];
for (let k = 0; k < 7; k++) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < 50; i++) once();
  const d = process.cpuUsage(t0);
  ms.push((d.user + d.system) / 50 / 1000);
}
ms.sort((a, b) => a - b);
console.log(`${checkout}: decode + map of a 510-span protobuf export, CPU ms: median ${ms[3].toFixed(2)} (min ${ms[0].toFixed(2)}, max ${ms[6].toFixed(2)})`);

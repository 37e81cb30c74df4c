#!/usr/bin/env node
// Regenerates services/gateway/src/otlp/otlp-trace.proto.json, the protobufjs descriptor of the OTLP trace export
// messages, from the official .proto files vendored in services/gateway/proto (opentelemetry-proto v1.9.0,
// Apache-2.0: services/gateway/proto/LICENSE). The gateway decodes and encodes OTLP/HTTP protobuf with it
// (docs/decisions.md, OTLP ingest). Run after updating the vendored files: `node scripts/otlp-proto.mjs`.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import protobuf from 'protobufjs';

const dir = resolve(import.meta.dirname, '../services/gateway/proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => resolve(dir, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
root.resolveAll();
const out = resolve(import.meta.dirname, '../services/gateway/src/otlp/otlp-trace.proto.json');
writeFileSync(out, JSON.stringify(root.toJSON({ keepComments: false }), null, 1) + '\n');
console.log(`wrote ${out}`);

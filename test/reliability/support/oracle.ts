/**
 * The OpenAPI document as a test oracle: its operations, and whether an answer (status, content type, body) is one
 * the document lists for an operation, its body checked against the documented schema with ajv (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1). Source: the reliability suite (docs/reliability.md, "Fuzzing").
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import type { RawAnswer } from './raw-http.js';

type Json = Record<string, any>;

// ajv and ajv-formats are CommonJS; their default exports, loaded the way Node resolves them.
const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020').default as typeof import('ajv').default;
const addFormats = require('ajv-formats').default as (ajv: InstanceType<typeof Ajv2020>) => void;

/** One operation of the document. */
export interface Operation {
  method: string;
  /** The OpenAPI path (`/api/v1/policies/{id}`). */
  path: string;
  operationId: string;
  op: Json;
}

const DOC_ID = 'agp:openapi';
const pointer = (parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** The document's operations and an answer checker. */
export class OpenApiOracle {
  private readonly ajv: InstanceType<typeof Ajv2020>;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** Every operation, in document order. */
  operations(): Operation[] {
    return Object.entries(this.doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: (op as Json).operationId as string, op: op as Json })),
    );
  }

  /** A validator of the schema at `parts` (a path into the document), compiled once. */
  private validator(parts: string[]): ValidateFunction {
    const key = pointer(parts);
    let v = this.validators.get(key);
    if (!v) this.validators.set(key, (v = this.ajv.compile({ $ref: `${DOC_ID}#/${key}` })));
    return v;
  }

  /** Resolve a local `$ref` of the document (`#/components/schemas/X`), or the value itself. */
  deref(node: Json): Json {
    let n = node;
    while (n && typeof n.$ref === 'string' && n.$ref.startsWith('#/')) n = n.$ref.slice(2).split('/').reduce((o: Json, k: string) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], this.doc);
    return n;
  }

  /**
   * Why `answer` is not one the document lists for `operation`, or null when it is: an undocumented status, a
   * content type the status does not list, a body where none is documented, a body that does not parse or does not
   * match the documented schema (the first ajv error).
   */
  mismatch(operation: Operation, answer: RawAnswer): string | null {
    const status = String(answer.status);
    const response = operation.op.responses?.[status] as Json | undefined;
    if (!response) return `status ${status} is not documented for ${operation.method} ${operation.path} (documented: ${Object.keys(operation.op.responses).join(', ')})`;
    const content = response.content as Json | undefined;
    const type = String(answer.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (!content) return answer.text.length === 0 ? null : `status ${status} is documented without a body, but ${answer.text.length} bytes came (${type || 'no content type'})`;
    if (!type || !content[type]) return `status ${status} answered ${type || 'no content type'}; documented: ${Object.keys(content).join(', ')}`;
    let body: unknown = answer.text;
    if (type === 'application/json' || type.endsWith('+json')) {
      try {
        body = JSON.parse(answer.text);
      } catch {
        return `status ${status} ${type} body is not JSON: ${answer.text.slice(0, 200)}`;
      }
    }
    const v = this.validator(['paths', operation.path, operation.method.toLowerCase(), 'responses', status, 'content', type, 'schema']);
    if (type === 'text/event-stream' && operation.path !== '/api/v1/mcp' && operation.path !== '/api/v1/mcp/proxy/{server}') {
      // A stream of events (the governance push channel; the MCP endpoints document their streams as text): each event's
      // `data:` is one JSON value of the documented schema (comments and ids aside).
      for (const frame of answer.text.split(/\n\n/)) {
        const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (!data) continue;
        let event: unknown;
        try {
          event = JSON.parse(data);
        } catch {
          return `status ${status} ${type} event data is not JSON: ${data.slice(0, 200)}`;
        }
        if (!v(event)) return `status ${status} ${type} event data does not match the documented schema: ${v.errors?.[0]?.instancePath || '/'} ${v.errors?.[0]?.message}`;
      }
      return null;
    }
    if (!v(body)) {
      const e = v.errors?.[0];
      return `status ${status} ${type} body does not match the documented schema: ${e?.instancePath || '/'} ${e?.message} ${e?.params ? JSON.stringify(e.params) : ''}`;
    }
    return null;
  }

  /** A validator of any schema of the document by its JSON pointer parts (the MCP tool results, for instance). */
  schemaAt(parts: string[]): ValidateFunction {
    return this.validator(parts);
  }
}

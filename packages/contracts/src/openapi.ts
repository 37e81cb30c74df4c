/**
 * The OpenAPI 3.1 document the gateway serves at `GET /api/v1/openapi.json`, generated: its `paths` from the HTTP
 * route table (http-routes.ts) and the wire rows the routes name (wire.ts), its schemas from the zod contracts.
 * Nothing in it is written by hand but the texts of the route table. Linted by `node scripts/lint-openapi.mjs`
 * (redocly, recommended rules). Source: issue #10 (one table); issue #9 point 6 (lint).
 */
import { z } from 'zod';
import { GuardrailContextSchema } from './guardrail.js';
import { HTTP_ROUTES, HTTP_TAGS, JsonRpcErrorResponseSchema, JsonRpcResponseSchema, type HttpRoute } from './http-routes.js';
import { IngestEventSchema, IngestResponseSchema, MAX_JSON_DEPTH } from './ingest.js';
import { CreateInterventionSchema, InterventionDetailSchema, InterventionPageSchema, InterventionRecordSchema, InterventionStatsSchema } from './intervention.js';
import { McpToolEnvelopeSchema } from './mcp.js';
import { ProblemSchema } from './problem.js';
import { RawJsonSchema, Wire, type WireKey } from './wire.js';

type Json = Record<string, unknown>;
/** Which side of a schema: what a client sends (`input`: before defaults and transforms) or receives (`output`). */
type Io = 'input' | 'output';

/**
 * Schemas published under `components.schemas`. A route whose body or reply is one of them (same zod schema, same
 * side) references it by `$ref` instead of inlining it. A `nested` one is also referenced wherever it occurs inside
 * another schema (redocly's `no-unused-components`; one definition for clients): only schemas whose input and output
 * JSON Schemas are identical, or that occur on one side only, may be nested, since the reference serves both.
 */
const COMPONENTS: ReadonlyArray<{ name: string; schema: z.ZodType; io: Io; nested?: true }> = [
  { name: 'Intervention', schema: InterventionRecordSchema, io: 'output' },
  { name: 'InterventionDetail', schema: InterventionDetailSchema, io: 'output' },
  { name: 'InterventionPage', schema: InterventionPageSchema, io: 'output' },
  { name: 'InterventionStats', schema: InterventionStatsSchema, io: 'output' },
  { name: 'CreateIntervention', schema: CreateInterventionSchema, io: 'input' },
  { name: 'GuardrailContext', schema: GuardrailContextSchema, io: 'output', nested: true },
  { name: 'IngestEvent', schema: IngestEventSchema, io: 'input', nested: true }, // only in request bodies
  { name: 'IngestResponse', schema: IngestResponseSchema, io: 'output' },
  { name: 'Problem', schema: ProblemSchema, io: 'output' },
  { name: 'McpToolEnvelope', schema: McpToolEnvelopeSchema, io: 'output' },
  { name: 'JsonRpcResponse', schema: JsonRpcResponseSchema, io: 'output' },
  { name: 'JsonRpcError', schema: JsonRpcErrorResponseSchema, io: 'output' },
];
const NESTED = new Map<z.core.$ZodType, string>(COMPONENTS.filter((c) => c.nested).map((c) => [c.schema, c.name]));
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The licence the document declares. The repository ships no LICENSE file and every package is `private`, so no
 * licence is granted: say so (an SPDX `LicenseRef-` identifier, since SPDX lists no "proprietary" licence) rather
 * than name an open-source licence nobody chose. Replace when the project adopts one. See docs/decisions.md.
 */
export const OPENAPI_LICENSE = { name: 'Proprietary (no licence granted)', identifier: 'LicenseRef-AGP-Proprietary' } as const;

/**
 * The one zod-to-JSON-Schema conversion of the document: JSON Schema 2020-12 of `s` without `$schema`, a nested
 * {@link COMPONENTS} schema replaced by its `$ref` (the root never is), what JSON Schema cannot express as `{}`.
 */
function schemaOf(s: z.ZodType, io: Io): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: ({ zodSchema, jsonSchema }) => {
      const name = NESTED.get(zodSchema);
      if (!name || (zodSchema as z.core.$ZodType) === s) return;
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Json)[key];
      Object.assign(jsonSchema, ref(name));
    },
  }) as Json;
  return rest;
}

/** `$ref` to the component that is `s` on side `io`, else {@link schemaOf}. */
function schemaOrRef(s: z.ZodType, io: Io): Json {
  const component = COMPONENTS.find((c) => c.schema === s && c.io === io);
  return component ? ref(component.name) : schemaOf(s, io);
}

/**
 * What each problem status means, unless a route says more precisely (`HttpRoute.problems`).
 * Source: architecture §4 (Errors).
 */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Malformed JSON body (on any method, GET included), a bad percent-encoding in a path parameter, or a NUL (%00) in the URL',
  401: 'Missing or unknown bearer token',
  403: 'Read-only key used for a write',
  404: 'Unknown id (or another organisation’s)',
  409: 'Conflict',
  413: 'Body over 5 MiB (on any method, GET included)',
  415: 'A body (on any method, GET included) that is not application/json',
  422: `Invalid field values; every bad field is listed, enums with their allowed values (also: JSON nested deeper than ${MAX_JSON_DEPTH} levels, a NUL or an unpaired surrogate in text)`,
  503: 'A dependency (a service, the key store) is unavailable; retry after Retry-After',
};

/**
 * Answers every operation can give, whatever its route, because the edge (services/gateway/src/edge.ts) and the HTTP
 * server answer them before any route: 400 (malformed JSON, a bad percent-encoding, %00 in the URL), 401, 413 and 415
 * (a body is parsed on every method), 422, 503 (the key store or a service is down). 431 is Node's HTTP parser
 * refusing a request line and headers over 16 KiB, without a body.
 */
const EDGE_PROBLEMS = [400, 401, 413, 415, 422, 503] as const;
const HEADERS_TOO_LARGE = { '431': { description: 'Request line and headers (a long URL) over 16 KiB; answered by the HTTP server, without a body' } };
/**
 * 304 of a GET: `If-None-Match: *` matches any current representation (RFC 9110 §13.1.2), so every GET that would
 * answer 200 answers 304 without a body; a route with an ETag also for its current ETag.
 */
const notModified = (etag: boolean) => ({ '304': { description: `Not Modified, no body: If-None-Match is \`*\`${etag ? ' or holds the current ETag' : ' (any current representation)'}` } });

/** The problem-details body of an error answer. */
const PROBLEM_CONTENT = { 'application/problem+json': { schema: ref('Problem') } };

/**
 * The one error-response builder: each status with its text and body, problem details unless the route's
 * `errorBodies` says otherwise (its media types, and problem details too when it says `problem`).
 * @throws on a status without a text.
 */
function problemResponses(statuses: Iterable<number>, texts: Readonly<Record<number, string>> = {}, bodies: HttpRoute['errorBodies'] = {}): Json {
  return Object.fromEntries(
    [...statuses].map((status) => {
      const other = bodies[status];
      const description = other?.description ?? texts[status] ?? STATUS_TEXT[status];
      if (!description) throw new Error(`OpenAPI: no text for problem status ${status}`);
      const content = other
        ? { ...Object.fromEntries(Object.entries(other.content).map(([type, s]) => [type, { schema: schemaOrRef(s, 'output') }])), ...(other.problem ? PROBLEM_CONTENT : {}) }
        : PROBLEM_CONTENT;
      return [String(status), { description, content }];
    }),
  );
}

/** Part `part` of the wire row's request schema (`query`, `body`, `path`), or undefined when it has none. */
function wirePart(message: WireKey, part: 'query' | 'body' | 'path'): z.ZodType | undefined {
  const request: z.ZodType = Wire[message].request;
  return request instanceof z.ZodObject ? (request.shape as Record<string, z.ZodType>)[part] : undefined;
}

/** The reply as HTTP sends it: the route's override, else the wire row's reply without its RawJson alternative. */
function replyOf(route: HttpRoute): z.ZodType | null {
  if (route.reply !== undefined) return route.reply;
  const reply: z.ZodType = Wire[route.message].reply;
  if (!(reply instanceof z.ZodUnion)) return reply;
  const options = (reply.options as z.ZodType[]).filter((o) => o !== RawJsonSchema);
  return options.length === 1 ? options[0] : z.union(options);
}

/** The `{name}` parameters of an OpenAPI path, in order. */
const pathParamNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

/** `parameters` of a route: path (schemas from the wire row's `path`), request headers, then query (from its `query`). */
function parameters(route: HttpRoute): Json[] {
  const where = `OpenAPI: ${route.method} ${route.path}`;
  const pathShape = wirePart(route.message, 'path');
  const fields = pathShape instanceof z.ZodObject ? (pathShape.shape as Record<string, z.ZodType>) : {};
  const path = pathParamNames(route.path).map((name) => {
    const doc = route.params?.[name];
    const field = fields[doc?.field ?? name];
    if (!field) throw new Error(`${where}: the wire row ${route.message} has no path field for {${name}}`);
    const schema = schemaOf(field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field, 'input');
    return { name, in: 'path', required: true, ...(doc?.description ? { description: doc.description } : {}), schema };
  });
  const headers = Object.entries(route.requestHeaders ?? {}).map(([name, description]) => ({ name, in: 'header', required: false, schema: { type: 'string' }, description }));
  const query = wirePart(route.message, 'query');
  const js = query ? schemaOf(query, 'input') : {};
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required ?? []) as string[]);
  for (const name of Object.keys(route.queryDocs ?? {})) if (!props[name]) throw new Error(`${where}: no query parameter ${name} in ${route.message}`);
  const queryParams = Object.entries(props).map(([name, s]) => {
    const items = s.items as Json | undefined;
    // An enum list (`?type=a,b`) is one comma-separated string on the URL.
    const list = s.type === 'array' && items?.enum ? (items.enum as string[]) : null;
    const description = route.queryDocs?.[name] ?? (list ? `One of ${list.join(', ')}; or several, comma-separated (OR).` : (s.description as string | undefined));
    return { name, in: 'query', required: required.has(name), schema: list ? { type: 'string' } : s, ...(description ? { description } : {}) };
  });
  return [...path, ...headers, ...queryParams];
}

/** The operation object of one route. */
function operation(route: HttpRoute): Json {
  const body = route.body ?? wirePart(route.message, 'body');
  const reply = replyOf(route);
  const content = route.content
    ? Object.fromEntries(Object.entries(route.content).map(([type, s]) => [type, { schema: schemaOrRef(s, 'output') }]))
    : reply
      ? { 'application/json': { schema: schemaOrRef(reply, 'output') } }
      : undefined;
  const headers = route.responseHeaders ? Object.fromEntries(Object.entries(route.responseHeaders).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) : undefined;
  const success = (description: string, withBody = true) => ({ description, ...(headers ? { headers } : {}), ...(content && withBody ? { content } : {}) });
  const params = parameters(route);
  // Every route: what the edge answers (EDGE_PROBLEMS, 431); a write: 403 for a read key; a path parameter: 404;
  // a GET: 304 (If-None-Match); the route's own statuses (`problems`, `errorBodies`).
  const statuses = new Set<number>([...EDGE_PROBLEMS, ...Object.keys(route.problems ?? {}).map(Number), ...Object.keys(route.errorBodies ?? {}).map(Number)]);
  if (Wire[route.message].scope === 'write') statuses.add(403);
  if (pathParamNames(route.path).length) statuses.add(404);
  const conditional = route.method === 'GET' && route.status === 200;
  return {
    operationId: route.operationId,
    tags: [...route.tags],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOrRef(body, 'input') } } } } : {}),
    responses: {
      [String(route.status)]: success(route.returns),
      ...Object.fromEntries(Object.entries(route.alsoReturns ?? {}).map(([status, description]) => [status, success(description, !route.noBody?.includes(Number(status)))])),
      ...(conditional ? notModified(/If-None-Match/.test(route.responseHeaders?.ETag ?? '')) : {}),
      ...problemResponses([...statuses].sort((a, b) => a - b), route.problems, route.errorBodies),
      ...HEADERS_TOO_LARGE,
    },
  };
}

/** OpenAPI `paths` of `routes`: one path item per path, one operation per method, in table order. */
function pathsOf(routes: readonly HttpRoute[]): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return paths;
}

/**
 * The first sentence of the document's description: every area of the API, named from {@link HTTP_TAGS} (so an area
 * added there is listed here too), and where the guides are.
 */
const API_AREAS = `The API has ${HTTP_TAGS.length} areas, each a tag below with its operations: ${HTTP_TAGS.map((t) => t.name).join(', ')}. Guides: docs/api.md and the other pages of docs/ in the repository.`;

/**
 * The OpenAPI 3.1 document, generated from the HTTP route table, the wire table and the zod contracts (never written
 * by hand). Served at `GET /api/v1/openapi.json` with `serverUrl` `/`.
 * @throws Error when the route table names a path parameter, query parameter or problem status it cannot document.
 */
export function buildOpenApiDocument(serverUrl = '/'): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'AGP — Agent Governance Platform API',
      version: '1.0.0',
      license: { ...OPENAPI_LICENSE },
      description:
        API_AREAS +
        ' Every endpoint requires `Authorization: Bearer <key>` (or `X-API-Key`). Errors are RFC 9457 problem details. Limits of every JSON body: at most 5 MiB (413; some routes less, as they say); objects and arrays nested at most ' +
        MAX_JSON_DEPTH +
        ' levels deep (`{}` is one level), counted from the body, from each ingest event, and from the arguments of an MCP tool call or prompt — deeper is 422 naming the limit and the path where it was crossed (for ingest, that event alone, in the 207 answer); no NUL character and no unpaired UTF-16 surrogate in any string or member name (422 naming the field).',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }, { apiKey: [] }],
    tags: HTTP_TAGS.map((t) => ({ ...t })),
    paths: pathsOf(HTTP_ROUTES),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An AGP API key: `agp_...`' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: Object.fromEntries(COMPONENTS.map((c) => [c.name, schemaOf(c.schema, c.io)])),
    },
  };
}

import { z } from 'zod';
import { CreateInterventionSchema, IdParamSchema, InterventionDetailSchema, InterventionPageSchema, InterventionRecordSchema, InterventionStatsQuerySchema, InterventionStatsSchema, ListInterventionsQuerySchema } from './intervention.js';
import { IngestEventSchema, IngestResponseSchema, INGEST_MAX_EVENTS } from './ingest.js';
import { ProblemSchema } from './problem.js';
import { GuardrailContextSchema } from './guardrail.js';
import { openApiApprovalPaths } from './approval.js';
import { openApiPolicyPaths } from './policy.js';
import { openApiStatsPaths } from './stats.js';

type Json = Record<string, unknown>;

const schemaOf = (s: z.ZodType, io: 'input' | 'output' = 'output'): Json =>
  z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;

const strip = (s: Json): Json => {
  const { $schema: _drop, ...rest } = s;
  return rest;
};

const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      { description: STATUS_TEXT[s], content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
    ]),
  );

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed JSON',
  401: 'Missing or unknown bearer token',
  403: 'Read-only key used for a write',
  404: 'Unknown id (or another organisation’s)',
  409: 'Conflict',
  413: 'Body over 5 MiB',
  415: 'Body is not application/json',
  422: 'Invalid field values; every bad field is listed, enums with their allowed values',
  503: 'A dependency is unavailable',
};

/** Query parameters of a zod object schema, for OpenAPI `parameters`. */
function queryParams(schema: z.ZodType): Json[] {
  const js = schemaOf(schema, 'input');
  const props = (js.properties ?? {}) as Record<string, Json>;
  return Object.entries(props).map(([name, s]) => {
    const items = s.items as Json | undefined;
    if (s.type === 'array' && items?.enum) {
      const values = items.enum as string[];
      return { name, in: 'query', required: false, schema: { type: 'string' }, description: `One of ${values.join(', ')}; or several, comma-separated (OR).` };
    }
    return { name, in: 'query', required: false, schema: s, description: s.description };
  });
}

const json = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });

/**
 * The OpenAPI 3.1 document, generated from the zod contracts (never written by hand).
 * Served at `GET /api/v1/openapi.json`.
 */
export function buildOpenApiDocument(serverUrl = '/'): Json {
  const idParam = { name: 'id', in: 'path', required: true, schema: schemaOf(IdParamSchema.shape.id) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'AGP — Agent Governance Platform API',
      version: '1.0.0',
      description:
        'Interventions, ingest, approvals, policies, agents, kill switches, runs, the action ledger and stats. Every endpoint requires `Authorization: Bearer <key>` (or `X-API-Key`). Errors are RFC 9457 problem details.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }, { apiKey: [] }],
    paths: {
      ...openApiPolicyPaths,
      ...openApiApprovalPaths(),
      ...openApiStatsPaths(),
      '/api/v1/interventions': {
        get: {
          operationId: 'listInterventions',
          summary: 'List interventions, newest first',
          parameters: queryParams(ListInterventionsQuerySchema),
          responses: { '200': { description: 'A page', content: json('InterventionPage') }, ...problems(401, 422) },
        },
        post: {
          operationId: 'createIntervention',
          summary: 'Record an intervention (synchronous path)',
          requestBody: { required: true, content: json('CreateIntervention') },
          responses: { '201': { description: 'The stored record', content: json('Intervention') }, ...problems(400, 401, 403, 413, 415, 422) },
        },
      },
      '/api/v1/interventions/stats': {
        get: {
          operationId: 'interventionStats',
          summary: 'Aggregate intervention statistics',
          parameters: queryParams(InterventionStatsQuerySchema),
          responses: { '200': { description: 'Statistics', content: json('InterventionStats') }, ...problems(401, 422) },
        },
      },
      '/api/v1/interventions/{id}': {
        get: {
          operationId: 'getIntervention',
          summary: 'One intervention with its audit trail',
          parameters: [idParam],
          responses: { '200': { description: 'The record', content: json('InterventionDetail') }, ...problems(401, 404) },
        },
        delete: {
          operationId: 'deleteIntervention',
          summary: 'Remove a record from every read model (its stream stays for audit)',
          parameters: [idParam],
          responses: { '204': { description: 'Deleted' }, ...problems(401, 403, 404) },
        },
      },
      '/api/v1/interventions/{id}/enrich': {
        post: {
          operationId: 'enrichIntervention',
          summary: 'Re-run LLM enrichment of one record (write key); 409 when no AGP_LLM_API_KEY is configured',
          parameters: [idParam],
          responses: {
            '202': { description: 'Queued', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, enrichment_status: { type: 'string', enum: ['pending'] } }, required: ['id', 'enrichment_status'] } } } },
            ...problems(401, 403, 404, 409),
          },
        },
      },
      '/api/v1/ingest': {
        post: {
          operationId: 'ingest',
          summary: `Submit up to ${INGEST_MAX_EVENTS} events (5 MiB); answers 207 once they are durable`,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', required: ['batch'], properties: { batch: { type: 'array', maxItems: INGEST_MAX_EVENTS, items: { $ref: '#/components/schemas/IngestEvent' } } } } } },
          },
          responses: { '207': { description: 'Per-event results', content: json('IngestResponse') }, ...problems(400, 401, 403, 413, 415, 422, 503) },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An AGP API key: `agp_...`' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: {
        Intervention: strip(schemaOf(InterventionRecordSchema)),
        InterventionDetail: strip(schemaOf(InterventionDetailSchema)),
        InterventionPage: strip(schemaOf(InterventionPageSchema)),
        InterventionStats: strip(schemaOf(InterventionStatsSchema)),
        CreateIntervention: strip(schemaOf(CreateInterventionSchema, 'input')),
        GuardrailContext: strip(schemaOf(GuardrailContextSchema)),
        IngestEvent: strip(schemaOf(IngestEventSchema, 'input')),
        IngestResponse: strip(schemaOf(IngestResponseSchema)),
        Problem: strip(schemaOf(ProblemSchema)),
      },
    },
  };
}

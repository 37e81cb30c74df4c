/**
 * Regressions of issue #9 point 6 (redocly lint of the OpenAPI document), on the embedded platform:
 * the document references GuardrailContext instead of inlining copies, declares a licence, and documents no
 * path with a trailing slash; and the gateway still answers the spec's trailing-slash spellings
 * (`GET /api/v1/stats/`, `POST /api/v1/ingest/`) as well as the documented ones. The full lint is
 * `npx -y pnpm@10.34.8 lint:openapi` (scripts/lint-openapi.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument, GuardrailContextSchema, OPENAPI_LICENSE } from '@agp/contracts';
import { bootEmbedded } from './support/modes.js';
import type { BootedPlatform } from './support/http.js';

type Json = Record<string, any>;

const GUARDRAIL_REF = '#/components/schemas/GuardrailContext';

/** Every value in `node` (depth first) with its JSON pointer. */
function* walk(node: unknown, pointer = '#'): Generator<[string, unknown]> {
  yield [pointer, node];
  if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) yield* walk(v, `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }
}

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument('/') as Json;
  const schemas = doc.components.schemas as Record<string, Json>;

  it('references GuardrailContext from every intervention context field', () => {
    expect(schemas.GuardrailContext.oneOf.map((s: Json) => s.properties.guardrail.const)).toEqual(['pii', 'moderation', 'loop', 'idempotency']);
    expect(schemas.Intervention.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    expect(schemas.InterventionDetail.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    expect(schemas.InterventionPage.properties.interventions.items.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    expect(schemas.CreateIntervention.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    // One component serves both request (input) and response (output) schemas only while the two agree.
    expect(z.toJSONSchema(GuardrailContextSchema, { io: 'input' })).toEqual(z.toJSONSchema(GuardrailContextSchema, { io: 'output' }));
  });

  it('holds no inline copy of a guardrail context outside its component', () => {
    const copies = [...walk(doc)]
      .filter(([, v]) => (v as Json)?.properties?.guardrail_schema_version !== undefined)
      .map(([pointer]) => pointer)
      .filter((pointer) => !pointer.startsWith('#/components/schemas/GuardrailContext/'));
    expect(copies).toEqual([]);
  });

  it('uses every component and resolves every $ref', () => {
    const refs = [...walk(doc)].filter(([p]) => p.endsWith('/$ref')).map(([, v]) => v as string);
    const used = new Set(refs.filter((r) => r.startsWith('#/components/schemas/')).map((r) => r.slice('#/components/schemas/'.length)));
    expect(Object.keys(schemas).filter((name) => !used.has(name))).toEqual([]);
    expect([...used].filter((name) => !schemas[name])).toEqual([]);
  });

  it('declares a licence with a name and an SPDX identifier or url', () => {
    expect(doc.info.license).toEqual(OPENAPI_LICENSE);
    expect(typeof doc.info.license.name).toBe('string');
    expect(doc.info.license.identifier ?? doc.info.license.url).toBeTruthy();
  });

  it('documents no path with a trailing slash', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.endsWith('/'))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/stats', '/api/v1/ingest']));
  });
});

describe('gateway routes for the trailing-slash spellings (embedded platform)', () => {
  let p: BootedPlatform | undefined;
  beforeAll(async () => {
    p = await bootEmbedded();
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('answers GET /api/v1/stats and /api/v1/stats/ (with and without a query) with the same stats summary', async () => {
    const bodies = [];
    for (const path of ['/api/v1/stats', '/api/v1/stats/', '/api/v1/stats?days=1', '/api/v1/stats/?days=1']) {
      const res = await fetch(p!.url + path, { headers: { authorization: `Bearer ${p!.readKey}` } });
      expect(res.status, path).toBe(200);
      bodies.push(await res.json());
    }
    expect(bodies[0]).toHaveProperty('total_runs');
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[3]).toEqual(bodies[2]);
  });

  it('answers POST /api/v1/ingest and /api/v1/ingest/ with the per-event 207', async () => {
    for (const [i, path] of ['/api/v1/ingest', '/api/v1/ingest/'].entries()) {
      const event = { id: `slash-${i}`, type: 'agent.register', timestamp: new Date().toISOString(), body: { agent_id: `slash-agent-${i}`, name: 'Slash agent' } };
      const res = await fetch(p!.url + path, { method: 'POST', headers: { authorization: `Bearer ${p!.writeKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ batch: [event] }) });
      expect(res.status, path).toBe(207);
      expect(await res.json()).toEqual({ successes: [{ id: event.id, status: 201, result: 'created' }], errors: [] });
    }
  });

  it('serves the linted document at /api/v1/openapi.json', async () => {
    const res = await fetch(`${p!.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument('/'))));
  });
});

/**
 * The OpenAPI-driven fuzzer, in both run modes: every operation of the document the gateway serves gets property-based
 * cases (fast-check, from the document's parameter and body schemas: valid-ish values and mutations of them) plus the
 * edge-case corpus (deep nesting with NUL or lone-surrogate leaves, huge numbers, bad JSON, wrong content types,
 * oversize bodies, a body on GET, bad percent-encoding, long URLs); over MCP JSON-RPC, `tools/call` of every tool
 * with arguments from its inputSchema, `resources/read` of every resource template and `prompts/get` of every prompt.
 * Checks: no 5xx (no JSON-RPC internal error, no tool result with code internal or unavailable), every answer's
 * status, content type and body as the document lists them for the operation (ajv), and afterwards every process
 * alive and /healthz answering.
 *
 * Volume: AGP_RELIABILITY=full runs AGP_FUZZ_CASES (default 200) cases per operation, tool, template and prompt; the
 * reduced set inside `npm test` runs 25. Seeded: the seed is printed, and AGP_FUZZ_SEED=<seed> generates the same
 * cases again (each failure prints its operation, case and request). AGP_FUZZ_SKIP=<corpus name|...> leaves corpus
 * cases out while developing; the committed suite runs them all.
 * Source: the reliability suite (docs/reliability.md, "Fuzzing").
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { matchHttpRoute, routeOperation } from '@agp/contracts';
import { describeModes } from '../support/modes.js';
import { EDGE_VALUES, LONG_URL_LENGTH, PATH_CORPUS, QUERY_CORPUS, RAW_NUMBERS, arbitraryOf, bodyCorpus, jsonText, mutated, type RawBody } from './support/arbitraries.js';
import { createOrgObjects, objectFor, type OrgObjects } from './support/fixtures.js';
import { mcpList } from './support/mcp.js';
import { OpenApiOracle, type Operation } from './support/oracle.js';
import { inPool, rawClient, type RawAnswer, type RawClient, type RawRequest } from './support/raw-http.js';

const FULL = process.env.AGP_RELIABILITY === 'full';
/** Cases per operation (REST), per tool, per resource template and per prompt (MCP). */
const PER_OPERATION = Number(process.env.AGP_FUZZ_CASES ?? (FULL ? 200 : 25));
const SEED = Number(process.env.AGP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SKIP = new Set((process.env.AGP_FUZZ_SKIP ?? '').split('|').map((s) => s.trim()).filter(Boolean));
/** Requests in flight at once. */
const CONCURRENCY = 6;

type Json = Record<string, any>;

/** One generated case: what it is (for the failure report) and the request. */
interface Case {
  name: string;
  req: RawRequest;
}

/** A failed case, as printed. */
interface Failure {
  where: string;
  name: string;
  request: string;
  answer: string;
  why: string;
}

/** A seed per operation, from the run's seed and the operation's name (so adding one does not shift the others). */
function seedOf(name: string): number {
  let h = SEED >>> 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h & 0x7fffffff;
}

/** A query value as the URL carries it: lists comma-separated, raw-number markers as numbers, text percent-encoded. */
function queryValue(v: unknown): string {
  const text = typeof v === 'string' ? (RAW_NUMBERS[v] ?? v) : Array.isArray(v) ? v.join(',') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80'; // a lone surrogate: its (invalid) UTF-8 bytes
  }
}

/** What a request was, for a failure report: method, path (shortened) and body (shortened). */
function describeRequest(r: RawRequest): string {
  const body = r.body === undefined ? '' : ` ${r.headers?.['content-type'] ?? ''} ${(Buffer.isBuffer(r.body) ? `<${r.body.length} bytes>` : r.body).slice(0, 300)}`;
  return `${r.method} ${r.path.length > 300 ? `${r.path.slice(0, 300)}…(${r.path.length})` : r.path}${body}`;
}

describeModes('OpenAPI-driven fuzzing', (platform, mode) => {
  let client: RawClient;
  let oracle: OpenApiOracle;
  let objects: OrgObjects;
  const corpus = bodyCorpus().filter((c) => !SKIP.has(c.name));
  const perOperation: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  /** Requests that took over 2 s, printed after each part. */
  const slow: string[] = [];

  beforeAll(async () => {
    const p = platform();
    client = rawClient(p.url, CONCURRENCY);
    const doc = await client.send({ method: 'GET', path: '/api/v1/openapi.json' });
    expect(doc.status).toBe(200);
    oracle = new OpenApiOracle(JSON.parse(doc.text));
    objects = await createOrgObjects(p, p.writeKey, p.adminKey);
    console.log(`[fuzz ${mode}] seed ${SEED} (AGP_FUZZ_SEED=${SEED} reproduces), ${PER_OPERATION} cases per operation${SKIP.size ? `, skipping ${[...SKIP].join(', ')}` : ''}`);
  }, 120_000);
  afterAll(() => client?.close());

  /** The key of kind `k`; "write" is the admin key on a key-management operation, so its cases get past the scope check. */
  const keyOf = (k: 'write' | 'read' | 'none', op?: Operation) => (k === 'write' ? writeKeyFor(op) : k === 'read' ? platform().readKey : null);
  const writeKeyFor = (op?: Operation) => {
    const route = op && matchHttpRoute(op.method, op.path);
    return route && routeOperation(route.message).scope === 'admin' ? platform().adminKey : platform().writeKey;
  };
  const headersFor = (key: string | null, extra: Record<string, string> = {}) => ({ ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra });

  /** The cases of one REST operation: the corpus (all of it in the full set, a seeded part in the reduced one), then generated ones up to the count. */
  function restCases(op: Operation): Case[] {
    const params = (op.op.parameters ?? []) as Json[];
    const pathParams = params.filter((p) => p.in === 'path');
    const queryParams = params.filter((p) => p.in === 'query');
    const bodySchema = op.op.requestBody?.content?.['application/json']?.schema as Json | undefined;
    const resolve = (s: Json) => oracle.deref(s);
    const write = writeKeyFor(op);
    const fill = (seg: (name: string) => string) => op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => seg(name));
    const validPath = fill((name) => encodeURIComponent(objectFor(op.path, name, objects)));

    // The corpus.
    const corpusCases: Case[] = [];
    const jsonHeaders = (c: RawBody) => headersFor(write, c.contentType === '' ? {} : { 'content-type': c.contentType ?? 'application/json' });
    for (const c of corpus) corpusCases.push({ name: `body corpus: ${c.name}`, req: { method: op.method, path: validPath, headers: jsonHeaders(c), body: c.body } });
    if (pathParams.length) for (const seg of PATH_CORPUS) corpusCases.push({ name: `path corpus: ${seg.slice(0, 20)}`, req: { method: op.method, path: fill(() => seg), headers: headersFor(write) } });
    for (const q of QUERY_CORPUS) corpusCases.push({ name: `query corpus: ${q.slice(0, 20)}`, req: { method: op.method, path: `${validPath}?${q}`, headers: headersFor(write) } });
    corpusCases.push({ name: 'long URL', req: { method: op.method, path: `${validPath}?q=${'u'.repeat(LONG_URL_LENGTH)}`, headers: headersFor(write) } });
    corpusCases.push({ name: 'If-None-Match: *', req: { method: op.method, path: validPath, headers: headersFor(write, { 'if-none-match': '*' }) } });
    let chosen = corpusCases;
    if (!FULL) {
      // Reduced: the cases that once crashed the platform, a malformed body, a wrong type, a long URL, and a seeded few.
      const always = new Set(['body corpus: deep 10,000 objects, NUL leaf', 'body corpus: deep 10,000 objects, lone surrogate leaf', 'body corpus: bad JSON', 'body corpus: text/plain', 'long URL', 'If-None-Match: *']);
      const rest = corpusCases.filter((c) => !always.has(c.name) && !c.name.includes('oversize'));
      const picked = fc.sample(fc.shuffledSubarray(rest, { minLength: 3, maxLength: 3 }), { seed: seedOf(`${op.operationId}:corpus`), numRuns: 1 })[0];
      chosen = [...corpusCases.filter((c) => always.has(c.name)), ...picked];
    }

    // Generated cases.
    const segment = (name: string) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(encodeURIComponent(objectFor(op.path, name, objects))) },
        { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,30}$/) },
        { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((s) => encodeURIComponent(s)) },
        { weight: 1, arbitrary: fc.constantFrom(...PATH_CORPUS) },
      );
    const query = fc.record(
      Object.fromEntries(queryParams.map((q) => [q.name as string, fc.oneof({ weight: 3, arbitrary: arbitraryOf(q.schema, resolve) }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_VALUES) }).map(queryValue)])),
      { requiredKeys: [] },
    );
    const body = bodySchema ? fc.oneof({ weight: 2, arbitrary: arbitraryOf(bodySchema, resolve) }, { weight: 3, arbitrary: mutated(arbitraryOf(bodySchema, resolve)) }) : fc.constant(undefined);
    const generated = fc.record({
      path: fc.tuple(...pathParams.map((p) => segment(p.name as string))),
      query,
      extra: fc.option(fc.constantFrom(...QUERY_CORPUS), { freq: 10 }),
      body,
      key: fc.constantFrom<'write' | 'read' | 'none'>(...Array(17).fill('write'), 'read', 'read', 'none'),
      inm: fc.boolean(),
    });
    const count = Math.max(PER_OPERATION - chosen.length, Math.ceil(PER_OPERATION / 2));
    const samples = fc.sample(generated, { seed: seedOf(op.operationId), numRuns: count });
    const cases = samples.map((s, i): Case => {
      let k = 0;
      const path = fill(() => s.path[k++]);
      const qs = [...Object.entries(s.query).map(([n, v]) => `${n}=${v}`), ...(s.extra ? [s.extra] : [])].join('&');
      const extra: Record<string, string> = {};
      if (op.method === 'GET' && s.inm) extra['if-none-match'] = '*';
      if (op.method === 'PATCH' && s.inm) extra['if-match'] = '"1"';
      if (s.body !== undefined) extra['content-type'] = 'application/json';
      return { name: `generated #${i}`, req: { method: op.method, path: qs ? `${path}?${qs}` : path, headers: headersFor(keyOf(s.key, op), extra), ...(s.body !== undefined ? { body: jsonText(s.body) } : {}) } };
    });
    return [...chosen, ...cases];
  }

  /** Send every case of `cases` (bounded concurrency) and collect the failures `check` names. */
  async function run(where: (c: Case) => string, cases: Case[], check: (c: Case, a: RawAnswer) => string | null): Promise<Failure[]> {
    const failures: Failure[] = [];
    await inPool(cases, CONCURRENCY, async (c) => {
      let answer: RawAnswer;
      const t0 = Date.now();
      try {
        answer = await client.send(c.req);
        const ms = Date.now() - t0;
        if (ms > 2000) slow.push(`${ms} ms ${where(c)} [${c.name}] ${describeRequest(c.req).slice(0, 200)}`);
      } catch (err) {
        failures.push({ where: where(c), name: c.name, request: describeRequest(c.req), answer: 'no answer', why: (err as Error).message });
        return;
      }
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      const why = answer.status >= 500 ? `a ${answer.status}` : check(c, answer);
      if (why) failures.push({ where: where(c), name: c.name, request: describeRequest(c.req), answer: `${answer.status} ${answer.headers['content-type'] ?? ''} ${answer.text.slice(0, 300)}`, why: answer.status >= 500 ? `${why}: ${check(c, answer) ?? ''}` : why });
    });
    return failures;
  }

  /** Fail with every failure listed (the first 40), with the seed that reproduces them. */
  function report(kind: string, failures: Failure[]): void {
    if (slow.length) console.log(`[fuzz ${mode}] ${slow.length} request(s) over 2 s:\n${slow.splice(0).slice(0, 20).join('\n')}`);
    if (!failures.length) return;
    const lines = failures.slice(0, 40).map((f) => `- ${f.where} [${f.name}]\n    request: ${f.request}\n    answer:  ${f.answer}\n    why:     ${f.why}`);
    expect.fail(`${kind} (${mode}): ${failures.length} failing case(s); reproduce with AGP_FUZZ_SEED=${SEED}\n${lines.join('\n')}`);
  }

  it(
    'every REST operation: property-based cases and the corpus; no 5xx, every answer as the document lists it',
    async () => {
      const generating = Date.now();
      const ops = oracle.operations();
      const byCase = new Map<Case, Operation>();
      const cases = ops.flatMap((op) => {
        const list = restCases(op);
        perOperation[`${op.method} ${op.path}`] = list.length;
        for (const c of list) byCase.set(c, op);
        return list;
      });
      const started = Date.now();
      console.log(`[fuzz ${mode}] REST: ${cases.length} cases generated in ${((started - generating) / 1000).toFixed(1)} s`);
      const failures = await run((c) => { const op = byCase.get(c)!; return `${op.method} ${op.path} (${op.operationId})`; }, cases, (c, a) => oracle.mismatch(byCase.get(c)!, a));
      const counts = Object.values(perOperation);
      console.log(`[fuzz ${mode}] REST: ${ops.length} operations, ${cases.length} cases (${Math.min(...counts)}–${Math.max(...counts)} per operation) in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${JSON.stringify(statuses)}; ${failures.length} failing`);
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(PER_OPERATION);
      report('REST fuzzing', failures);
    },
    FULL ? 3_600_000 : 300_000,
  );

  it(
    'MCP JSON-RPC: tools/call of every tool, resources/read of every template, prompts/get of every prompt; no internal error',
    async () => {
      const p = platform();
      const mcpOp = oracle.operations().find((o) => o.operationId === 'mcpEndpoint')!;
      const tools = await mcpList(client, p.writeKey, 'tools/list', 'tools');
      const templates = await mcpList(client, p.writeKey, 'resources/templates/list', 'resourceTemplates');
      const resources = await mcpList(client, p.writeKey, 'resources/list', 'resources');
      const prompts = await mcpList(client, p.writeKey, 'prompts/list', 'prompts');
      expect(tools.length).toBeGreaterThan(0);
      const identity = (s: Json) => s;
      const ids = fc.constantFrom(objects.agentId, objects.runId, objects.interventionId, objects.policyId, objects.approvalId, objects.evalRunId, '2026-01-01');
      const text = fc.oneof({ weight: 3, arbitrary: ids }, { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) }, { weight: 2, arbitrary: fc.constantFrom(...EDGE_VALUES.filter((v) => typeof v === 'string')) });
      const key = fc.constantFrom<'write' | 'read'>(...Array(9).fill('write'), 'read');
      const rpc = (method: string, params: unknown, k: 'write' | 'read'): Case => ({
        name: method,
        req: { method: 'POST', path: '/api/v1/mcp', headers: { ...headersFor(keyOf(k)), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }, body: jsonText({ jsonrpc: '2.0', id: 1, method, params }) },
      });
      const groups: Array<{ where: string; cases: Case[] }> = [];
      for (const tool of tools) {
        const schema = (tool.inputSchema ?? {}) as Json;
        const args = fc.oneof({ weight: 2, arbitrary: arbitraryOf(schema, identity) }, { weight: 3, arbitrary: mutated(arbitraryOf(schema, identity)) });
        const samples = fc.sample(fc.tuple(args, key), { seed: seedOf(`tool:${tool.name}`), numRuns: PER_OPERATION });
        groups.push({ where: `tools/call ${tool.name}`, cases: samples.map(([a, k], i) => ({ ...rpc('tools/call', { name: tool.name, arguments: a }, k), name: `tools/call #${i}` })) });
      }
      for (const t of templates) {
        const template = String(t.uriTemplate);
        const samples = fc.sample(fc.tuple(fc.array(text, { minLength: 4, maxLength: 4 }), key), { seed: seedOf(`template:${template}`), numRuns: PER_OPERATION });
        groups.push({
          where: `resources/read ${template}`,
          cases: samples.map(([values, k], i) => {
            let n = 0;
            const uri = template.replace(/\{[^}]+\}/g, () => String(values[n++ % values.length]));
            return { ...rpc('resources/read', { uri }, k), name: `resources/read #${i}` };
          }),
        });
      }
      groups.push({ where: 'resources/read (static)', cases: resources.map((r) => ({ ...rpc('resources/read', { uri: r.uri }, 'write'), name: r.uri })) });
      for (const prompt of prompts) {
        const names = ((prompt.arguments ?? []) as Json[]).map((a) => a.name as string);
        const argArb = fc.record(Object.fromEntries(names.map((n) => [n, fc.oneof({ weight: 5, arbitrary: text }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_VALUES) })])), { requiredKeys: [] });
        const samples = fc.sample(fc.tuple(argArb, key), { seed: seedOf(`prompt:${prompt.name}`), numRuns: PER_OPERATION });
        groups.push({ where: `prompts/get ${prompt.name}`, cases: samples.map(([a, k], i) => ({ ...rpc('prompts/get', { name: prompt.name, arguments: a }, k), name: `prompts/get #${i}` })) });
      }
      const where = new Map<Case, string>(groups.flatMap((g) => g.cases.map((c) => [c, g.where] as const)));
      const cases = groups.flatMap((g) => g.cases);
      const started = Date.now();
      const failures = await run(
        (c) => where.get(c)!,
        cases,
        (_c, a) => {
          const documented = oracle.mismatch(mcpOp, a);
          if (documented) return documented;
          const { message } = (() => { try { return { message: JSON.parse(a.text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('') || a.text) }; } catch { return { message: null }; } })();
          if (a.status !== 200) return `HTTP ${a.status}`;
          if (!message) return 'no JSON-RPC message';
          if (message.error?.code === -32603) return `JSON-RPC internal error: ${message.error.message}`;
          const code = message.result?.structuredContent?.error?.code;
          if (message.result?.isError && (code === 'internal' || code === 'unavailable')) return `tool error ${code}: ${message.result.content?.[0]?.text?.slice(0, 200)}`;
          return null;
        },
      );
      for (const g of groups) perOperation[g.where] = g.cases.length;
      console.log(`[fuzz ${mode}] MCP: ${tools.length} tools, ${templates.length} resource templates, ${resources.length} resources, ${prompts.length} prompts; ${cases.length} cases (${PER_OPERATION} per tool, template and prompt) in ${((Date.now() - started) / 1000).toFixed(1)} s; ${failures.length} failing`);
      report('MCP fuzzing', failures);
    },
    FULL ? 3_600_000 : 300_000,
  );

  it('afterwards every process is alive and /healthz answers', async () => {
    const p = platform();
    for (const [service, pid] of Object.entries(p.pids ?? {})) expect(() => process.kill(pid, 0), `${service} (pid ${pid}) exited`).not.toThrow();
    const health = await client.send({ method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
    const ready = await client.send({ method: 'GET', path: '/readyz' });
    expect(ready.status).toBe(200);
  });
},
// A configured deployment: registered MCP servers' headers can be sealed (the missing-key 503 is tested in
// services/policies/test/mcp-servers.test.ts), so a tool call with headers is decided on its fields.
{ env: { AGP_SECRETS_KEY: randomBytes(32).toString('base64') } });

import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { createPgliteSql, type Sql } from '../src/index.js';

/** The embedded database's statements as database client spans, of the pg instrumentation's shape (real PGlite). */
describe('PGlite statement spans', () => {
  let tracing: MemoryTracing;
  let sql: Sql;
  const dbSpans = () => tracing.spans().filter((s) => s.instrumentationScope.name === 'agp.pglite');
  /** Run `fn` under a recording span named `work`. */
  const underRequest = (fn: () => Promise<unknown>) =>
    trace.getTracer('test').startActiveSpan('work', async (work) => {
      try {
        await fn();
      } finally {
        work.end();
      }
    });

  beforeAll(async () => {
    tracing = startMemoryTracing();
    sql = await createPgliteSql();
    await sql.exec('CREATE TABLE t (id int PRIMARY KEY, secret text)');
  });
  afterAll(async () => {
    await sql?.close();
    await tracing.stop();
  });

  it('a query, a transaction and a failing statement under a recording span are client spans with the statement text and never its values', async () => {
    tracing.reset();
    await underRequest(async () => {
      await sql.query('INSERT INTO t (id, secret) VALUES ($1, $2)', [1, 'hunter2']);
      await sql.transaction((tx) => tx.query('SELECT secret FROM t WHERE id = $1', [1]));
      await expect(sql.query('INSERT INTO t (id, secret) VALUES ($1, $2)', [1, 'again'])).rejects.toThrow();
    });
    const work = tracing.spans().find((s) => s.name === 'work')!;
    const spans = dbSpans();
    expect(spans.map((s) => s.name)).toEqual(['pg.query:INSERT postgres', 'pg.query:SELECT postgres', 'pg.query:INSERT postgres']);
    for (const s of spans) {
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(s.parentSpanContext?.spanId).toBe(work.spanContext().spanId);
      expect(s.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': 'postgres' });
    }
    expect(spans[1].attributes['db.query.text']).toBe('SELECT secret FROM t WHERE id = $1');
    expect(spans[2].status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[2].attributes['error.type']).toBe('23505');
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toMatch(/hunter2|again/);
  });

  it('makes no span outside a recording span', async () => {
    tracing.reset();
    await sql.query('SELECT 1');
    expect(dbSpans()).toEqual([]);
  });
});

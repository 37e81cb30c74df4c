/**
 * The IngestLog contract, run against every adapter (JetStream, SQL on PGlite / PostgreSQL).
 * Each test uses its own organisation token in the subject and its own durable name, so tests in one
 * suite never see each other's messages.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ingestSubject, type IngestDelivery, type IngestLog, type IngestLogLogger } from '../src/index.js';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

export interface IngestLogFixture {
  log: IngestLog;
  prefix: string;
  /** Releases what the fixture created (stream, database). */
  cleanup(): Promise<void>;
  /** Make the log keep messages for `durable` before it first consumes (JetStream: the durable exists before its first message). */
  prepare?(durable: string, filter: string): Promise<void>;
}

/** A logger that keeps records instead of printing (handler failures are expected in some tests). */
export class QuietLogger implements IngestLogLogger {
  readonly records: Array<{ level: string; obj: object; msg?: string }> = [];
  info(obj: object, msg?: string): void {
    this.records.push({ level: 'info', obj, msg });
  }
  error(obj: object, msg?: string): void {
    this.records.push({ level: 'error', obj, msg });
  }
  warn(obj: object, msg?: string): void {
    this.records.push({ level: 'warn', obj, msg });
  }
}

/** Wait until `cond()` holds, polling every 20 ms. @throws Error after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!cond()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

interface Payload {
  n: number;
  text?: string;
}

/** Register the contract's tests in the current describe block. */
export function ingestLogContract(makeFixture: () => Promise<IngestLogFixture>): void {
  let f: IngestLogFixture;
  let n = 0;
  /** A fresh organisation, subject and durable name per test. */
  const scope = async () => {
    n += 1;
    const org = `org-${n}.x`;
    const s = {
      subject: ingestSubject(f.prefix, org, 'interventions'),
      filter: ingestSubject(f.prefix, org, 'interventions'),
      durable: `test-${n}`,
    };
    await f.prepare?.(s.durable, s.filter);
    return s;
  };
  const stops: Array<{ stop(): Promise<void> }> = [];
  /** Consume into an array, acking each message unless `onBatch` settles them itself. */
  const collect = async (durable: string, filter: string, opts: { batchSize?: number; onBatch?: (b: IngestDelivery<Payload>[]) => Promise<void> } = {}) => {
    const got: IngestDelivery<Payload>[] = [];
    const batches: number[] = [];
    const c = await f.log.consume<Payload>({
      durable,
      subjectFilter: filter,
      batchSize: opts.batchSize,
      handler: async (batch) => {
        batches.push(batch.length);
        got.push(...batch);
        if (opts.onBatch) await opts.onBatch(batch);
        else await Promise.all(batch.map((m) => m.ack()));
      },
    });
    stops.push(c);
    return { got, batches, stop: () => c.stop() };
  };

  beforeAll(async () => {
    f = await makeFixture();
  });
  afterAll(async () => {
    for (const s of stops) await s.stop();
    await f?.log.close();
    await f?.cleanup();
  });

  it('delivers a published message once with attempt 1, and ack settles it', async () => {
    const s = await scope();
    for (let i = 0; i < 3; i++) {
      await expect(f.log.publish({ subject: s.subject, msg_id: `${s.durable}-m${i}`, payload: { n: i, text: 'héllo' } })).resolves.toEqual({ duplicate: false });
    }
    const c = await collect(s.durable, s.filter);
    await until(() => c.got.length >= 3, 10_000, '3 deliveries');
    await sleep(300);
    expect(c.got.map((m) => m.payload)).toEqual([0, 1, 2].map((i) => ({ n: i, text: 'héllo' })));
    expect(c.got.map((m) => m.msg_id)).toEqual([0, 1, 2].map((i) => `${s.durable}-m${i}`));
    expect(c.got.every((m) => m.attempt === 1 && m.subject === s.subject)).toBe(true);
  });

  it('stores the same msg_id once: the second publish is a duplicate and it is delivered once', async () => {
    const s = await scope();
    await expect(f.log.publish({ subject: s.subject, msg_id: `${s.durable}-same`, payload: { n: 1 } })).resolves.toEqual({ duplicate: false });
    await expect(f.log.publish({ subject: s.subject, msg_id: `${s.durable}-same`, payload: { n: 2 } })).resolves.toEqual({ duplicate: true });
    const c = await collect(s.durable, s.filter);
    await until(() => c.got.length >= 1);
    await sleep(500);
    expect(c.got.map((m) => m.payload)).toEqual([{ n: 1 }]);
  });

  it('keeps an acked msg_id as a duplicate afterwards', async () => {
    const s = await scope();
    await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-acked`, payload: { n: 1 } });
    const c = await collect(s.durable, s.filter);
    await until(() => c.got.length >= 1);
    await sleep(100);
    await expect(f.log.publish({ subject: s.subject, msg_id: `${s.durable}-acked`, payload: { n: 1 } })).resolves.toEqual({ duplicate: true });
    await sleep(300);
    expect(c.got).toHaveLength(1);
  });

  it('redelivers a nak-ed message with attempt 2', async () => {
    const s = await scope();
    await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-nak`, payload: { n: 7 } });
    const c = await collect(s.durable, s.filter, {
      onBatch: async (batch) => {
        for (const m of batch) await (m.attempt === 1 ? m.nak() : m.ack());
      },
    });
    await until(() => c.got.length >= 2);
    await sleep(300);
    expect(c.got.map((m) => [m.payload.n, m.attempt])).toEqual([
      [7, 1],
      [7, 2],
    ]);
  });

  it('redelivers after the delay given to nak', async () => {
    const s = await scope();
    await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-delay`, payload: { n: 1 } });
    const at: number[] = [];
    const c = await collect(s.durable, s.filter, {
      onBatch: async (batch) => {
        at.push(Date.now());
        for (const m of batch) await (m.attempt === 1 ? m.nak(700) : m.ack());
      },
    });
    await until(() => c.got.length >= 2);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(600);
  });

  it('redelivers the messages of a handler that throws', async () => {
    const s = await scope();
    await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-throw`, payload: { n: 1 } });
    const c = await collect(s.durable, s.filter, {
      onBatch: async (batch) => {
        if (batch[0].attempt === 1) throw new Error('handler crashed (expected by the test)');
        await Promise.all(batch.map((m) => m.ack()));
      },
    });
    await until(() => c.got.length >= 2, 10_000);
    expect(c.got.map((m) => m.attempt)).toEqual([1, 2]);
  });

  it('resumes a restarted consumer after the acked messages, redelivering none of them', async () => {
    const s = await scope();
    for (let i = 0; i < 5; i++) await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-r${i}`, payload: { n: i } });
    const first = await collect(s.durable, s.filter);
    await until(() => first.got.length >= 5);
    await sleep(200);
    await first.stop();
    for (let i = 5; i < 8; i++) await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-r${i}`, payload: { n: i } });
    const second = await collect(s.durable, s.filter);
    await until(() => second.got.length >= 3);
    await sleep(500);
    expect(first.got.map((m) => m.payload.n)).toEqual([0, 1, 2, 3, 4]);
    expect(second.got.map((m) => m.payload.n)).toEqual([5, 6, 7]);
  });

  it('delivers only messages whose subject matches the filter', async () => {
    const s = await scope();
    const other = s.subject.replace(/\.interventions$/, '.runs');
    await f.log.publish({ subject: other, msg_id: `${s.durable}-other`, payload: { n: 0 } });
    await f.log.publish({ subject: s.subject, msg_id: `${s.durable}-mine`, payload: { n: 1 } });
    const c = await collect(s.durable, s.filter);
    await until(() => c.got.length >= 1);
    await sleep(300);
    expect(c.got.map((m) => m.payload.n)).toEqual([1]);
  });

  it('accepts many concurrent publishes and hands them over in batches of at most batchSize', async () => {
    const s = await scope();
    const total = 300;
    const acks = await Promise.all(
      Array.from({ length: total }, (_, i) => f.log.publish({ subject: s.subject, msg_id: `${s.durable}-c${i}`, payload: { n: i, text: 'x'.repeat(800) } })),
    );
    expect(acks.filter((a) => a.duplicate)).toHaveLength(0);
    const c = await collect(s.durable, s.filter, { batchSize: 50 });
    await until(() => c.got.length >= total, 20_000, `${total} deliveries`);
    await sleep(300);
    expect(new Set(c.got.map((m) => m.payload.n)).size).toBe(total);
    expect(c.got).toHaveLength(total);
    expect(Math.max(...c.batches)).toBeLessThanOrEqual(50);
    expect(c.batches.length).toBeLessThan(total);
  });
}

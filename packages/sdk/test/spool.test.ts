/**
 * The durable report spool on a real folder: what a new process finds after the last one died (pending reports in
 * order, acknowledged ones gone, a torn last line skipped), the size bound, compaction, the lock, and rejected reports
 * set aside. Source: docs/sdk.md §Spool.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSpool, MemorySpool, replay, type SpoolEvent } from '../src/spool.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'agp-spool-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const ev = (i: number, pad = ''): SpoolEvent => ({ id: `ev-${i}`, type: 'action.record', timestamp: '2026-11-25T00:00:00.000Z', body: { i, pad } });

describe('FileSpool', () => {
  it('a new process gets the reports not acknowledged, in order; a torn last line is skipped', () => {
    const dir = fresh();
    const a = new FileSpool(dir, 1 << 20);
    for (let i = 0; i < 5; i++) a.append(ev(i));
    a.ack(['ev-1', 'ev-3']);
    a.close();
    appendFileSync(join(dir, 'spool.jsonl'), '{"e":{"id":"ev-torn","ty');
    const b = new FileSpool(dir, 1 << 20);
    expect(b.recovered().map((e) => e.id)).toEqual(['ev-0', 'ev-2', 'ev-4']);
    expect(b.pendingBytes()).toBeGreaterThan(0);
    // The file was rewritten with the pending reports only.
    expect(replay(readFileSync(join(dir, 'spool.jsonl'), 'utf8')).map((e) => e.id)).toEqual(['ev-0', 'ev-2', 'ev-4']);
    expect(readFileSync(join(dir, 'spool.jsonl'), 'utf8')).not.toContain('"a"');
    b.close();
  });

  it('keeps each report’s act span traceparent across a restart and a compaction; a file written without it loads as before', () => {
    const dir = fresh();
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    // A line as an SDK before trace links wrote it, then one with the traceparent beside the event's fields.
    writeFileSync(join(dir, 'spool.jsonl'), JSON.stringify({ e: ev(0) }) + '\n');
    const a = new FileSpool(dir, 64 << 20);
    expect(a.recovered()).toEqual([ev(0)]);
    a.append({ ...ev(1), traceparent: tp });
    const pad = 'z'.repeat(4000);
    for (let i = 2; i < 400; i++) {
      a.append(ev(i, pad));
      a.ack([`ev-${i}`]);
    }
    // Compacted (acknowledged lines dominated): the pending ones are rewritten with their traceparent.
    expect(statSync(join(dir, 'spool.jsonl')).size).toBeLessThan(1 << 20);
    a.close();
    const b = new FileSpool(dir, 64 << 20);
    expect(b.recovered()).toEqual([ev(0), { ...ev(1), traceparent: tp }]);
    b.close();
  });

  it('is full at its bound of pending bytes, and no longer once reports are acknowledged', () => {
    const dir = fresh();
    const s = new FileSpool(dir, 2000);
    let n = 0;
    while (!s.full()) s.append(ev(n++, 'x'.repeat(200)));
    expect(n).toBeGreaterThan(3);
    expect(n).toBeLessThan(12);
    s.ack(Array.from({ length: n }, (_, i) => `ev-${i}`));
    expect(s.full()).toBe(false);
    expect(s.pendingBytes()).toBe(0);
    s.close();
  });

  it('compacts when acknowledged lines dominate a file over 1 MiB', () => {
    const dir = fresh();
    const s = new FileSpool(dir, 64 << 20);
    const pad = 'y'.repeat(4000);
    for (let i = 0; i < 400; i++) {
      s.append(ev(i, pad));
      if (i !== 7) s.ack([`ev-${i}`]);
    }
    expect(statSync(join(dir, 'spool.jsonl')).size).toBeLessThan(1 << 20);
    s.append(ev(1000));
    s.close();
    expect(replay(readFileSync(join(dir, 'spool.jsonl'), 'utf8')).map((e) => e.id)).toEqual(['ev-7', 'ev-1000']);
  });

  it('one process at a time: a live holder is refused, a dead one taken over', async () => {
    const dir = fresh();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      writeFileSync(join(dir, 'LOCK'), String(child.pid));
      expect(() => new FileSpool(dir, 1 << 20)).toThrow(new RegExp(`held by process ${child.pid}`));
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
    }
    const s = new FileSpool(dir, 1 << 20);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(String(process.pid));
    s.close();
  });

  it('reports refused for good go to rejected.jsonl with why, and are not sent again', () => {
    const dir = fresh();
    const s = new FileSpool(dir, 1 << 20);
    s.append(ev(1));
    s.append(ev(2));
    s.reject([{ event: ev(1), status: 422, message: 'body.x: bad' }]);
    s.close();
    const rejected = readFileSync(join(dir, 'rejected.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rejected).toEqual([expect.objectContaining({ status: 422, message: 'body.x: bad', event: ev(1) })]);
    expect(new FileSpool(dir, 1 << 20).recovered().map((e) => e.id)).toEqual(['ev-2']);
  });
});

describe('MemorySpool', () => {
  it('is bounded too, and keeps what was refused for good', () => {
    const s = new MemorySpool(1000);
    let n = 0;
    while (!s.full()) s.append(ev(n++));
    expect(n).toBeLessThan(10);
    s.reject([{ event: ev(0), status: 413, message: 'too large' }]);
    expect(s.rejected).toHaveLength(1);
    expect(s.recovered()).toEqual([]);
  });
});

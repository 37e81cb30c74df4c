/**
 * Where reports wait until the platform acknowledges them: a durable append-only file (`spoolDir`), or memory only.
 *
 * File format (`<spoolDir>/spool.jsonl`): one JSON object per line, `{"e": <ingest event>}` for a report (with its
 * act span's `traceparent` beside the event's fields when the agent traces; a file without it loads the same) and
 * `{"a": [<event id>, …]}` for ids the platform acknowledged. Opening the spool replays it: every `e` without a later
 * `a` is pending again and is sent with its original id (so a copy that had already arrived is a duplicate, never a
 * second record). A torn last line (the process died mid-write) is skipped. The file is then rewritten with only the
 * pending reports (write a temp file, fsync, rename), and again whenever acknowledged lines dominate it.
 *
 * Durability: `append` is a synchronous `write(2)` into the file, so a report is in the kernel before `act` returns and
 * survives a SIGKILL of the agent. fsync runs at most every `fsyncIntervalMs` (100 ms by default): a power loss or a
 * kernel crash can cost the reports of that last interval.
 *
 * Size bound: `maxBytes` of pending reports. Past it the spool says it is full; new actions then wait for room (the
 * reporter's backpressure, ./reporter.ts) and are refused (fail closed, counted in `status()`) only when the platform
 * stalls, while the records of actions already running are still written (the bound may be overshot by them). Nothing is ever dropped silently. One process holds a spool at a time (a `LOCK` file with its
 * pid; a lock whose process is gone, e.g. after a SIGKILL, is taken over).
 * Source: docs/sdk.md §Spool.
 */
import { closeSync, existsSync, fsync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { acquirePidLock } from '@agp/runtime/lock';

/**
 * One report: the event as `POST /api/v1/ingest/` takes it (`id`, `type`, `timestamp`, `body`), and the W3C
 * `traceparent` of the `agp.act` span that produced it when the agent traces (kept in the spool, so a report sent
 * after a restart still links to its act; never sent in the event: the reporter leaves it out of the request body).
 */
export interface SpoolEvent {
  id: string;
  type: string;
  timestamp: string;
  body: Record<string, unknown>;
  /** The producing `agp.act` span's `traceparent` (sampled spans only); absent otherwise and in older spool files. */
  traceparent?: string;
}

/** A store of pending reports. */
export interface Spool {
  /** Whether reports survive a crash of the process (a file) or not (memory). */
  readonly durable: boolean;
  /** Reports left pending by an earlier process, in order (empty for memory). */
  recovered(): SpoolEvent[];
  /** Keep one report until it is acknowledged. Synchronous. */
  append(ev: SpoolEvent): void;
  /** Forget acknowledged (or dead-lettered) reports: ids appended and not yet acknowledged (the reporter's pending ones). */
  ack(ids: readonly string[]): void;
  /** Set aside reports the platform refused for good (422, 413), with why; they are not sent again. */
  reject(items: ReadonlyArray<{ event: SpoolEvent; status: number; message: string }>): void;
  /** Bytes of pending reports. */
  pendingBytes(): number;
  /** Whether pending reports passed the bound. */
  full(): boolean;
  /** fsync now if anything was written since the last one. */
  sync(): void;
  /** Sync, release the lock, close the file. */
  close(): void;
}

/**
 * Memory only: lossy when the process dies. Bounded by `maxBytes` like the file. The reports themselves are the
 * reporter's pending ones; this counts their estimated bytes (from the id alone, so `ack` needs no table of sizes).
 */
export class MemorySpool implements Spool {
  readonly durable = false;
  private bytes = 0;
  /** Reports the platform refused for good, kept for `status()`. */
  readonly rejected: Array<{ event: SpoolEvent; status: number; message: string }> = [];
  constructor(private readonly maxBytes: number) {}
  recovered(): SpoolEvent[] {
    return [];
  }
  append(ev: SpoolEvent): void {
    this.bytes += approxBytes(ev.id);
  }
  ack(ids: readonly string[]): void {
    for (const id of ids) this.bytes -= approxBytes(id);
    if (this.bytes < 0) this.bytes = 0;
  }
  reject(items: ReadonlyArray<{ event: SpoolEvent; status: number; message: string }>): void {
    this.rejected.push(...items.slice(0, Math.max(0, 1000 - this.rejected.length)));
    this.ack(items.map((i) => i.event.id));
  }
  pendingBytes(): number {
    return this.bytes;
  }
  full(): boolean {
    return this.bytes >= this.maxBytes;
  }
  sync(): void {}
  close(): void {}
}

/** A cheap size estimate for memory mode (no serialisation on the hot path). */
function approxBytes(id: string): number {
  return 256 + id.length;
}

/** The durable spool: see the module docs. */
export class FileSpool implements Spool {
  readonly durable = true;
  private fd: number;
  private dirty = false;
  private fileBytes = 0;
  private liveBytes = 0;
  private readonly sizes = new Map<string, number>();
  private readonly pending: SpoolEvent[];
  private syncing = false;
  private closed = false;
  private readonly file: string;
  private readonly releaseLock: () => void;

  /**
   * Open (or create) the spool in `dir`, take its lock and read what an earlier process left.
   * @throws Error when another live process holds the spool.
   */
  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'spool.jsonl');
    this.releaseLock = acquirePidLock(join(dir, 'LOCK'), (pid) => new Error(`the spool ${dir} is held by process ${pid}; give each agent process its own spoolDir`));
    this.pending = existsSync(this.file) ? replay(readFileSync(this.file, 'utf8')) : [];
    this.fd = this.rewrite(this.pending);
  }

  recovered(): SpoolEvent[] {
    return this.pending.splice(0);
  }

  append(ev: SpoolEvent): void {
    const line = JSON.stringify({ e: ev }) + '\n';
    const n = Buffer.byteLength(line);
    writeSync(this.fd, line);
    this.sizes.set(ev.id, n);
    this.liveBytes += n;
    this.fileBytes += n;
    this.dirty = true;
  }

  ack(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const line = JSON.stringify({ a: ids }) + '\n';
    writeSync(this.fd, line);
    this.fileBytes += Buffer.byteLength(line);
    this.dirty = true;
    for (const id of ids) {
      const n = this.sizes.get(id);
      if (n !== undefined) {
        this.liveBytes -= n;
        this.sizes.delete(id);
      }
    }
    // Acknowledged lines dominate: rewrite the file with the pending reports only.
    if (this.fileBytes > 1024 * 1024 && this.fileBytes > 4 * this.liveBytes) this.compact();
  }

  reject(items: ReadonlyArray<{ event: SpoolEvent; status: number; message: string }>): void {
    if (items.length === 0) return;
    const lines = items.map((i) => JSON.stringify({ at: new Date().toISOString(), status: i.status, message: i.message, event: i.event }) + '\n').join('');
    const fd = openSync(join(this.dir, 'rejected.jsonl'), 'a');
    try {
      writeSync(fd, lines);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.ack(items.map((i) => i.event.id));
  }

  pendingBytes(): number {
    return this.liveBytes;
  }

  full(): boolean {
    return this.liveBytes >= this.maxBytes;
  }

  sync(): void {
    if (!this.dirty || this.syncing || this.closed) return;
    this.dirty = false;
    this.syncing = true;
    fsync(this.fd, () => {
      this.syncing = false;
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.releaseLock();
    }
  }

  /** Rewrite the file with the reports still pending (those with a size entry), then carry on appending to it. */
  private compact(): void {
    const live: SpoolEvent[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      const parsed = parseLine(line);
      if (parsed && 'e' in parsed && this.sizes.has(parsed.e.id)) live.push(parsed.e);
    }
    if (!this.syncing) fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = this.rewrite(live);
  }

  /** Write `events` to a temp file, fsync, rename it over the spool; returns an append fd of the new file. */
  private rewrite(events: readonly SpoolEvent[]): number {
    const tmp = `${this.file}.tmp`;
    this.sizes.clear();
    this.liveBytes = 0;
    let text = '';
    for (const ev of events) {
      const line = JSON.stringify({ e: ev }) + '\n';
      const n = Buffer.byteLength(line);
      this.sizes.set(ev.id, n);
      this.liveBytes += n;
      text += line;
    }
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    this.fileBytes = this.liveBytes;
    this.dirty = false;
    return openSync(this.file, 'a');
  }
}

type Line = { e: SpoolEvent } | { a: string[] };

function parseLine(line: string): Line | null {
  if (!line) return null;
  try {
    const v = JSON.parse(line) as Line;
    if (v && typeof v === 'object' && (('e' in v && v.e && typeof v.e.id === 'string') || ('a' in v && Array.isArray(v.a)))) return v;
  } catch {
    /* a torn last line */
  }
  return null;
}

/** The pending reports of a spool file's text, in order: every `e` without a later `a`. */
export function replay(text: string): SpoolEvent[] {
  const events = new Map<string, SpoolEvent>();
  for (const line of text.split('\n')) {
    const parsed = parseLine(line);
    if (!parsed) continue;
    if ('e' in parsed) events.set(parsed.e.id, parsed.e);
    else for (const id of parsed.a) events.delete(id);
  }
  return [...events.values()];
}

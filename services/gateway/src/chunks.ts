/**
 * Splitting an ingest batch into request/reply chunks that fit a NATS message (1 MiB by default).
 * Source: architecture §6 (batch-aware ingest).
 */

import { clientEventId } from '@agp/contracts';

/** Largest serialized chunk sent to the ingest service, in bytes. */
export const MAX_CHUNK_BYTES = 512 * 1024;
/** Largest single event, in bytes; a bigger one is answered 413 on its own. */
export const MAX_EVENT_BYTES = 900 * 1024;

/** A chunk of a batch: its events and the index of its first event in the batch. */
export interface BatchChunk {
  offset: number;
  events: unknown[];
}

/** An event too large for any chunk, reported per event. */
export interface OversizedEvent {
  index: number;
  id: string | null;
  bytes: number;
}

/**
 * Split `batch` into chunks of at most `maxChunkBytes` serialized bytes, keeping order. Events over
 * `maxEventBytes` are left out and returned in `oversized`. Pure.
 * @param bodyBytes size of the request body the batch came from, when known: a body that fits one chunk is
 *   sent as one without measuring each event (the common case: 100 events of ~800 B).
 * @param skip indices of events refused already (answered on their own by the caller): left out of every chunk.
 */
export function chunkBatch(batch: unknown[], maxChunkBytes = MAX_CHUNK_BYTES, maxEventBytes = MAX_EVENT_BYTES, bodyBytes?: number, skip: ReadonlySet<number> = new Set()): { chunks: BatchChunk[]; oversized: OversizedEvent[] } {
  if (skip.size === 0 && bodyBytes !== undefined && bodyBytes <= Math.min(maxChunkBytes, maxEventBytes) - 64) {
    return { chunks: batch.length ? [{ offset: 0, events: batch }] : [], oversized: [] };
  }
  const chunks: BatchChunk[] = [];
  const oversized: OversizedEvent[] = [];
  let current: BatchChunk | null = null;
  let size = 0;
  batch.forEach((event, index) => {
    if (skip.has(index)) {
      current = null;
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(event) ?? 'null');
    if (bytes > maxEventBytes) {
      const id = clientEventId(event);
      oversized.push({ index, id, bytes });
      current = null;
      return;
    }
    if (!current || size + bytes + 1 > maxChunkBytes) {
      current = { offset: index, events: [] };
      chunks.push(current);
      size = 64;
    }
    // Offsets must stay contiguous inside a chunk: an oversized event above closed the previous chunk.
    current.events.push(event);
    size += bytes + 1;
  });
  return { chunks, oversized };
}

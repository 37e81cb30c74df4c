import { hash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** A new UUIDv7 (time-ordered). Ids the platform issues are UUIDv7 (architecture §4, Wire style). */
export function newId(): string {
  return uuidv7();
}

const NAMESPACE = '6f1c1f5e-6a3e-4d55-9a49-0a5c3b8e7d21';
/** {@link NAMESPACE} as its 16 bytes, parsed once. */
const NAMESPACE_BYTES = Buffer.from(NAMESPACE.replace(/-/g, ''), 'hex');

/**
 * Deterministic UUID (v5, RFC 9562 §5.5) for a name, e.g. the event-store event id of a client-supplied ingest event
 * id, scoped by organisation so two organisations' ids never collide: SHA-1 of the namespace's bytes and the parts
 * joined by U+0000 as UTF-8, with the version and variant bits set. The same ids as the `uuid` package's `v5`, made
 * with one one-shot hash call (the ingest path makes one per event, twice: ingest's stored-ids lookup and the
 * consumer's append).
 */
export function deterministicId(...parts: string[]): string {
  const h = hash('sha1', Buffer.concat([NAMESPACE_BYTES, Buffer.from(parts.join('\u0000'), 'utf8')]), 'buffer');
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString('hex', 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

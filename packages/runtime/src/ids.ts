import { v7 as uuidv7, v5 as uuidv5 } from 'uuid';

/** A new UUIDv7 (time-ordered). Ids the platform issues are UUIDv7 (architecture §4, Wire style). */
export function newId(): string {
  return uuidv7();
}

const NAMESPACE = '6f1c1f5e-6a3e-4d55-9a49-0a5c3b8e7d21';

/**
 * Deterministic UUID (v5) for a name, e.g. the event-store event id of a client-supplied ingest event id,
 * scoped by organisation so two organisations' ids never collide.
 */
export function deterministicId(...parts: string[]): string {
  return uuidv5(parts.join('\u0000'), NAMESPACE);
}

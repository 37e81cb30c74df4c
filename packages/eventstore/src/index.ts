/** `@agp/eventstore`: the EventStore port and its SQL adapters (PostgreSQL, PGlite). Source: architecture §3. */
export * from './types.js';
export * from './sql.js';
export * from './event-store.js';
export * from './answer-cache.js';
export * from './writes.js';
export * from './data-errors.js';
export * from './schema.js';
export * from './pages.js';

/** `@agp/eventstore`: the EventStore port, its SQL adapters (PostgreSQL, PGlite), the KurrentDB adapter (loaded on demand by `openEventStore`), and the read-model database helpers. Source: architecture §3. */
export * from './types.js';
export * from './sql.js';
export * from './event-store.js';
export * from './checkpoints.js';
export * from './catch-up.js';
export * from './open.js';
export * from './answer-cache.js';
export * from './writes.js';
export * from './data-errors.js';
export * from './dead-letter-retry.js';
export * from './schema.js';
export * from './pages.js';
export * from './where.js';

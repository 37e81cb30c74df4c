/** `@agp/gateway`: the HTTP edge of the platform. Source: architecture §1. */
export * from './gateway.js';
export { chunkBatch, MAX_CHUNK_BYTES, MAX_EVENT_BYTES } from './chunks.js';
export { ROUTE_HANDLERS } from './handlers.js';
export { unservedRoutes, type RouteHandler, type RouteHandlers } from './router.js';
export { loadPriceTable, priceOf, type PriceTable } from './otlp/prices.js';
export * from './env.js';

/** `@agp/auth`: organisations, API keys (SHA-256 at rest) and their resolution. Source: ARCHITECTURE.md §4. */
export * from './key-store.js';

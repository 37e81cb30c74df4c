/** `@agp/auth`: organisations, API keys (SHA-256 at rest) and their resolution. Source: architecture §4. */
export * from './key-store.js';
export * from './agent-binding.js';
export * from './people.js';

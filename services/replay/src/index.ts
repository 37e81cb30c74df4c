/** `@agp/replay`: replay submissions, history, run bundles, divergence analysis. Source: architecture §1; docs/replay.md. */
export * from './service.js';
export * from './module.js';

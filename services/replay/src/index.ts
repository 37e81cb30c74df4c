/** `@agp/replay`: replay submissions, history, run bundles, divergence analysis. Source: architecture §1, issue #14. */
export * from './service.js';
export * from './module.js';

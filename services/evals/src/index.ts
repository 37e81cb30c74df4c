/** `@agp/evals`: eval runs, scorecards, comparison, benchmarks, scenario generation. Source: architecture §1; docs/evals-gate.md. */
export * from './service.js';
export * from './module.js';
export * from './env.js';

/** `@agp/evals`: eval runs, scorecards, comparison, benchmarks, scenario generation. Source: architecture §1, issue #13. */
export * from './service.js';
export * from './module.js';

/** `@agp/stats`: runs, the action ledger, cost and reliability stats, ledger export. Source: architecture §1. */
export * from './service.js';
export * from './module.js';
export * from './env.js';

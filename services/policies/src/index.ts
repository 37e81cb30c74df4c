/** `@agp/policies`: policies, kill switches, the agent registry. Source: architecture §1. */
export * from './service.js';
export * from './module.js';
export * from './env.js';

/**
 * The interventions service's query modules that other processes may run against its read models (the gateway's
 * in-process read path, docs/decisions.md (The read path)). Imports no Nest, NATS or LLM code. Source: architecture §1 (gateway), §3.
 */
export { InterventionListReader } from './queries.js';

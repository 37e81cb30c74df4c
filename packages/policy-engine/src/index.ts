/**
 * `@agp/policy-engine`: the pure policy decision `decide(policies, killSwitches, action, context)`, with no I/O, and
 * its guardrail helpers (the PII scanner, the canonical arguments hash, dotted-path argument rewriting), and the
 * fleet-wide limits' pure parts (what an action needs of each, the windows, the lease slice rule).
 * Used by the decision API (`POST /api/v1/policies/evaluate`), counterfactual replay and the agent-side SDK.
 * Source: architecture §1; docs/decisions.md (Policy engine).
 */
export * from './decide.js';
export * from './arguments.js';
export * from './pii.js';
export * from './quotas.js';
export * from './results.js';
export * from './names.js';

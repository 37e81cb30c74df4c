/**
 * `@agp/policy-engine`: the pure policy decision `decide(policies, killSwitches, action, context)`, with no I/O, and
 * its guardrail helpers (the PII scanner, the canonical arguments hash, dotted-path argument rewriting).
 * Used by the decision API (`POST /api/v1/policies/evaluate`), counterfactual replay and the agent-side SDK.
 * Source: issue #14 point 1; architecture §1.
 */
export * from './decide.js';
export * from './arguments.js';
export * from './pii.js';

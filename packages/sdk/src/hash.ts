/**
 * The hash of an action's arguments: the policy engine's `argumentsHash` (SHA-256 hex of their canonical JSON, keys
 * sorted at every depth, so key order never matters), so the SDK, the decision API and the loop and idempotency
 * guardrails share one definition. An approval is bound to it: the SDK waits on the approval of its own call and, once
 * approved, checks that the approval's `original_inputs` hash to the call's arguments before it executes.
 * Source: docs/sdk.md §Approvals.
 */
import { argumentsHash as engineArgumentsHash } from '@agp/policy-engine';

/** SHA-256 hex of the canonical JSON of `args` (absent arguments hash as `{}`). */
export function argumentsHash(args: Readonly<Record<string, unknown>> | undefined): string {
  return engineArgumentsHash(args);
}

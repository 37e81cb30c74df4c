/**
 * The hash of an action's arguments: SHA-256 (hex) of their canonical JSON (keys sorted at every depth, no whitespace;
 * `canonicalJson` of @agp/contracts), so key order never matters. An approval is bound to it: the SDK waits on the
 * approval of its own call and, once approved, checks that the approval's `original_inputs` hash to the call's
 * arguments before it executes. Source: docs/sdk.md §Approvals.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@agp/contracts';

/** SHA-256 hex of `canonicalJson(args)`. */
export function argumentsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

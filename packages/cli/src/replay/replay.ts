/**
 * `agp replay`: download a run's bundle, verify its hash, replay its actions against a local handler module, and
 * summarise (and submit) the result. Source: docs/replay.md (`agp replay`).
 *
 * Definitions:
 * - Verification: SHA-256 hex of `bundleHashInput(bundle)` (UTF-8) of the JSON document as received must equal the
 *   bundle's `sha256` and, when the answer carries one, its ETag (`"<sha256>"`); otherwise the bundle is refused.
 * - For each action, in bundle order (its index is the divergence `step`): no handler for its `action_name` →
 *   skipped (no handler); marked non-deterministic → skipped; else the handler is called with the recorded `inputs`
 *   (`{}` when none were recorded) and its output is compared with the recorded `outputs` by canonical JSON
 *   (`canonicalJson`, `undefined` read as `null`); different → a divergence `{step, action_name, expected, actual}`;
 *   a handler that throws (or rejects) → a divergence with `actual = {error: message}`.
 * - `actions_replayed`: actions whose handler was called (diverged or not); skipped ones are not counted.
 * - `cost_savings` (USD): Σ over replayed actions of the recorded cost (`actionCostUsd`: `actual_cost_usd` when
 *   reported, else the estimate `cost_usd`, else 0; the rule of a run's `cost_usd`): what re-executing those actions
 *   for real would have cost.
 * - Status: `failed` when nothing was replayed; `completed` when nothing diverged; `diverged` when every replayed
 *   action diverged; `partial` otherwise (the counts rules of `SubmitReplaySchema`).
 */
import { createHash } from 'node:crypto';
import {
  actionCostUsd,
  bundleHashInput,
  canonicalJson,
  REPLAY_MAX_BODY_BYTES,
  REPLAY_MAX_DETAILS,
  ReplayBundleSchema,
  type DivergenceDetail,
  type LedgerEntry,
  type ReplayBundle,
  type ReplayStatus,
  type SubmitReplay,
  roundUsd,
} from '@agp/contracts';

/** What a handler receives besides the recorded inputs. */
export interface HandlerContext {
  /** Index of the action in the bundle, from 0. */
  step: number;
  /** The recorded action (ledger entry), read-only. */
  action: LedgerEntry;
  /** The recorded run. */
  run: ReplayBundle['run'];
}

/** A replay handler: recorded inputs → the output to compare with the recorded one. `nondeterministic: true` skips it. */
export type ReplayHandler = ((inputs: Record<string, unknown>, ctx: HandlerContext) => unknown) & { nondeterministic?: boolean };

/** A loaded handler module (see examples/replay-handlers.mjs for the contract). */
export interface HandlerModule {
  handlers: Record<string, ReplayHandler>;
  nondeterministic?: string[];
}

/** Outcome of one action. */
export type StepOutcome = 'match' | 'diverged' | 'skipped-no-handler' | 'skipped-nondeterministic';

/** Result of a replay, before submission. */
export interface ReplayResult {
  actions_total: number;
  actions_replayed: number;
  skipped_no_handler: number;
  skipped_nondeterministic: number;
  divergences: number;
  divergence_details: DivergenceDetail[];
  cost_savings: number;
  status: ReplayStatus;
}

/** Thrown when a bundle's hash does not verify. */
export class BundleVerificationError extends Error {
  override readonly name = 'BundleVerificationError';
}

/** Hex SHA-256 of the bundle's hash input (see the file's definitions). */
export function bundleHash(raw: unknown): string {
  return createHash('sha256').update(bundleHashInput(raw as ReplayBundle), 'utf8').digest('hex');
}

/**
 * Verify a received bundle (the raw JSON, not a schema-parsed copy: parsing would drop unknown members) and return it
 * parsed. @throws BundleVerificationError on a hash mismatch against `sha256` or the ETag, or a malformed bundle.
 */
export function verifyBundle(raw: unknown, etag?: string | null): ReplayBundle {
  const parsed = ReplayBundleSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BundleVerificationError(`malformed bundle: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`);
  }
  const computed = bundleHash(raw);
  if (computed !== parsed.data.sha256) throw new BundleVerificationError(`bundle hash mismatch: computed ${computed}, bundle says ${parsed.data.sha256}`);
  if (etag) {
    const tag = etag.replace(/^W\//, '').replace(/^"|"$/g, '');
    if (tag !== computed) throw new BundleVerificationError(`bundle hash mismatch: computed ${computed}, ETag says ${tag}`);
  }
  return parsed.data;
}

/** Whether two outputs are the same by canonical JSON (`undefined` read as `null`). */
export function sameOutput(expected: unknown, actual: unknown): boolean {
  return canonicalJson(expected ?? null) === canonicalJson(actual ?? null);
}

/** The status the counts imply (see the file's definitions). */
export function replayStatus(replayed: number, divergences: number): ReplayStatus {
  if (replayed === 0) return 'failed';
  if (divergences === 0) return 'completed';
  return divergences >= replayed ? 'diverged' : 'partial';
}

/** Normalise a module namespace into a {@link HandlerModule}: `handlers` (or the default export's). @throws Error when it has none. */
export function toHandlerModule(ns: Record<string, unknown>): HandlerModule {
  const src = (ns.handlers ? ns : (ns.default as Record<string, unknown> | undefined)) ?? {};
  const handlers = src.handlers;
  if (!handlers || typeof handlers !== 'object') throw new Error('the handler module exports no `handlers` object');
  for (const [name, h] of Object.entries(handlers)) if (typeof h !== 'function') throw new Error(`handler ${JSON.stringify(name)} is not a function`);
  const nd = src.nondeterministic;
  if (nd !== undefined && (!Array.isArray(nd) || nd.some((n) => typeof n !== 'string'))) throw new Error('`nondeterministic` must be an array of action names');
  return { handlers: handlers as Record<string, ReplayHandler>, nondeterministic: nd as string[] | undefined };
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Replay every action of `bundle` against `mod`, in order; `onStep` is called after each action. */
export async function replayBundle(bundle: ReplayBundle, mod: HandlerModule, onStep?: (step: number, action: LedgerEntry, outcome: StepOutcome) => void): Promise<ReplayResult> {
  const nondet = new Set(mod.nondeterministic ?? []);
  const r: ReplayResult = { actions_total: bundle.actions.length, actions_replayed: 0, skipped_no_handler: 0, skipped_nondeterministic: 0, divergences: 0, divergence_details: [], cost_savings: 0, status: 'failed' };
  let usd = 0;
  for (const [step, action] of bundle.actions.entries()) {
    const handler = Object.hasOwn(mod.handlers, action.action_name) ? mod.handlers[action.action_name] : undefined;
    let outcome: StepOutcome;
    if (!handler) {
      r.skipped_no_handler++;
      outcome = 'skipped-no-handler';
    } else if (nondet.has(action.action_name) || handler.nondeterministic === true) {
      r.skipped_nondeterministic++;
      outcome = 'skipped-nondeterministic';
    } else {
      r.actions_replayed++;
      usd += actionCostUsd(action);
      let actual: unknown;
      let ok: boolean;
      try {
        actual = await handler(structuredClone(action.inputs ?? {}), { step, action, run: bundle.run });
        ok = sameOutput(action.outputs, actual);
      } catch (err) {
        actual = { error: errorMessage(err) };
        ok = false;
      }
      if (ok) outcome = 'match';
      else {
        outcome = 'diverged';
        r.divergences++;
        if (r.divergence_details.length < REPLAY_MAX_DETAILS) r.divergence_details.push({ step, action_name: action.action_name, expected: action.outputs ?? null, actual: actual ?? null });
      }
    }
    onStep?.(step, action, outcome);
  }
  r.cost_savings = roundUsd(usd);
  r.status = replayStatus(r.actions_replayed, r.divergences);
  return r;
}

/** Submission id: `replay-<run id>-<16 hex of sha256(handler module path, start time)>` (≤ 256 characters). */
export function submissionId(runId: string, handlerPath: string, startedAt: string): string {
  const h = createHash('sha256').update(`${handlerPath}\n${startedAt}`).digest('hex').slice(0, 16);
  return `replay-${runId.slice(0, 200)}-${h}`;
}

/**
 * The submission body; divergence details are dropped from the end until the body fits the gateway's limit
 * (`divergences` still counts all of them).
 */
export function submissionBody(r: ReplayResult, meta: { id: string; started_at: string; completed_at: string; client_version: string }): string {
  const body: SubmitReplay = {
    id: meta.id,
    actions_replayed: r.actions_replayed,
    divergences: r.divergences,
    cost_savings: r.cost_savings,
    status: r.status,
    started_at: meta.started_at,
    completed_at: meta.completed_at,
    duration_ms: Math.max(0, Date.parse(meta.completed_at) - Date.parse(meta.started_at)),
    client_version: meta.client_version,
    divergence_details: r.divergence_details,
  };
  let text = JSON.stringify(body);
  while (Buffer.byteLength(text) > REPLAY_MAX_BODY_BYTES && body.divergence_details.length > 0) {
    body.divergence_details = body.divergence_details.slice(0, Math.floor(body.divergence_details.length / 2));
    text = JSON.stringify(body);
  }
  return text;
}

/**
 * Example handler module for `agp replay <run_id> --handlers examples/replay-handlers.mjs` (issue #14 point 4).
 *
 * Module contract (an ES module; a default export object with the same members also works):
 * - `handlers`: `{ [action_name]: (inputs, ctx) => output | Promise<output> }`. For each recorded action whose
 *   `action_name` has a handler, the CLI calls it with a copy of the recorded `inputs` (`{}` when none were recorded)
 *   and `ctx = { step, action, run }` (the action's 0-based index in the bundle, the recorded ledger entry, the run).
 *   The returned value (JSON) is compared with the recorded `outputs` by canonical JSON (object key order does not
 *   matter; `undefined` counts as `null`). Different → a divergence; a thrown error (or rejection) → a divergence whose
 *   `actual` is `{ error: message }`. An action without a handler is skipped (not replayed, not a divergence).
 * - `nondeterministic` (optional): action names whose outputs are not expected to reproduce (clocks, random, live
 *   APIs); they are skipped. Alternatively mark one handler: `handler.nondeterministic = true`.
 *
 * Replayed actions count towards `cost_savings`: their recorded cost (actual when reported, else the estimate), USD.
 */

/** Deterministic: adds two numbers. */
function add({ a, b }) {
  return { sum: Number(a) + Number(b) };
}

/** Deterministic: upper-cases a text (async handlers are awaited). */
async function uppercase({ text }) {
  return { text: String(text).toUpperCase() };
}

/** Non-deterministic: depends on the clock, so it is skipped (marked below with the per-handler flag). */
function current_time() {
  return { now: new Date().toISOString() };
}
current_time.nondeterministic = true;

/** Non-deterministic: a random choice; skipped through the `nondeterministic` list below. */
function random_pick({ options = [] }) {
  return { pick: options[Math.floor(Math.random() * options.length)] ?? null };
}

export const handlers = { add, uppercase, current_time, random_pick };

/** Action names skipped as non-deterministic (the list form of the marker). */
export const nondeterministic = ['random_pick'];

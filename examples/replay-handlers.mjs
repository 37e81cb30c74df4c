/**
 * Example handler module for `agp replay <run_id> --handlers examples/replay-handlers.mjs` (docs/replay.md, `agp replay`).
 *
 * Module contract (an ES module; a default export object with the same members also works):
 * - `handlers`: `{ [action_name]: (inputs, ctx) => output | Promise<output> }`. For each recorded action whose
 *   `action_name` has a handler, the CLI calls it with a copy of the recorded `inputs` (`{}` when none were recorded)
 *   and `ctx = { step, action, run }` (the action's 0-based index in the bundle, the recorded ledger entry, the run).
 *   The returned value (JSON) is compared with the recorded `outputs` by canonical JSON (object key order does not
 *   matter; `undefined` counts as `null`). Different → a divergence; a thrown error (or rejection) → a divergence whose
 *   `actual` is `{ error: message }`. An action without a handler is skipped (not replayed, not a divergence).
 * - `nondeterministic` (optional): action names whose outputs are not expected to reproduce (clocks, random, live
 *   APIs, language-model completions); they are skipped. Alternatively mark one handler: `handler.nondeterministic = true`.
 *
 * Replayed actions count towards `cost_savings`: their recorded cost (actual when reported, else the estimate), USD.
 *
 * Two sets of handlers:
 * 1. The actions of `agp simulate`'s agents (refund_payment … update_crm_contact): each computes what the simulated
 *    tool returned from the recorded inputs, so a simulated run replays with no divergence. generate_report is a
 *    language-model completion (its id and token count differ from call to call) and is marked non-deterministic.
 * 2. Small generic ones (add, uppercase, current_time, random_pick) showing the contract.
 */

// 1. The simulator's agents. Their tools are pure functions of their inputs; the simulated upstream fails 4% of calls
// at random (`status: 'error'`, no outputs). Such a failure belongs to the recording, not to the code under replay, so
// a handler answers what the agent got then: nothing (null).

/** Wrap a computation of the simulated tool's output so a recorded upstream failure replays as no output. */
const simulated = (compute) => (inputs, ctx) => (ctx.action.status === 'error' ? null : compute(inputs));

const simulatedHandlers = {
  refund_payment: simulated((i) => ({ refund_id: `re_${String(i.payment_id).slice('pay_'.length)}`, order_id: i.order_id, amount_usd: i.amount_usd, currency: i.currency, status: 'refunded' })),
  transfer_funds: simulated((i) => ({ transfer_id: `tr_${String(i.to_account).slice('acct_ext_'.length)}`, beneficiary: i.beneficiary, amount_usd: i.amount_usd, status: 'settled' })),
  delete_records: simulated((i) => ({ database: i.database, table: i.table, deleted_rows: i.estimated_rows, mode: i.hard_delete ? 'hard' : 'soft' })),
  deploy_service: simulated((i) => ({ deployment: `${i.service}@${i.version}`, environment: i.environment, ready_replicas: i.replicas })),
  run_shell: simulated((i) => ({ exit_code: 0, cwd: i.cwd })),
  send_email: simulated((i) => ({ queued: i.recipients_count, subject: i.subject })),
  post_to_slack: simulated((i) => ({ channel: i.channel, posted: true, characters: String(i.text).length })),
  query_customer_db: simulated((i) => ({ database: i.database, rows: i.limit, purpose: i.purpose })),
  update_crm_contact: simulated((i) => ({ contact_id: i.contact_id, updated: Object.keys(i.fields ?? {}).sort(), source: i.source })),
  /** A completion: a new report id and token count every call, so it cannot reproduce; skipped (marked below). */
  generate_report: simulated((i) => ({ model: i.model, documents: i.documents, report_id: null, completion_tokens: null })),
};
simulatedHandlers.generate_report.nondeterministic = true;

// 2. Generic examples of the contract.

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

export const handlers = { ...simulatedHandlers, add, uppercase, current_time, random_pick };

/** Action names skipped as non-deterministic (the list form of the marker). */
export const nondeterministic = ['random_pick'];

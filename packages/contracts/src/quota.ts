import { z } from 'zod';
import { MAX_USD, OpaqueIdSchema, paginationShape } from './common.js';
import { BUDGET_PERIODS, PERIOD_BUDGET_SCOPES, type BudgetPeriod, type PeriodBudgetScope } from './policy.js';

/**
 * Fleet-wide quotas: the counters the platform keeps for the limits a fleet shares (session, run and period budgets;
 * rate limits of scope `agent` or `organization`) and the leases processes spend them through. The platform holds
 * the authoritative count (one row per limit, scope key and window, in PostgreSQL); a governing process asks for a
 * lease, a slice of what is left, decides locally against it, and reports what it spent.
 * Source: docs/sdk.md (Fleet-wide limits); docs/api.md (Quotas); docs/decisions.md (Leases, not a check per action).
 */

// ---------------------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------------------

/** The limit of a policy's `run_budget` (USD per run; the scope key is the run id). */
export const RUN_BUDGET_LIMIT = 'run_budget';
/** The limit of a policy's `session_budget` (USD per session; the scope key is the session id). */
export const SESSION_BUDGET_LIMIT = 'session_budget';

/** The limit of one `period_budgets` entry: `period_budget:<scope>:<period>` (USD per calendar period). */
export const periodBudgetLimit = (scope: PeriodBudgetScope, period: BudgetPeriod) => `period_budget:${scope}:${period}`;
/** The limit of a `rate_limits` entry of scope `agent` or `organization`: `rate_limit:<action or *>` (calls per window). */
export const rateLimitLimit = (action: string) => `rate_limit:${action}`;

/**
 * A limit's name: `run_budget`, `session_budget`, `period_budget:<agent|organization>:<hour|day|month>` or
 * `rate_limit:<action name or *>`. A `process` rate limit has no limit name: no process but its own counts it.
 */
export const QuotaLimitSchema = z
  .string()
  .min(1)
  .max(300)
  .regex(
    new RegExp(`^(run_budget|session_budget|period_budget:(${PERIOD_BUDGET_SCOPES.join('|')}):(${BUDGET_PERIODS.join('|')})|rate_limit:.{1,256})$`, 's'),
    `expected run_budget, session_budget, period_budget:<${PERIOD_BUDGET_SCOPES.join('|')}>:<${BUDGET_PERIODS.join('|')}> or rate_limit:<action name or *>`,
  );

/** Whether a limit counts money (USD) or calls. */
export const QUOTA_UNITS = ['usd', 'calls'] as const;
export type QuotaUnit = (typeof QUOTA_UNITS)[number];

/** The unit of limit `limit` ({@link QuotaLimitSchema}): calls for a rate limit, else USD. */
export const quotaUnitOf = (limit: string): QuotaUnit => (limit.startsWith('rate_limit:') ? 'calls' : 'usd');

/** The action a `rate_limit:<action>` limit names, or null for a budget. */
export const rateLimitAction = (limit: string): string | null => (limit.startsWith('rate_limit:') ? limit.slice('rate_limit:'.length) : null);

/**
 * How long a lease lasts without renewal, ms, unless the platform is configured otherwise
 * (`AGP_QUOTA_LEASE_TTL_MS`): a holder that stops renewing (crashed, partitioned) gives its unspent quota back this
 * long after its last renewal. A lease never outlives its window (a rate limit's window, a budget's period).
 */
export const DEFAULT_QUOTA_LEASE_TTL_MS = 15_000;

/**
 * How long past its expiry a lease keeps its reservation before the platform reclaims it, ms: half the lease TTL. A
 * holder stops admitting against its lease a little before the expiry it was answered, but what it admitted last is
 * reported afterwards (every 250 ms, later when the process or the network is slow); a report that arrives within
 * this grace still counts against what the lease reserved, so a late report is never an overshoot. A crashed holder's
 * unspent quota therefore returns TTL × 1.5 after its last renewal. Source: docs/decisions.md (Leases, not a check
 * per action).
 */
export const quotaLeaseGraceMs = (ttlMs: number): number => Math.round(ttlMs / 2);

/**
 * The most of a limit one grant hands out, as a fraction of the limit (5 %): the bound on what a holder cut off from
 * the platform can still spend of it, beyond an action that alone needs more. The rule: docs/sdk.md (Fleet-wide
 * limits, Lease sizes).
 */
export const QUOTA_SLICE_FRACTION = 0.05;

/** Largest amount one lease item may ask for or report: USD for budgets, calls for rate limits. */
export const MAX_QUOTA_AMOUNT = MAX_USD;

/** An amount of a limit: USD (budgets) or calls (rate limits), finite, ≥ 0, at most {@link MAX_QUOTA_AMOUNT}. */
export const QuotaAmountSchema = z
  .number({ message: 'expected a number' })
  .finite('must be a finite number')
  .min(0, 'must be 0 or more')
  .max(MAX_QUOTA_AMOUNT, `must be at most ${MAX_QUOTA_AMOUNT}`);

// ---------------------------------------------------------------------------------------------------------
// Leases: POST /api/v1/quotas/leases
// ---------------------------------------------------------------------------------------------------------

/**
 * Ask for quota of one limit. The counter is the policy's limit for the scope key the limit's scope picks from
 * these ids (the run for `run_budget`, the session for `session_budget`, the agent or the organisation for a period
 * budget or rate limit by its scope), in the current window.
 * - `need`: what the holder must have now to admit the action it is deciding (USD or calls; 0 = asking ahead of
 *   need). Granted whole or not at all.
 * - The platform may grant more than `need`, up to its slice rule, so the holder can decide the next actions locally.
 */
export const LeaseAcquireSchema = z.strictObject({
  policy_id: OpaqueIdSchema,
  limit: QuotaLimitSchema,
  agent_id: OpaqueIdSchema,
  session_id: OpaqueIdSchema.optional(),
  run_id: OpaqueIdSchema.optional(),
  need: QuotaAmountSchema.default(0),
});
export type LeaseAcquire = z.infer<typeof LeaseAcquireSchema>;

/**
 * Report on one lease the holder has: `spent` is what it has admitted against the lease so far, in total (the
 * estimates of admitted actions, settled to their actual cost where reported; it may pass `held` when an actual cost
 * passed its estimate: the overshoot is counted). `seq` orders a holder's reports: a report with a `seq` not above
 * the last one applied to the lease changes nothing (a replay). `release`: the holder is done with the lease; what it
 * did not spend returns to the limit at once.
 */
export const LeaseReportSchema = z.strictObject({
  lease_id: OpaqueIdSchema,
  seq: z.number().int('expected an integer').min(1, 'must be 1 or more').max(Number.MAX_SAFE_INTEGER),
  spent: QuotaAmountSchema,
  release: z.boolean().default(false),
});
export type LeaseReport = z.infer<typeof LeaseReportSchema>;

/**
 * Body of `POST /api/v1/quotas/leases`: one call for all of a holder's limits. Reports are applied first, then
 * acquisitions (so quota a report returns can be granted in the same call).
 * - `holder`: the process's id (an SDK governor's own, random per process); a lease belongs to its holder.
 */
export const LeaseRequestSchema = z
  .strictObject({
    holder: OpaqueIdSchema,
    acquire: z.array(LeaseAcquireSchema).max(100).default([]),
    report: z.array(LeaseReportSchema).max(100).default([]),
  })
  .refine((b) => b.acquire.length + b.report.length > 0, { message: 'give at least one acquire or report item', path: ['acquire'] });
export type LeaseRequest = z.infer<typeof LeaseRequestSchema>;

/** Where a lease stands: `active` until released, expired or ended with its window. */
export const LEASE_STATUSES = ['active', 'released', 'expired'] as const;

/**
 * A lease as the platform answers it.
 * - `held`: the quota it holds in total (USD or calls: `unit`); `spent`: what its holder reported admitting.
 * - `expires_at`: when it lapses without renewal (ISO 8601 UTC); never after `window_end`.
 * - `window_start` / `window_end`: the counter's window (a rate limit's fixed window, a budget's calendar period);
 *   null for run and session budgets, which have none.
 * - `limit_value`: the policy's limit when granted; `remaining`: what the limit has left for every holder after this
 *   answer (the limit less everything granted and not returned, and everything spent past its grant); `holders`:
 *   how many holders share the counter now.
 * - `granted`: what this answer added to `held` (0 when nothing could be granted); `exhausted`: the `need` asked in
 *   this call could not be granted (the limit has less than that left).
 */
export const LeaseSchema = z.object({
  lease_id: z.string(),
  policy_id: z.string(),
  limit: z.string(),
  unit: z.enum(QUOTA_UNITS),
  scope_key: z.string(),
  status: z.enum(LEASE_STATUSES),
  held: z.number(),
  spent: z.number(),
  granted: z.number(),
  exhausted: z.boolean(),
  expires_at: z.string(),
  window_start: z.string().nullable(),
  window_end: z.string().nullable(),
  limit_value: z.number(),
  remaining: z.number(),
  holders: z.number().int(),
});
export type Lease = z.infer<typeof LeaseSchema>;

/**
 * Reply of `POST /api/v1/quotas/leases`: `leases`, one per acquire item (in order), then one per report item that
 * did not release; `released`, the ids of the leases released by this call. A lease whose limit no longer exists (the
 * policy was disabled, deleted from the scope, or the limit removed) answers `limit_value` 0 and is released.
 */
export const LeaseAnswerSchema = z.object({ holder: z.string(), leases: z.array(LeaseSchema), released: z.array(z.string()) });
export type LeaseAnswer = z.infer<typeof LeaseAnswerSchema>;

// ---------------------------------------------------------------------------------------------------------
// Counters: GET /api/v1/quotas
// ---------------------------------------------------------------------------------------------------------

/**
 * One counter of a limit, for one scope key and window.
 * - `committed`: granted to active leases (at least what they spent) plus spent by ended ones, in `unit`;
 * - `spent`: reported spent by every lease (active or ended); `overshoot`: spent past what was granted (actual costs
 *   above their estimates), counted in `committed`, never hidden;
 * - `remaining`: `limit_value` − `committed` (may be negative after an overshoot, or when the limit was lowered);
 * - `holders`: active leases.
 */
export const QuotaCounterSchema = z.object({
  policy_id: z.string(),
  limit: z.string(),
  unit: z.enum(QUOTA_UNITS),
  scope_key: z.string(),
  window_start: z.string().nullable(),
  window_end: z.string().nullable(),
  limit_value: z.number(),
  committed: z.number(),
  spent: z.number(),
  overshoot: z.number(),
  remaining: z.number(),
  holders: z.number().int(),
  updated_at: z.string(),
});
export type QuotaCounter = z.infer<typeof QuotaCounterSchema>;

/**
 * Query of `GET /api/v1/quotas`: the organisation's counters, most recently changed first. Filters compose with AND:
 * `policy_id`, `limit_name` (a limit, {@link QuotaLimitSchema}; `limit` is the page size), `scope_key` (an agent,
 * session or run id, or the organisation's id).
 */
export const ListQuotasQuerySchema = z.strictObject({
  policy_id: OpaqueIdSchema.optional(),
  limit_name: QuotaLimitSchema.optional(),
  scope_key: OpaqueIdSchema.optional(),
  ...paginationShape(50, 1000),
});
export type ListQuotasQuery = z.infer<typeof ListQuotasQuerySchema>;

/** A page of counters. */
export const QuotaCounterPageSchema = z.object({ counters: z.array(QuotaCounterSchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int() });
export type QuotaCounterPage = z.infer<typeof QuotaCounterPageSchema>;

/**
 * `@agp/sdk`: the library an agent developer installs. It enforces the platform's policies, kill switches and
 * approvals where the agent acts (the same `decide()` the platform's decision API runs), and reports every
 * intervention, ledger entry and run through `POST /api/v1/ingest/` without losing any. Usage and semantics: docs/sdk.md.
 *
 * @example
 * const gov = await Governor.connect({ url, key, agentId: 'billing-bot' });
 * const run = gov.startRun();
 * const out = await run.act('refund_payment', { invoice: 'inv_1', amount: 120 }, async (args) => refund(args), { estimatedCostUsd: 0.02 });
 * await run.end({ status: 'completed' });
 * await gov.close();
 */
export { Governor, type ApprovalVerdict, type GovernorOptions, type GovernorStatus } from './governor.js';
export { Run, SDK_VERSION, type ActContext, type ActOptions, type DecisionEvent } from './run.js';
export { ModerationError, moderationCategory, openAIModeration, type ModerationProvider, type OpenAIModerationOptions } from './moderation.js';
export { ActionBlockedError, ApprovalRejectedError, type ApprovalEnd, type BlockedResult, type GovernanceDecision, type RiskLevel } from './errors.js';
export { argumentsHash } from './hash.js';
export { refusalText, type RefusalFn } from './refusal.js';
export type { ActionDefinition } from './schema.js';
export type { ChannelState, LeaseStatus, ReporterStats } from './status.js';

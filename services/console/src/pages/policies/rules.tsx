/**
 * A policy's action budget, downgrades and guardrails: the enum values the form offers (plain arrays, checked
 * against the contract's types at compile time, since importing `@agp/contracts` at run time would bundle zod) and
 * {@link PolicyRules}, which shows them as sentences. Source: packages/contracts/src/policy.ts; docs/decisions.md
 * (The policy engine's action budget, downgrades and guardrails).
 */
import type { DowngradeRule, Guardrails, ModerationCategory, PiiCategory, Policy } from '@agp/contracts';
import { usd } from '../../components/format.js';

type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The PII categories (contract PII_CATEGORIES). */
export const PII_CATEGORIES = ['email', 'phone', 'payment_card', 'iban', 'us_ssn', 'ip_address', 'secret'] as const;
/** The moderation categories (contract MODERATION_CATEGORIES). */
export const MODERATION_CATEGORIES = ['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'] as const;
/** Modes of the moderation and loop guardrails. */
export const GUARDRAIL_MODES = ['block', 'warn'] as const;
/** Modes of the PII guardrail. */
export const PII_GUARDRAIL_MODES = ['block', 'warn', 'redact'] as const;

const sameAsContract: [
  SameUnion<(typeof PII_CATEGORIES)[number], PiiCategory>,
  SameUnion<(typeof MODERATION_CATEGORIES)[number], ModerationCategory>,
  SameUnion<(typeof PII_GUARDRAIL_MODES)[number], NonNullable<Guardrails['pii']>['mode']>,
  SameUnion<(typeof GUARDRAIL_MODES)[number], NonNullable<Guardrails['loop']>['mode']>,
] = [true, true, true, true];
void sameAsContract;

/** One downgrade rule as a sentence: `refund_payment: amount capped at 100`, `every action: model gpt-4o → gpt-4o-mini`. */
export function downgradeText(r: DowngradeRule): string {
  const who = r.action === '*' ? 'every action' : r.action;
  if (r.replace) return `${who}: ${r.argument} ${Object.entries(r.replace).map(([from, to]) => `${from} → ${String(to)}`).join(', ')}`;
  return `${who}: ${r.argument} capped at ${r.max}`;
}

const cats = (c: readonly string[] | undefined) => (c ? c.join(', ').replace(/_/g, ' ') : 'all categories');

/** Each configured guardrail as a [name, sentence] pair, in the contract's order. */
export function guardrailTexts(g: Guardrails): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (g.pii) out.push(['PII', `${g.pii.mode}: ${cats(g.pii.categories)}`]);
  if (g.moderation) out.push(['Moderation', `${g.moderation.mode} at a score of ${g.moderation.threshold} or more: ${cats(g.moderation.categories)}`]);
  if (g.loop) out.push(['Loop', `${g.loop.mode} after ${g.loop.threshold} identical calls within ${g.loop.window_seconds} s`]);
  if (g.idempotency) out.push(['Idempotency', `${g.idempotency.actions.join(', ')}: a repeat within ${g.idempotency.ttl_seconds} s returns the first result`]);
  return out;
}

/** The action budget, downgrade rules and guardrails of a policy, as a description list. */
export function PolicyRules({ p }: { p: Policy }) {
  const guards = guardrailTexts(p.guardrails ?? {});
  return (
    <dl className="policy-rules">
      <dt>Action budget</dt>
      <dd data-testid="action-budget">{p.action_budget === null || p.action_budget === undefined ? 'none' : `${usd(p.action_budget)} per action`}</dd>
      <dt>Downgrades</dt>
      <dd>
        {p.downgrades?.length ? (
          <ol aria-label="Downgrade rules">
            {p.downgrades.map((r, i) => (
              <li key={i}>{downgradeText(r)}</li>
            ))}
          </ol>
        ) : (
          'none'
        )}
      </dd>
      <dt>Guardrails</dt>
      <dd>
        {guards.length ? (
          <ul aria-label="Guardrails">
            {guards.map(([name, t]) => (
              <li key={name}>
                <strong>{name}</strong> {t}
              </li>
            ))}
          </ul>
        ) : (
          'none'
        )}
      </dd>
    </dl>
  );
}

/**
 * What a trace shows of a policy decision: the attributes of every decision span, whoever decides — the platform's
 * decision API (`policy.decide`, source `evaluate`), its counterfactual evaluation (`policy.decide`, source
 * `counterfactual`) and the agent SDK's `run.act` (`agp.act`, source `sdk`). Identifiers and the decision only: never
 * the action's arguments, a reason text or a guardrail's matches (no PII in traces).
 * Plain data (no OpenTelemetry import), so the SDK, whose `@opentelemetry/api` is an optional peer dependency, shares it.
 * Source: docs/operations.md (Tracing); architecture §5 (operations).
 */

/** The attribute names of a decision span. */
export const DECISION_SPAN_ATTRIBUTES = {
  /** The decision (`allow`, `block`, …; one of POLICY_DECISIONS). */
  decision: 'agp.decision',
  /** The engine rule that decided (e.g. `blocked_action`); absent for allow or a decision the SDK took itself. */
  rule: 'agp.decision.rule',
  /** The deciding policy's id; absent when no policy decided (allow, kill switch, fail closed). */
  policy_id: 'agp.decision.policy_id',
  /** The intervention type the decision records (spec §Intervention types); absent for allow. */
  intervention_type: 'agp.decision.intervention_type',
  /** Where the decision was taken: {@link DecisionSpanSource}. */
  source: 'agp.decision.source',
  /** The action (tool) decided on, by the GenAI semantic conventions' name. */
  tool: 'gen_ai.tool.name',
  /** The agent acting, by the GenAI semantic conventions' name. */
  agent: 'gen_ai.agent.id',
} as const;

/** Where a decision was taken: the decision API, a counterfactual evaluation (replay), or the agent SDK. */
export type DecisionSpanSource = 'evaluate' | 'counterfactual' | 'sdk';

/** The action a decision is about, as a span may name it: its agent and its name (never its arguments). */
export interface DecisionSubject {
  agent_id: string;
  action_name: string;
}

/** The facts of a decision a span carries (nulls are left out of the span). */
export interface DecisionSpanFacts {
  decision: string;
  rule: string | null;
  policy_id: string | null;
  intervention_type: string | null;
}

/**
 * The attributes a decision span carries before the decision: its source, the tool and the agent
 * ({@link DECISION_SPAN_ATTRIBUTES}).
 */
export function decisionSubjectAttributes(source: DecisionSpanSource, subject: DecisionSubject): Record<string, string> {
  return { [DECISION_SPAN_ATTRIBUTES.source]: source, [DECISION_SPAN_ATTRIBUTES.tool]: subject.action_name, [DECISION_SPAN_ATTRIBUTES.agent]: subject.agent_id };
}

/**
 * The attributes of a decision `d` ({@link DECISION_SPAN_ATTRIBUTES}: decision, rule, policy id, intervention type),
 * null values left out. Whatever else `d` holds (arguments, modified inputs, reason, guardrail context) is not read.
 */
export function decisionAttributes(d: DecisionSpanFacts): Record<string, string> {
  const a: Record<string, string> = { [DECISION_SPAN_ATTRIBUTES.decision]: d.decision };
  if (d.rule !== null && d.rule !== undefined) a[DECISION_SPAN_ATTRIBUTES.rule] = d.rule;
  if (d.policy_id !== null && d.policy_id !== undefined) a[DECISION_SPAN_ATTRIBUTES.policy_id] = d.policy_id;
  if (d.intervention_type !== null && d.intervention_type !== undefined) a[DECISION_SPAN_ATTRIBUTES.intervention_type] = d.intervention_type;
  return a;
}

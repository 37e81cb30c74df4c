/**
 * Adversarial scenario generation, `POST /api/v1/evals/generate-scenarios` (wire row `evals.generate-scenarios`):
 * reads the agent's registered actions and the enabled policies that apply to it from the policies service, runs the
 * template pass (always; deterministic from the seed) and the semantic pass (with an LLM key), and answers every
 * scenario with its category, severity, violation breakdown and source text: a runnable scenario file
 * (docs/scenario-format.md). Source: spec §Evals rule 4, §Limits; architecture §4 (LLM).
 */
import { randomInt } from 'node:crypto';
import { EVAL_MAX_REPLY_BYTES, SEMANTIC_CATEGORIES, TEMPLATE_CATEGORIES, type GeneratedScenario, type GeneratedScenarios, type GenerateScenarios, type Policy } from '@agp/contracts';
import { call, type Sender } from '@agp/bus';
import { isRawJson, type Logger, type RequestContext } from '@agp/runtime';
import type { LlmEnv } from '@agp/runtime/llm';
import { fitScenarios } from './fit.js';
import { renderScenarioFile, scenarioFilename, type ScenarioFile } from '@agp/scenario-file';
import { semanticScenarios } from './semantic.js';
import { templateScenarios } from './template.js';

export * from '@agp/scenario-file';
export { templateScenarios, STALE_AGES_DAYS, type TemplateCategory, type TemplateInput, type TemplateOutput } from './template.js';
export { semanticScenarios, parseSemanticAnswer, buildSemanticPrompt, NO_KEY_REASON, SEMANTIC_PROMPT_VERSION, SEMANTIC_PASS_DEADLINE_MS, type SemanticCategory, type SemanticOutput } from './semantic.js';
export { policyViolations } from './violations.js';
export { fitScenarios, MAX_SCENARIO_BYTES } from './fit.js';

/** Most policies read per page from the policies service (its list maximum). */
const POLICY_PAGE = 1000;

/** Every enabled policy that applies to `agentId` (scoped to it, or to every agent), all pages. */
async function applicablePolicies(bus: Sender, ctx: RequestContext, agentId: string): Promise<Policy[]> {
  const out: Policy[] = [];
  for (let skip = 0; ; skip += POLICY_PAGE) {
    const reply = await call(bus, 'policies.list', ctx, { query: { agent_id: agentId, enabled: 'true', limit: POLICY_PAGE, skip } });
    const page = (isRawJson(reply) ? JSON.parse(reply.$json) : reply) as { policies: Policy[]; total: number };
    out.push(...page.policies);
    if (!page.policies.length || out.length >= page.total) return out;
  }
}

/** A scenario file as the reply carries it. */
function toGenerated(file: ScenarioFile): GeneratedScenario {
  return {
    name: file.name,
    category: file.category,
    pass: file.pass ?? 'template',
    severity: file.severity,
    expected: file.expected,
    description: file.description ?? '',
    violations: file.violations,
    source: { format: 'yaml', filename: scenarioFilename(file.name), text: renderScenarioFile(file) },
  };
}

/**
 * Generate adversarial scenarios for one agent of the caller's organisation.
 * - Template pass (always): from the agent's actions and its enabled policies, at most `max_per_category` of each
 *   template category; the same request with the same `seed` gives the same template scenarios. Without a seed one is
 *   drawn and returned (`seed` in the reply) so the run can be repeated.
 * - Semantic pass: one model request per semantic category; skipped (with the reason) without AGP_LLM_API_KEY, and a
 *   category whose answers are unusable or whose provider fails is skipped and named in `semantic.skipped_reason`.
 * - `counts_by_category` lists every template and semantic category (0 for those without material or skipped).
 * - The answer fits one bus message (`EVAL_MAX_REPLY_BYTES`): a scenario over 64 KiB of JSON is left out, then the last
 *   scenarios of the fullest categories until the rest fits ({@link fitScenarios}); what is left out is logged, and
 *   the counts are those of the scenarios answered.
 * @param deps.bus the bus to the policies service; deps.env the AGP_LLM_* settings; deps.logger for the pass's log.
 * @param body the parsed request body (`GenerateScenariosSchema`).
 * @returns the reply of `evals.generate-scenarios` (`GeneratedScenariosSchema`): template scenarios first, then
 *   semantic ones, each with its source text (YAML, `agp_scenario: 1`).
 * @throws RemoteProblemError 404 when the agent is not registered in the caller's organisation (from `agents.get`).
 * @throws ServiceUnavailableError 503 when the policies service does not answer.
 */
export async function generateScenarios(deps: { bus: Sender; logger: Logger; env: LlmEnv }, ctx: RequestContext, body: GenerateScenarios): Promise<GeneratedScenarios> {
  const agent = await call(deps.bus, 'agents.get', ctx, { path: { id: body.agent_id } });
  const policies = await applicablePolicies(deps.bus, ctx, body.agent_id);
  const seed = body.seed ?? randomInt(0, 2 ** 31);
  const maxPerCategory = body.max_per_category;
  const template = templateScenarios({ agent, policies, seed, maxPerCategory });
  if (Object.keys(template.empty).length) deps.logger.debug({ agent_id: agent.agent_id, empty: template.empty }, 'scenario generation: template categories without material');
  const semantic = await semanticScenarios(deps, { agent, policies, maxPerCategory, seed });
  const fitted = fitScenarios([...template.scenarios, ...semantic.scenarios].map(toGenerated), EVAL_MAX_REPLY_BYTES);
  if (fitted.tooLarge.length || fitted.trimmed.length) {
    deps.logger.warn({ agent_id: agent.agent_id, too_large: fitted.tooLarge, trimmed: fitted.trimmed }, 'scenario generation: scenarios left out so the answer fits one message');
  }
  const scenarios = fitted.scenarios;
  const counts: Record<string, number> = Object.fromEntries([...TEMPLATE_CATEGORIES, ...SEMANTIC_CATEGORIES].map((c) => [c, 0]));
  for (const s of scenarios) counts[s.category] = (counts[s.category] ?? 0) + 1;
  return {
    agent_id: agent.agent_id,
    seed,
    max_per_category: maxPerCategory,
    template: { scenarios: scenarios.filter((s) => s.pass === 'template').length },
    semantic: { ran: semantic.ran, skipped_reason: semantic.skipped_reason, model: semantic.model, scenarios: scenarios.filter((s) => s.pass === 'semantic').length },
    counts_by_category: counts,
    scenarios,
  };
}

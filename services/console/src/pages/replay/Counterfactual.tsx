/**
 * The counterfactual evaluation of the Replay page: recorded actions decided again by a policy set, nothing stored.
 * - Which runs: one run (`POST /api/v1/replay/{run_id}/evaluate`) or runs by agent and dates
 *   (`POST /api/v1/replay/evaluate`, up to 200 runs, newest first; each run's steps on request).
 * - Which policies: today's (allowed for a read key), an existing policy edited as a PATCH (the edited fields are
 *   diffed against the policy and sent as `policy_patch`), or a full candidate policy pasted as JSON
 *   (`candidate_policy`). The API refuses the last two to a read key (403), so their button is a WriteButton.
 * - The answer: totals in USD (prevented, actually spent, would spend, difference), steps per decision, and every step
 *   with its decision, rule, policy and reason.
 * Source: spec §Replay (counterfactual evaluation); packages/contracts/src/replay.ts.
 */
import { useState } from 'react';
import { Link } from 'react-router';
import type { CounterfactualTotals, Policy, RunEvaluation, RunsEvaluation } from '@agp/contracts';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import type { Page } from '../../api/types.js';
import { DataTable } from '../../components/DataTable.js';
import { count, label, usd, when } from '../../components/format.js';
import { Money, Time, Truncate } from '../../components/Cells.js';
import { LongText } from '../../components/LongText.js';
import { ProblemMessage, QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Tag } from '../../components/Tag.js';
import { WriteButton } from '../../components/WriteButton.js';

/** The policy fields a PATCH may change (UpdatePolicySchema), in display order. */
const EDITABLE = ['name', 'description', 'enabled', 'session_budget', 'run_budget', 'denied_actions', 'allowed_actions', 'approval_required_actions', 'rate_limits', 'agent_ids', 'action_budget', 'downgrades', 'guardrails', 'period_budgets'] as const;

/** A starting point for a pasted candidate policy (the body of POST /api/v1/policies). */
const CANDIDATE_TEMPLATE = JSON.stringify({ name: 'Candidate: stop risky spend', denied_actions: ['transfer_funds'], run_budget: 1 }, null, 2);

/** Where the policies come from. */
type PolicySource = 'today' | 'patch' | 'candidate';

/** The editable fields of a policy as pretty JSON (what the PATCH editor starts from). */
const editableJson = (p: Policy) => JSON.stringify(Object.fromEntries(EDITABLE.map((f) => [f, p[f]])), null, 2);

/**
 * The PATCH that turns `policy` into `edited`: the editable fields whose value changed (JSON merge patch: lists whole).
 * @throws Error when the text is not a JSON object, or nothing changed.
 */
export function patchOf(policy: Policy, editedText: string): Record<string, unknown> {
  let edited: unknown;
  try {
    edited = JSON.parse(editedText);
  } catch (err) {
    throw new Error(`The edited policy is not valid JSON: ${(err as Error).message}`);
  }
  if (!edited || typeof edited !== 'object' || Array.isArray(edited)) throw new Error('The edited policy must be a JSON object.');
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(edited)) {
    const before = (policy as Record<string, unknown>)[k];
    if (JSON.stringify(v) !== JSON.stringify(before)) patch[k] = v;
  }
  if (Object.keys(patch).length === 0) throw new Error('Nothing changed: edit at least one field of the policy.');
  return patch;
}

/** The totals of an evaluation as cards and the steps per decision. */
function Totals({ t }: { t: CounterfactualTotals }) {
  return (
    <>
      <StatCards testId="counterfactual-totals">
        <StatCard label="Would have prevented" value={<Money usd={t.prevented_usd} />} />
        <StatCard label="Actually spent" value={<Money usd={t.actually_spent_usd} />} />
        <StatCard label="Would spend" value={<Money usd={t.would_spend_usd} />} />
        <StatCard label="Difference" value={<Money usd={t.difference_usd} />} />
        <StatCard label="Steps" value={count(t.steps)} />
      </StatCards>
      <p className="muted">
        Steps per decision:{' '}
        {Object.entries(t.by_decision)
          .map(([d, n]) => `${label(d)} ${count(n)}`)
          .join(' · ')}
      </p>
    </>
  );
}

/** One run's evaluation, step by step. */
function RunResult({ r }: { r: RunEvaluation }) {
  return (
    <div data-testid="run-evaluation">
      <p>
        Run <Link to={`/replay/${encodeURIComponent(r.run_id)}`}>{r.run_id}</Link> of agent {r.agent_id}, decided by {r.policy_set.source === 'today' ? "today's policies" : r.policy_set.source === 'patch' ? "today's policies with the patch" : "today's policies plus the candidate"} (
        {count(r.policy_set.policy_ids.length)} applying) at {when(r.evaluated_at)}.
      </p>
      <Totals t={r.totals} />
      {r.steps_truncated ? <p className="notice">Only the first {count(r.steps.length)} steps are listed; the totals cover all {count(r.totals.steps)}.</p> : null}
      <DataTable
        caption={`Steps of run ${r.run_id}, decided again`}
        rows={r.steps}
        rowKey={(s) => `${s.step}`}
        columns={[
          { key: 'step', header: 'Step', cell: (s) => s.step, numeric: true },
          { key: 'action', header: 'Action', cell: (s) => <Truncate text={s.action_name} /> },
          { key: 'time', header: 'Recorded at', cell: (s) => <Time iso={s.timestamp} /> },
          { key: 'recorded', header: 'Recorded', cell: (s) => <Tag value={s.recorded_status} /> },
          { key: 'decision', header: 'Decision now', cell: (s) => <Tag value={s.decision} /> },
          { key: 'policy', header: 'Policy', cell: (s) => <Truncate text={s.policy_name} width="name" /> },
          { key: 'rule', header: 'Rule', cell: (s) => label(s.rule) },
          { key: 'reason', header: 'Reason', wrap: true, cell: (s) => <LongText text={s.reason} foldAt={200} /> },
          { key: 'cost', header: 'Cost', cell: (s) => usd(s.cost_usd), numeric: true },
          { key: 'prevented', header: 'Prevented', cell: (s) => usd(s.prevented_usd), numeric: true },
        ]}
      />
    </div>
  );
}

/** Props of {@link Counterfactual}. */
export interface CounterfactualProps {
  /** Preselect this run (the run view). */
  runId?: string;
}

/** The counterfactual evaluation form and its answer. */
export function Counterfactual({ runId = '' }: CounterfactualProps) {
  const [scope, setScope] = useState<'run' | 'runs'>('run');
  const [run, setRun] = useState(runId);
  const [agent, setAgent] = useState('');
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [source, setSource] = useState<PolicySource>('today');
  const [policyId, setPolicyId] = useState('');
  const [edited, setEdited] = useState<Record<string, string>>({});
  const [candidate, setCandidate] = useState(CANDIDATE_TEMPLATE);
  const [local, setLocal] = useState<string | null>(null);
  const [drill, setDrill] = useState<string | null>(null);
  const policies = useApiQuery<Page<'policies', Policy>>(source === 'patch' ? '/api/v1/policies' : null, { limit: 200 });
  const policy = policies.data?.policies.find((p) => p.id === policyId);
  const policyText = policy ? (edited[policy.id] ?? editableJson(policy)) : '';

  const evaluate = useApiMutation<{ path: string; body: Record<string, unknown> }, RunEvaluation | RunsEvaluation>((api, v) => api.post(v.path, v.body));
  const drillDown = useApiMutation<{ path: string; body: Record<string, unknown> }, RunEvaluation>((api, v) => api.post(v.path, v.body));

  /** The policy part of the body, or throws with what is wrong. */
  const policyBody = (): Record<string, unknown> => {
    if (source === 'today') return {};
    if (source === 'patch') {
      if (!policy) throw new Error('Choose the policy to edit.');
      return { policy_patch: { policy_id: policy.id, patch: patchOf(policy, policyText) } };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch (err) {
      throw new Error(`The candidate policy is not valid JSON: ${(err as Error).message}`);
    }
    return { candidate_policy: parsed };
  };

  const submit = () => {
    setDrill(null);
    drillDown.reset();
    try {
      const body = policyBody();
      if (scope === 'run') {
        if (!run.trim()) throw new Error('Name the run to evaluate.');
        evaluate.mutate({ path: `/api/v1/replay/${encodeURIComponent(run.trim())}/evaluate`, body });
      } else {
        evaluate.mutate({ path: '/api/v1/replay/evaluate', body: { ...body, ...(agent.trim() ? { agent_id: agent.trim() } : {}), ...(start ? { start_date: start } : {}), ...(end ? { end_date: end } : {}) } });
      }
      setLocal(null);
    } catch (err) {
      setLocal((err as Error).message);
    }
  };

  const showSteps = (id: string) => {
    try {
      setDrill(id);
      drillDown.mutate({ path: `/api/v1/replay/${encodeURIComponent(id)}/evaluate`, body: policyBody() });
    } catch (err) {
      setLocal((err as Error).message);
    }
  };

  const buttonLabel = evaluate.isPending ? 'Evaluating…' : source === 'today' ? "Evaluate with today's policies" : 'Evaluate candidate';
  const data = evaluate.data;
  return (
    <section className="panel" aria-labelledby="counterfactual-heading">
      <h2 id="counterfactual-heading">Counterfactual evaluation</h2>
      <p className="muted">Decide recorded actions again with today's policies or a candidate, and see what would have been prevented. Nothing is stored.</p>
      <form
        className="area-form"
        aria-label="Counterfactual evaluation"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <div className="two-col">
          <fieldset>
            <legend>Runs</legend>
            <div className="choice-row">
            <label>
              <input type="radio" name="cf-scope" value="run" checked={scope === 'run'} onChange={() => setScope('run')} /> One run
            </label>
            <label>
              <input type="radio" name="cf-scope" value="runs" checked={scope === 'runs'} onChange={() => setScope('runs')} /> Runs by agent and dates (up to 200)
            </label>
            </div>
            {scope === 'run' ? (
              <div className="form-row">
                <label htmlFor="cf-run">Run id</label>
                <input id="cf-run" value={run} onChange={(e) => setRun(e.target.value)} placeholder="run-…" />
              </div>
            ) : (
              <>
                <div className="form-row">
                  <label htmlFor="cf-agent">Agent (optional)</label>
                  <input id="cf-agent" value={agent} onChange={(e) => setAgent(e.target.value)} />
                </div>
                <div className="form-row">
                  <label htmlFor="cf-start">Started from (optional)</label>
                  <input id="cf-start" type="date" value={start} onChange={(e) => setStart(e.target.value)} />
                </div>
                <div className="form-row">
                  <label htmlFor="cf-end">Started until (optional, whole day)</label>
                  <input id="cf-end" type="date" value={end} onChange={(e) => setEnd(e.target.value)} />
                </div>
              </>
            )}
          </fieldset>
          <fieldset>
            <legend>Policies</legend>
            <div className="choice-row">
            <label>
              <input type="radio" name="cf-source" value="today" checked={source === 'today'} onChange={() => setSource('today')} /> Today's policies
            </label>
            <label>
              <input type="radio" name="cf-source" value="patch" checked={source === 'patch'} onChange={() => setSource('patch')} /> Edit an existing policy
            </label>
            <label>
              <input type="radio" name="cf-source" value="candidate" checked={source === 'candidate'} onChange={() => setSource('candidate')} /> Paste a full policy (JSON)
            </label>
            </div>
            {source === 'patch' ? (
              <QueryState query={policies} what="policies" isEmpty={(d) => d.policies.length === 0} empty="There are no policies to edit.">
                {(d) => (
                  <>
                    <div className="form-row">
                      <label htmlFor="cf-policy">Policy</label>
                      <select id="cf-policy" value={policyId} onChange={(e) => setPolicyId(e.target.value)}>
                        <option value="">choose a policy</option>
                        {d.policies.map((p) => (
                          <option key={p.id} value={p.id}>
                            {p.name} (v{p.version}{p.enabled ? '' : ', disabled'})
                          </option>
                        ))}
                      </select>
                    </div>
                    {policy ? (
                      <div className="form-row">
                        <label htmlFor="cf-patch">Edit its fields; the changed ones are sent as the PATCH</label>
                        <textarea id="cf-patch" className="mono" rows={12} value={policyText} onChange={(e) => setEdited((s) => ({ ...s, [policy.id]: e.target.value }))} />
                      </div>
                    ) : null}
                  </>
                )}
              </QueryState>
            ) : null}
            {source === 'candidate' ? (
              <div className="form-row">
                <label htmlFor="cf-candidate">Candidate policy, as POST /api/v1/policies takes it (added to today's)</label>
                <textarea id="cf-candidate" className="mono" rows={8} value={candidate} onChange={(e) => setCandidate(e.target.value)} />
              </div>
            ) : null}
          </fieldset>
        </div>
        <div className="actions-row">
          {source === 'today' ? (
            <button type="submit" className="primary" disabled={evaluate.isPending}>
              {buttonLabel}
            </button>
          ) : (
            <WriteButton type="submit" className="primary" disabled={evaluate.isPending} data-testid="evaluate-candidate">
              {buttonLabel}
            </WriteButton>
          )}
        </div>
      </form>
      {local ? <ProblemMessage error={new Error(local)} /> : null}
      {evaluate.isError ? <ProblemMessage error={evaluate.error} /> : null}
      {data && 'steps' in data ? <RunResult r={data} /> : null}
      {data && 'runs' in data ? (
        <div data-testid="runs-evaluation">
          <p>
            {count(data.runs_evaluated)} of {count(data.runs_matched)} matching runs evaluated with {data.policy_source === 'today' ? "today's policies" : data.policy_source === 'patch' ? 'the patched policy' : 'the candidate policy'}.
          </p>
          {data.truncated ? <p className="notice">More runs matched than one evaluation takes: the newest {count(data.runs_evaluated)} were evaluated.</p> : null}
          <Totals t={data.totals} />
          <DataTable
            caption="Runs decided again, newest first"
            rows={data.runs}
            rowKey={(r) => r.run_id}
            columns={[
              {
                key: 'run',
                header: 'Run',
                cell: (r) => (
                  <Link to={`/replay/${encodeURIComponent(r.run_id)}`}>
                    <Truncate text={r.run_id} />
                  </Link>
                ),
              },
              { key: 'agent', header: 'Agent', cell: (r) => <Truncate text={r.agent_id} width="name" /> },
              { key: 'started', header: 'Started', cell: (r) => <Time iso={r.started_at} /> },
              { key: 'steps', header: 'Steps', cell: (r) => count(r.totals.steps), numeric: true },
              { key: 'prevented', header: 'Prevented', cell: (r) => usd(r.totals.prevented_usd), numeric: true },
              { key: 'spent', header: 'Actually spent', cell: (r) => usd(r.totals.actually_spent_usd), numeric: true },
              { key: 'would', header: 'Would spend', cell: (r) => usd(r.totals.would_spend_usd), numeric: true },
              {
                key: 'detail',
                header: 'Step by step',
                cell: (r) => (
                  <button type="button" className="link-button" onClick={() => showSteps(r.run_id)} aria-label={`Show the steps of ${r.run_id}`}>
                    show steps
                  </button>
                ),
              },
            ]}
          />
          {drill ? (
            <section aria-label={`Steps of ${drill}`}>
              <h3>Steps of {drill}</h3>
              {drillDown.isPending ? <p role="status">Evaluating {drill}…</p> : null}
              {drillDown.isError ? <ProblemMessage error={drillDown.error} /> : null}
              {drillDown.data ? <RunResult r={drillDown.data} /> : null}
            </section>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

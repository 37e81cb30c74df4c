/**
 * The Cedar baseline of `pnpm bench sdk` (./sdk.ts), in a child process driven over IPC (advanced serialization):
 * `@cedar-policy/cedar-wasm` (nodejs build) and `@microsoft/agent-governance-sdk` measured in one V8 isolate abort
 * Node 20.20 (a fatal error in V8's deoptimizer, `DoComputeBuiltinContinuation`, reproduced with the two packages alone,
 * rows interleaved), so Cedar gets a process of its own. It is timed with the same loop (./sdk-harness.ts).
 *
 * Messages (answer `{ok}`, `{samples, cpuUs}`, `{n, ms}` or `{error}`):
 * - `{cmd: 'prepare', id, agentId, n}`: preparse the equivalent policy set of `n` policies (see ./sdk.ts) as `id`;
 * - `{cmd: 'sample', id, agentId, action, context, n}`: `n` timed authorizations, then the action's function when allowed;
 * - `{cmd: 'rate', id, agentId, action, context, count}`: sequential authorizations for throughput.
 */
import { createRequire } from 'node:module';
import { rate, sample } from './sdk-harness.js';

type Cedar = typeof import('@cedar-policy/cedar-wasm/nodejs');
const cedar = createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs') as Cedar;
const work = (a: Record<string, unknown>) => a.amount as number;

/** Per AGP policy i: a `forbid` of its two denied actions for the agent, an `@approval` `forbid` of the third; then one `permit`. */
function prepare(id: string, agentId: string, n: number): void {
  const text: string[] = [];
  for (let i = 0; i < n; i++) {
    text.push(`@id("p${i}-deny") forbid (principal == Agent::"${agentId}", action in [Action::"drop_table_${i}", Action::"delete_records_${i}"], resource);`);
    text.push(`@id("p${i}-approval") @approval("required") forbid (principal == Agent::"${agentId}", action == Action::"wire_transfer_${i}", resource);`);
  }
  text.push('@id("default-allow") permit (principal, action, resource);');
  const r = cedar.preparsePolicySet(id, { staticPolicies: text.join('\n') });
  if (r.type !== 'success') throw new Error(`Cedar: ${JSON.stringify(r.errors)}`);
}

/** An authorization of `action` with `context` by `agentId` against set `id`, then the function when allowed. */
function call(id: string, agentId: string, action: string, context: Record<string, unknown>) {
  const principal = { type: 'Agent', id: agentId };
  const act = { type: 'Action', id: action };
  const resource = { type: 'Tool', id: action };
  return async () => {
    const r = cedar.statefulIsAuthorized({ principal, action: act, resource, context: context as never, preparsedPolicySetId: id, entities: [] });
    if (r.type !== 'success') throw new Error(`Cedar: ${JSON.stringify(r.errors)}`);
    if (r.response.decision !== 'allow') throw new Error(`Cedar denies ${action}: ${JSON.stringify(r.response.diagnostics)}`);
    return work(context);
  };
}

process.on('message', async (m: { cmd: string; id: string; agentId: string; n: number; action: string; context: Record<string, unknown>; count: number }) => {
  try {
    if (m.cmd === 'version') process.send!({ ok: cedar.getCedarSDKVersion() });
    else if (m.cmd === 'prepare') {
      prepare(m.id, m.agentId, m.n);
      process.send!({ ok: true });
    } else if (m.cmd === 'sample') {
      const r = await sample(call(m.id, m.agentId, m.action, m.context), m.n);
      process.send!(r);
    } else if (m.cmd === 'rate') process.send!(await rate(call(m.id, m.agentId, m.action, m.context), m.count));
  } catch (err) {
    process.send!({ error: err instanceof Error ? err.message : String(err) });
  }
});

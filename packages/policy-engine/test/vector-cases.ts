/**
 * The decision vectors: inputs to `decide()` and the decisions it returns, written as canonical JSON lines under
 * packages/policy-engine/vectors/v1/ (one file per rule kind) by `pnpm gen:decision-vectors`, and replayed by the
 * TypeScript test (vectors.test.ts) and the Python SDK's engine (sdks/python/tests/test_vectors.py), which must
 * return the same decision byte for byte. Deterministic: hand-written edge cases by name, then cases from a seeded
 * PRNG, so generating twice gives identical files.
 *
 * One vector: `{ name, input: { policies, kill_switches, action, context, quota? }, expected, requires? }`.
 * `quota` is the QuotaView as a table (`"<policy id>|<limit>"` → what is left); absent keys answer undefined.
 * `requires` names what the Python engine needs beyond the standard library to reproduce it: `phonenumbers` (a
 * phone candidate reaches libphonenumber's metadata), `iban_national_checks` (an IBAN candidate of a country whose
 * BBAN has a national check ibantools runs).
 */
import { canonicalJson, type PolicyDecision } from '@agp/contracts';
import { countrySpecs } from 'ibantools';
import { createRng } from '@agp/simulator/prng';
import { argumentsHash, decide, enginePolicy, type DecisionContext, type EngineKillSwitches, type EnginePolicy, type PolicyAction } from '../src/index.js';

/** The folder version: bump it when the vector format (not the engine's answers) changes. */
export const VECTORS_VERSION = 'v1';

export interface VectorInput {
  policies: EnginePolicy[];
  kill_switches: EngineKillSwitches;
  action: PolicyAction;
  context: Omit<DecisionContext, 'quota'>;
  quota?: Record<string, number>;
}

export interface Vector {
  name: string;
  input: VectorInput;
  expected: PolicyDecision;
  requires?: string[];
}

/** Run one vector's input through decide(), the quota table as the QuotaView. */
export function runVector(input: VectorInput): PolicyDecision {
  const table = input.quota;
  const context: DecisionContext = table === undefined ? { ...input.context } : { ...input.context, quota: (p, l) => (Object.hasOwn(table, `${p}|${l}`) ? table[`${p}|${l}`] : undefined) };
  return decide(input.policies, input.kill_switches, input.action, context);
}

const NOW = Date.parse('2026-11-22T12:00:00Z');
const AGENT = 'agent-1';
const NONE: EngineKillSwitches = { organization: { engaged: false, reason: null }, agents: [] };
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-02-01T00:00:00.000Z';
const T2 = '2026-03-01T00:00:00.000Z';

type Guardrails = NonNullable<EnginePolicy['guardrails']>;
/** Guardrails as a policy recorded before `mode` had a default may hold them: `mode` absent (the engine reads block). */
type Loose<T> = T extends { mode: infer M } ? Omit<T, 'mode'> & { mode?: M } : T;
type LooseGuardrails = { [K in keyof Guardrails]?: Loose<NonNullable<Guardrails[K]>> };
type Settings = Omit<Parameters<typeof enginePolicy>[2], 'guardrails'> & { guardrails?: LooseGuardrails };
const pol = (id: string, s: Partial<Settings> = {}, createdAt = T0): EnginePolicy => enginePolicy(id, createdAt, { name: `P ${id}`, ...s, guardrails: s.guardrails as Guardrails | undefined });
const act = (name: string, extra: Partial<PolicyAction> = {}): PolicyAction => ({ agent_id: AGENT, action_name: name, ...extra });
const ctx = (extra: Partial<DecisionContext> = {}): Omit<DecisionContext, 'quota'> => ({ now: NOW, ...extra });

/** Everything a phone candidate needs before libphonenumber is asked (pii.ts validPhone's pre-checks). */
const PHONE = /(?:\+\d|\(\d|(?<![\w.+-])\d)[\d ().-]{5,20}\d(?![\w])/g;
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g;
const NATIONAL_CHECKS = new Set(Object.entries(countrySpecs).filter(([, s]) => typeof (s as { bban_validation_func?: unknown }).bban_validation_func === 'function').map(([c]) => c));

function strings(v: unknown, out: string[]): void {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') out.push(x);
    else if (x !== null && typeof x === 'object') for (const y of Object.values(x)) stack.push(y);
  }
}

/** What the Python engine needs beyond the standard library for this input (see the module docs). */
function requiresOf(input: VectorInput): string[] {
  const texts: string[] = [];
  strings(input.action.arguments, texts);
  const req = new Set<string>();
  for (const t of texts) {
    for (const m of t.matchAll(PHONE)) {
      const s = m[0];
      const digits = s.replace(/\D/g, '').length;
      if ((s[0] === '+' || /[ ().-]/.test(s)) && digits >= 7 && digits <= 15) req.add('phonenumbers');
    }
    for (const m of t.matchAll(IBAN)) if (NATIONAL_CHECKS.has(m[0].slice(0, 2))) req.add('iban_national_checks');
  }
  return [...req].sort();
}

/** Vectors by file (rule kind), each list in generation order. */
type Files = Map<string, Vector[]>;

class Builder {
  readonly files: Files = new Map();
  private names = new Set<string>();
  add(file: string, name: string, input: VectorInput): void {
    if (this.names.has(name)) throw new Error(`duplicate vector name ${name}`);
    this.names.add(name);
    // What is replayed is what the file holds: the input through canonical JSON (key order, -0, undefined dropped).
    const parsed = JSON.parse(canonicalJson(input)) as VectorInput;
    const expected = runVector(parsed);
    const v: Vector = { name, input: parsed, expected };
    const req = requiresOf(parsed);
    if (req.length > 0) v.requires = req;
    let list = this.files.get(file);
    if (list === undefined) this.files.set(file, (list = []));
    list.push(v);
  }
}

function killSwitches(b: Builder): void {
  const reasons = [null, '', 'incident 42'];
  const agentLists: EngineKillSwitches['agents'][] = [
    [],
    [{ agent_id: AGENT, engaged: true, reason: 'runaway' }],
    [{ agent_id: AGENT, engaged: false, reason: null }],
    [{ agent_id: 'agent-2', engaged: true, reason: null }],
    [
      { agent_id: 'agent-2', engaged: true, reason: 'x' },
      { agent_id: AGENT, engaged: true, reason: null },
    ],
  ];
  const policySets: [string, EnginePolicy[]][] = [
    ['none', []],
    ['deny', [pol('p1', { denied_actions: ['pay'] })]],
    ['budget', [pol('p1', { session_budget: 1 })]],
  ];
  for (const org of [false, true])
    for (const [ri, reason] of reasons.entries())
      for (const [ai, agents] of agentLists.entries())
        for (const [pn, policies] of policySets)
          for (const risk of [undefined, 'low'] as const)
            b.add('kill_switches', `kill_switch/org=${org}/reason=${ri}/agents=${ai}/policies=${pn}/risk=${risk ?? 'none'}`, {
              policies,
              kill_switches: { organization: { engaged: org, reason }, agents },
              action: act('pay', { estimated_cost_usd: 2, ...(risk ? { risk_level: risk } : {}) }),
              context: ctx({ session_spend_usd: 0 }),
            });
}

function lists(b: Builder): void {
  const actions = ['pay', 'search', 'refund'];
  const denied = [[], ['pay'], ['pay', 'search']];
  const allowed = [null, [], ['pay'], ['search', 'refund']];
  const agents = [[], [AGENT], ['agent-2']];
  for (const a of actions)
    for (const [di, d] of denied.entries())
      for (const [li, l] of allowed.entries())
        for (const [gi, g] of agents.entries())
          for (const enabled of [true, false])
            b.add('lists', `lists/${a}/denied=${di}/allowed=${li}/agents=${gi}/enabled=${enabled}`, {
              policies: [pol('p1', { denied_actions: d, allowed_actions: l, agent_ids: g, enabled, approval_required_actions: ['refund'] })],
              kill_switches: NONE,
              action: act(a, { estimated_cost_usd: 0.5 }),
              context: ctx(),
            });
  // Two policies' allow-lists intersect; deny beats allow across policies.
  for (const a of actions)
    b.add('lists', `lists/intersect/${a}`, {
      policies: [pol('p1', { allowed_actions: ['pay', 'search'] }), pol('p2', { allowed_actions: ['search', 'refund'] }, T1)],
      kill_switches: NONE,
      action: act(a),
      context: ctx(),
    });
  // The escalating policy's approval rule rides on the decision: the winner's (oldest first), none when another rule wins.
  const strict = { approval_required_actions: ['pay', 'refund'], approvals_required: 2, separation_of_duties: true };
  for (const a of actions)
    for (const [order, policies] of [
      ['strict_older', [pol('p2', { approval_required_actions: ['pay'] }, T1), pol('p1', strict)]],
      ['strict_newer', [pol('p2', strict, T1), pol('p1', { approval_required_actions: ['pay'] })]],
      ['strict_and_deny', [pol('p1', strict), pol('p2', { denied_actions: ['refund'] }, T1)]],
    ] as const)
      b.add('lists', `lists/approval_rule/${order}/${a}`, { policies: [...policies], kill_switches: NONE, action: act(a), context: ctx() });
}

/** Budgets at, just under and just over each edge, for the action, run and session budgets, and the 80% warning. */
function budgets(b: Builder): void {
  const values = [0, 0.1, 0.3, 1, 2.5, 10, 99.99];
  const deltas: [string, number][] = [
    ['at', 0],
    ['under_1e-3', -1e-3],
    ['under_1e-10', -1e-10],
    ['over_1e-10', 1e-10],
    ['over_1e-8', 1e-8],
    ['over_0.01', 0.01],
  ];
  for (const budget of values)
    for (const [dn, delta] of deltas)
      for (const kind of ['action', 'run', 'session'] as const)
        for (const spentFrac of [0, 0.5, 0.8]) {
          const spent = kind === 'action' ? 0 : budget * spentFrac;
          const cost = Math.max(0, budget - spent + delta);
          const s: Partial<Settings> = kind === 'action' ? { action_budget: budget } : kind === 'run' ? { run_budget: budget } : { session_budget: budget };
          b.add('budgets', `budget/${kind}/${budget}/spent=${spentFrac}/${dn}`, {
            policies: [pol('p1', s)],
            kill_switches: NONE,
            action: act('llm_call', { estimated_cost_usd: cost }),
            context: ctx({ session_spend_usd: kind === 'session' ? spent : 0, run_spend_usd: kind === 'run' ? spent : 0 }),
          });
        }
  // Float sums: 0.1 + 0.2 against 0.3 is at the budget, not over it.
  for (const [spent, cost, budget] of [
    [0.1, 0.2, 0.3],
    [0.2, 0.1, 0.3],
    [0.7, 0.1, 0.8],
    [1e-7, 2e-7, 3e-7],
    [123.456789, 0.000001, 123.45679],
    [0.0078125, 0, 1],
  ])
    for (const kind of ['run', 'session'] as const)
      b.add('budgets', `budget/float/${kind}/${spent}+${cost}vs${budget}`, {
        policies: [pol('p1', kind === 'run' ? { run_budget: budget } : { session_budget: budget })],
        kill_switches: NONE,
        action: act('llm_call', { estimated_cost_usd: cost }),
        context: ctx(kind === 'run' ? { run_spend_usd: spent } : { session_spend_usd: spent }),
      });
  // Warnings at, under and over 80% of the session then run budget.
  for (const budget of [0, 1, 5, 0.3, 1000])
    for (const [dn, delta] of deltas)
      for (const kind of ['run', 'session', 'both'] as const) {
        const total = Math.max(0, 0.8 * budget + delta);
        const s: Partial<Settings> = kind === 'run' ? { run_budget: budget } : kind === 'session' ? { session_budget: budget } : { run_budget: budget, session_budget: budget * 2 };
        b.add('budgets', `budget/warn/${kind}/${budget}/${dn}`, {
          policies: [pol('p1', s)],
          kill_switches: NONE,
          action: act('llm_call', { estimated_cost_usd: total / 2 }),
          context: ctx({ session_spend_usd: total / 2, run_spend_usd: total / 2 }),
        });
      }
  // A quota view: the cost against what the view has left of the fleet's run or session budget.
  for (const kind of ['run_budget', 'session_budget'] as const)
    for (const left of [-1, 0, 0.5, 1, 1 + 1e-10, 2])
      b.add('budgets', `budget/quota/${kind}/left=${left}`, {
        policies: [pol('p1', { [kind]: 10 })],
        kill_switches: NONE,
        action: act('llm_call', { estimated_cost_usd: 1 }),
        context: ctx({ session_spend_usd: 9.5, run_spend_usd: 9.5 }),
        quota: { [`p1|${kind}`]: left },
      });
}

function periodBudgets(b: Builder): void {
  for (const scope of ['agent', 'organization'] as const)
    for (const period of ['hour', 'day', 'month'] as const)
      for (const max of [0, 1, 2.5])
        for (const [cn, cost] of [
          ['at', max],
          ['under', Math.max(0, max - 0.001)],
          ['over', max + 1e-8],
        ] as const)
          for (const [li, left] of [undefined, 0, max / 2, max].entries())
            b.add('period_budgets', `period/${scope}/${period}/${max}/${cn}/left${li}=${left ?? 'none'}`, {
              policies: [pol('p1', { period_budgets: [{ scope, period, max_usd: max }, { scope: 'organization', period: 'month', max_usd: 100 }] })],
              kill_switches: NONE,
              action: act('llm_call', { estimated_cost_usd: cost }),
              context: ctx(),
              ...(left === undefined ? {} : { quota: { [`p1|period_budget:${scope}:${period}`]: left } }),
            });
}

function rateLimits(b: Builder): void {
  for (const window of [1, 60, 0.5, 3600])
    for (const max of [0, 1, 3])
      for (const [en, edge] of [
        ['outside', -window * 1000],
        ['inside', -window * 1000 + 1],
        ['recent', -1],
        ['future', 5],
      ] as const)
        for (const key of ['send', '*'])
          for (const n of [max - 1, max, max + 1]) {
            if (n < 0) continue;
            const calls = Array.from({ length: n }, (_, i) => ({ action_name: i % 2 === 0 || key === 'send' ? 'send' : 'other', at: i === 0 ? NOW + edge : NOW - 1 - i }));
            b.add('rate_limits', `rate/${key}/w=${window}/max=${max}/${en}/n=${n}`, {
              policies: [pol('p1', { rate_limits: { [key]: { max_calls: max, window_seconds: window } } })],
              kill_switches: NONE,
              action: act('send'),
              context: ctx({ recent_calls: calls }),
            });
          }
  // Scoped limits with a quota view (fixed window, fleet-counted) and without one.
  for (const scope of ['agent', 'organization', 'process', undefined] as const)
    for (const left of [undefined, 0, 0.5, 1, 5])
      b.add('rate_limits', `rate/scoped/${scope ?? 'none'}/left=${left ?? 'none'}`, {
        policies: [pol('p1', { rate_limits: { send: { max_calls: 2, window_seconds: 60, ...(scope ? { scope } : {}) } } })],
        kill_switches: NONE,
        action: act('send'),
        context: ctx({ recent_calls: [{ action_name: 'send', at: NOW - 10 }] }),
        ...(left === undefined ? {} : { quota: { 'p1|rate_limit:send': left } }),
      });
}

function loops(b: Builder): void {
  const args = { query: 'weather in Paris', page: 1 };
  const hash = argumentsHash(args);
  for (const threshold of [1, 2, 3])
    for (const window of [10, 60])
      for (const [en, at] of [
        ['outside', NOW - window * 1000],
        ['inside', NOW - window * 1000 + 1],
        ['future', NOW + 1],
      ] as const)
        for (const mode of [undefined, 'block', 'warn'] as const)
          for (const n of [threshold - 1, threshold, threshold + 2]) {
            const calls = [
              ...Array.from({ length: n }, (_, i) => ({ action_name: 'search', at: i === 0 ? at : NOW - 1 - i, arguments_hash: hash })),
              { action_name: 'search', at: NOW - 1, arguments_hash: 'other' },
              { action_name: 'search', at: NOW - 1 },
              { action_name: 'fetch', at: NOW - 1, arguments_hash: hash },
            ];
            b.add('loop', `loop/t=${threshold}/w=${window}/${en}/mode=${mode ?? 'none'}/n=${n}`, {
              policies: [pol('p1', { guardrails: { loop: { threshold, window_seconds: window, ...(mode ? { mode } : {}) } } })],
              kill_switches: NONE,
              action: act('search', { arguments: { page: 1, query: 'weather in Paris' } }),
              context: ctx({ recent_calls: calls }),
            });
          }
}

function idempotency(b: Builder): void {
  const args = { order: 'A-1', amount: 12.5 };
  const hash = argumentsHash(args);
  const keys: [string, string | undefined][] = [
    ['hash', undefined],
    ['short', 'k-1'],
    ['long', 'k'.repeat(30)],
    ['huge', 'é'.repeat(600)],
  ];
  for (const ttl of [1, 300])
    for (const [kn, key] of keys)
      for (const [en, at] of [
        ['outside', NOW - ttl * 1000],
        ['inside', NOW - ttl * 1000 + 1],
        ['future', NOW + 1000],
      ] as const)
        for (const ref of [undefined, 'cache://r1'])
          for (const listed of [true, false]) {
            const k = key ?? hash;
            b.add('idempotency', `idem/ttl=${ttl}/${kn}/${en}/ref=${ref ?? 'none'}/listed=${listed}`, {
              policies: [pol('p1', { guardrails: { idempotency: { actions: listed ? ['charge'] : ['other'], ttl_seconds: ttl } }, approval_required_actions: ['charge'] })],
              kill_switches: NONE,
              action: act('charge', { arguments: args, estimated_cost_usd: 3, ...(key ? { idempotency_key: key } : {}) }),
              context: ctx({
                idempotency_records: [
                  { action_name: 'charge', idempotency_key: k, at, ...(ref ? { cached_result_ref: ref } : {}) },
                  { action_name: 'charge', idempotency_key: k, at: at + 500 },
                  { action_name: 'refund', idempotency_key: k, at: NOW - 1 },
                ],
              }),
            });
          }
}

/** Clocks: fractional and pre-1970 timestamps, as the idempotency context prints them (ISO 8601, ms truncated). */
function clocks(b: Builder): void {
  for (const now of [1795000000123.9, 0.5, -1.5, 86_400_000 * 365.25 * 30 + 0.999, 253402300799999])
    for (const back of [0.4, 1, 999.9])
      b.add('idempotency', `idem/clock/now=${now}/back=${back}`, {
        policies: [pol('p1', { guardrails: { idempotency: { actions: ['charge'], ttl_seconds: 1 } } })],
        kill_switches: NONE,
        action: act('charge', { idempotency_key: 'k' }),
        context: { now, idempotency_records: [{ action_name: 'charge', idempotency_key: 'k', at: now - back }] },
      });
}

/** Samples per PII category: valid ones, then look-alikes that fail the checksum or the validator. */
const PII_SAMPLES: Record<string, { valid: string[]; invalid: string[] }> = {
  email: { valid: ['jane.doe@example.com', 'a+b@mail.example.co.uk', 'x_y%z@sub.domain.io'], invalid: ['jane@localhost', '@example.com', 'not an email at all'] },
  phone: { valid: ['+1 415-555-2671', '(415) 555-2671', '+44 20 7946 0958', '+49 30 901820'], invalid: ['+1 000-000-0000', '4155552671', '123-4567'] },
  payment_card: { valid: ['4111 1111 1111 1111', '5500-0000-0000-0004', '340000000000009', '6011000990139424'], invalid: ['4111 1111 1111 1112', '1234567890123456', '5500-0000-0000-0005'] },
  iban: { valid: ['DE89370400440532013000', 'GB82 WEST 1234 5698 7654 32', 'CH9300762011623852957', 'BE68539007547034'], invalid: ['DE89370400440532013001', 'GB82WEST12345698765433', 'XX89370400440532013000'] },
  us_ssn: { valid: ['123-45-6789', '078-05-1120'], invalid: ['000-12-3456', '666-12-3456', '900-12-3456', '123-00-4567', '123-45-0000'] },
  ip_address: { valid: ['192.168.1.1', '8.8.8.8', '2001:db8::1', '::1', 'fe80::1:2:3:4', '::ffff:10.0.0.1', '1:2:3:4:5:6:7:8'], invalid: ['256.1.1.1', '01.2.3.4', '1.2.3', '2001:db8:::1', '1:2:3:4:5:6:7:8:9'] },
  secret: {
    valid: ['sk-proj-abcdefghijklmnopqrstuvwx', 'ghp_0123456789abcdefghijklmnopqrstuvwxyz', 'AKIAIOSFODNN7EXAMPLE', 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d', 'eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4'],
    invalid: ['sk-short', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1A'],
  },
};

function pii(b: Builder): void {
  const modes = [undefined, 'block', 'warn', 'redact'] as const;
  const categorySets: [string, string[] | undefined][] = [
    ['all', undefined],
    ['own', []],
    ['other', ['email']],
  ];
  for (const [cat, { valid, invalid }] of Object.entries(PII_SAMPLES))
    for (const [vi, sample] of [...valid.map((s) => ['valid', s]), ...invalid.map((s) => ['invalid', s])].entries())
      for (const mode of modes)
        for (const [cn, cats] of categorySets) {
          const categories = cats === undefined ? undefined : cats.length === 0 ? [cat] : cats;
          const placements: [string, Record<string, unknown>][] = [
            ['top', { note: `contact: ${sample[1]} today` }],
            ['nested', { payload: { messages: [{ role: 'user', content: `see ${sample[1]}` }, { content: sample[1] }] }, n: 5 }],
          ];
          for (const [pn, args] of placements)
            b.add('pii', `pii/${cat}/${vi}-${sample[0]}/mode=${mode ?? 'none'}/cats=${cn}/${pn}`, {
              policies: [pol('p1', { guardrails: { pii: { ...(mode ? { mode } : {}), ...(categories ? { categories: categories as never } : {}) } } })],
              kill_switches: NONE,
              action: act('send', { arguments: args }),
              context: ctx(),
            });
        }
  // Several categories in one string, and redaction combined with a downgrade.
  const mixed = { body: 'mail jane.doe@example.com or call +1 415-555-2671, card 4111 1111 1111 1111, ip 10.0.0.1, ssn 123-45-6789', model: 'gpt-4o', list: ['8.8.8.8', 42, null, true] };
  for (const mode of modes)
    for (const withDowngrade of [false, true])
      b.add('pii', `pii/mixed/mode=${mode ?? 'none'}/downgrade=${withDowngrade}`, {
        policies: [pol('p1', { guardrails: { pii: mode ? { mode } : {} }, downgrades: withDowngrade ? [{ action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }] : [] })],
        kill_switches: NONE,
        action: act('send', { arguments: mixed }),
        context: ctx(),
      });
}

function moderation(b: Builder): void {
  const bodies = ['a message the provider flags', 'court', 'émoji 😀 text that is long enough to be cut somewhere in the middle of the sixty-fourth', 42];
  for (const threshold of [0, 0.5, 0.9, 1])
    for (const score of [0, 0.49999, 0.5, 0.9, 1])
      for (const cats of [undefined, ['hate'], ['harassment/threatening']])
        for (const mode of [undefined, 'warn'] as const)
          for (const [bi, body] of bodies.entries())
            b.add('moderation', `moderation/t=${threshold}/s=${score}/cats=${cats?.join('+') ?? 'all'}/mode=${mode ?? 'none'}/body=${bi}`, {
              policies: [pol('p1', { guardrails: { moderation: { threshold, ...(cats ? { categories: cats as never } : {}), ...(mode ? { mode } : {}) } } })],
              kill_switches: NONE,
              action: act('post', {
                arguments: { body, meta: { title: 'hi' } },
                moderation_scores: [
                  { field_path: 'body', scores: { 'hate/threatening': score, harassment: score / 2 } },
                  { field_path: 'meta.missing', scores: { hate: score } },
                ],
              }),
              context: ctx(),
            });
}

function downgrades(b: Builder): void {
  const args = { model: 'gpt-4o', max_tokens: 4000, temperature: 0.7, stream: true, payment: { amount: 250.5, currency: 'EUR' }, messages: [{ content: 'a' }, { content: 'b', tokens: 900 }], '2': 'two', 'a.b': 1 };
  const rules: [string, Settings['downgrades']][] = [
    ['max_top', [{ action: 'llm', argument: 'max_tokens', max: 1000 }]],
    ['max_equal', [{ action: 'llm', argument: 'max_tokens', max: 4000 }]],
    ['max_nested', [{ action: 'llm', argument: 'payment.amount', max: 100.25 }]],
    ['max_array', [{ action: 'llm', argument: 'messages.1.tokens', max: 500 }]],
    ['max_array_oob', [{ action: 'llm', argument: 'messages.2.tokens', max: 500 }]],
    ['max_array_bad_index', [{ action: 'llm', argument: 'messages.01.tokens', max: 500 }]],
    ['max_not_number', [{ action: 'llm', argument: 'model', max: 1 }]],
    ['replace_string', [{ action: 'llm', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }]],
    ['replace_same', [{ action: 'llm', argument: 'model', replace: { 'gpt-4o': 'gpt-4o' } }]],
    ['replace_number', [{ action: 'llm', argument: 'temperature', replace: { '0.7': 0.2 } }]],
    ['replace_bool', [{ action: '*', argument: 'stream', replace: { true: false } }]],
    ['replace_numeric_key', [{ action: 'llm', argument: '2', replace: { two: 'deux' } }]],
    ['replace_missing', [{ action: 'llm', argument: 'nope.deeper', replace: { x: 'y' } }]],
    ['replace_object', [{ action: 'llm', argument: 'payment', replace: { x: 'y' } }]],
    ['other_action', [{ action: 'other', argument: 'max_tokens', max: 1 }]],
    [
      'chain',
      [
        { action: 'llm', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } },
        { action: '*', argument: 'model', replace: { 'gpt-4o-mini': 'small' } },
        { action: 'llm', argument: 'max_tokens', max: 10 },
      ],
    ],
  ];
  for (const [rn, r] of rules)
    for (const withWarn of [false, true])
      b.add('downgrades', `downgrade/${rn}/warn=${withWarn}`, {
        policies: [pol('p1', { downgrades: r, ...(withWarn ? { session_budget: 10 } : {}) })],
        kill_switches: NONE,
        action: act('llm', { arguments: args, estimated_cost_usd: 1 }),
        context: ctx({ session_spend_usd: 8 }),
      });
  // Two policies: the older one's rule first, the newer acts on its result; ties by id.
  for (const [order, a, c] of [
    ['older_first', T0, T1],
    ['newer_first', T1, T0],
    ['tie', T0, T0],
  ] as const)
    b.add('downgrades', `downgrade/two_policies/${order}`, {
      policies: [
        pol('pb', { downgrades: [{ action: 'llm', argument: 'model', replace: { 'gpt-4o-mini': 'tiny', 'gpt-4o': 'gpt-4o-big' } }] }, c),
        pol('pa', { downgrades: [{ action: 'llm', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }] }, a),
      ],
      kill_switches: NONE,
      action: act('llm', { arguments: args }),
      context: ctx(),
    });
}

function precedence(b: Builder): void {
  // Each pair of rules within one policy, and across two policies in both creation orders.
  const rules: [string, Partial<Settings>][] = [
    ['deny', { denied_actions: ['pay'] }],
    ['allow_other', { allowed_actions: ['search'] }],
    ['pii', { guardrails: { pii: {} } }],
    ['pii_warn', { guardrails: { pii: { mode: 'warn' } } }],
    ['pii_redact', { guardrails: { pii: { mode: 'redact' } } }],
    ['moderation', { guardrails: { moderation: { threshold: 0.5 } } }],
    ['idempotency', { guardrails: { idempotency: { actions: ['pay'], ttl_seconds: 60 } } }],
    ['approval', { approval_required_actions: ['pay'] }],
    ['action_budget', { action_budget: 1 }],
    ['run_budget', { run_budget: 10 }],
    ['session_budget', { session_budget: 10 }],
    ['period_budget', { period_budgets: [{ scope: 'agent', period: 'day', max_usd: 1 }] }],
    ['rate', { rate_limits: { pay: { max_calls: 1, window_seconds: 60 } } }],
    ['rate_any', { rate_limits: { '*': { max_calls: 1, window_seconds: 60 } } }],
    ['loop', { guardrails: { loop: { threshold: 1, window_seconds: 60 } } }],
    ['loop_warn', { guardrails: { loop: { threshold: 1, window_seconds: 60, mode: 'warn' } } }],
    ['downgrade', { downgrades: [{ action: 'pay', argument: 'amount', max: 100 }] }],
    ['warn', { session_budget: 12 }],
    ['nothing', {}],
  ];
  const args = { to: 'jane.doe@example.com', amount: 250, body: 'flagged text' };
  const hash = argumentsHash(args);
  const input = (policies: EnginePolicy[]): VectorInput => ({
    policies,
    kill_switches: NONE,
    action: act('pay', { arguments: args, estimated_cost_usd: 2, idempotency_key: 'k', moderation_scores: [{ field_path: 'body', scores: { harassment: 0.9 } }] }),
    context: ctx({ session_spend_usd: 8.5, run_spend_usd: 8.5, recent_calls: [{ action_name: 'pay', at: NOW - 1000, arguments_hash: hash }], idempotency_records: [{ action_name: 'pay', idempotency_key: 'k', at: NOW - 1000 }] }),
  });
  const merge = (x: Partial<Settings>, y: Partial<Settings>): Partial<Settings> => ({ ...x, ...y, guardrails: { ...x.guardrails, ...y.guardrails } });
  for (const [an, a] of rules)
    for (const [cn, c] of rules) {
      b.add('precedence', `precedence/same/${an}+${cn}`, input([pol('p1', merge(a, c))]));
      b.add('precedence', `precedence/two/${an}@older+${cn}@newer`, input([pol('p2', c, T1), pol('p1', a, T0)]));
    }
  for (const [an, a] of rules) b.add('precedence', `precedence/three/${an}/tie_by_id`, input([pol('pz', a, T2), pol('pb', a, T0), pol('pa', a, T0)]));
}

/** Unicode text and keys, deep and wide arguments. */
function unicodeDeep(b: Builder): void {
  let deep: Record<string, unknown> = { leaf: 'mail jane.doe@example.com', n: 1 };
  for (let i = 0; i < 300; i++) deep = { [`k${i % 7}`]: deep, arr: [i] };
  const texts = ['héllo wörld', '日本語のテキスト jane.doe@example.com', '😀😀😀 emoji before 4111 1111 1111 1111', 'RTL ‏עברית‏ 8.8.8.8', 'zero\u0000byte and \u2028 separator', 'lone \ud800 surrogate', 'ключ: 123-45-6789'];
  for (const [ti, text] of texts.entries())
    for (const mode of ['block', 'redact', 'warn'] as const) {
      b.add('unicode_deep', `unicode/text=${ti}/mode=${mode}`, {
        policies: [pol('p1', { guardrails: { pii: { mode }, loop: { threshold: 1, window_seconds: 60 } } })],
        kill_switches: NONE,
        action: act('écrire', { arguments: { [`clé_${ti}`]: text, '10': text, '9': [text], 'ü': { 'ß': text } } }),
        context: ctx({ recent_calls: [{ action_name: 'écrire', at: NOW - 5, arguments_hash: 'x' }] }),
      });
      b.add('unicode_deep', `unicode/moderation/text=${ti}/mode=${mode}`, {
        policies: [pol('p1', { name: `Politique «${ti}» 🚦`, guardrails: { moderation: { threshold: 0.1, ...(mode === 'warn' ? { mode } : {}) } } })],
        kill_switches: NONE,
        action: act('post', { arguments: { body: text.repeat(5) }, moderation_scores: [{ field_path: 'body', scores: { violence: 0.3 } }] }),
        context: ctx(),
      });
    }
  for (const mode of ['block', 'redact'] as const)
    b.add('unicode_deep', `deep/300/pii=${mode}`, {
      policies: [pol('p1', { guardrails: { pii: { mode }, idempotency: { actions: ['walk'], ttl_seconds: 60 } } })],
      kill_switches: NONE,
      action: act('walk', { arguments: deep }),
      context: ctx(),
    });
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) wide[`f${i}`] = i % 50 === 0 ? `ip 10.0.${i}.1` : i;
  b.add('unicode_deep', 'wide/200', { policies: [pol('p1', { guardrails: { pii: {} } })], kill_switches: NONE, action: act('walk', { arguments: wide }), context: ctx() });
}

/** Random policies and states from a seeded PRNG: every rule kind mixed, values near the edges. */
function random(b: Builder, count: number): void {
  const rng = createRng(20261122);
  const r = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;
  const actions = ['pay', 'search', 'send', 'llm'];
  const usd = () => pick([0, 0.1, 0.2, 0.3, 1, 2.5, 10, Math.round(r() * 1e6) / 1e4, r() * 5]);
  const argPool = [{}, { q: 'x' }, { amount: 120, model: 'gpt-4o' }, { to: 'a.b@example.org', n: [1, 2, 3] }, { nested: { card: '4111-1111-1111-1111', ok: 'fine' } }, { ip: '192.168.0.1', text: 'normal text here' }];
  for (let i = 0; i < count; i++) {
    const nPolicies = Math.floor(r() * 4);
    const args = pick(argPool);
    const name = pick(actions);
    const hash = argumentsHash(args);
    const policies: EnginePolicy[] = [];
    for (let j = 0; j < nPolicies; j++) {
      const s: Partial<Settings> = {};
      if (chance(0.15)) s.denied_actions = [pick(actions)];
      if (chance(0.1)) s.allowed_actions = [pick(actions), pick(actions)];
      if (chance(0.1)) s.approval_required_actions = [pick(actions)];
      if (chance(0.3)) s.session_budget = usd();
      if (chance(0.3)) s.run_budget = usd();
      if (chance(0.2)) s.action_budget = usd();
      if (chance(0.15)) s.period_budgets = [{ scope: pick(['agent', 'organization'] as const), period: pick(['hour', 'day', 'month'] as const), max_usd: usd() }];
      if (chance(0.3)) s.rate_limits = { [pick([...actions, '*'])]: { max_calls: Math.floor(r() * 4), window_seconds: pick([1, 10, 60]), ...(chance(0.5) ? { scope: pick(['agent', 'organization', 'process'] as const) } : {}) } };
      if (chance(0.2)) s.downgrades = [{ action: pick([...actions, '*']), argument: pick(['amount', 'model', 'n.1', 'nested.card']), ...(chance(0.5) ? { max: pick([1, 100, 200]) } : { replace: { 'gpt-4o': 'mini', '2': 'two' } }) }];
      const g: NonNullable<Settings['guardrails']> = {};
      if (chance(0.2)) g.pii = { mode: pick(['block', 'warn', 'redact'] as const) };
      if (chance(0.15)) g.loop = { threshold: 1 + Math.floor(r() * 3), window_seconds: pick([10, 60]), mode: pick(['block', 'warn'] as const) };
      if (chance(0.1)) g.idempotency = { actions: [name], ttl_seconds: pick([5, 60]) };
      if (chance(0.1)) g.moderation = { threshold: pick([0.3, 0.5, 0.8]) };
      s.guardrails = g;
      if (chance(0.1)) s.agent_ids = [pick([AGENT, 'agent-2'])];
      if (chance(0.05)) s.enabled = false;
      policies.push(pol(`r${i}-${j}`, s, pick([T0, T1, T2])));
    }
    const calls = Array.from({ length: Math.floor(r() * 5) }, () => ({ action_name: pick(actions), at: NOW - Math.floor(r() * 70_000), ...(chance(0.6) ? { arguments_hash: chance(0.7) ? hash : 'h' } : {}) }));
    const quota: Record<string, number> = {};
    if (chance(0.2)) for (const p of policies) quota[`${p.id}|${pick(['session_budget', 'run_budget', 'period_budget:agent:day', `rate_limit:${name}`, 'rate_limit:*'])}`] = pick([0, 0.5, 1, 3]);
    b.add('random', `random/${i}`, {
      policies,
      kill_switches: chance(0.03) ? { organization: { engaged: true, reason: 'r' }, agents: [] } : chance(0.03) ? { organization: { engaged: false, reason: null }, agents: [{ agent_id: AGENT, engaged: true, reason: null }] } : NONE,
      action: act(name, {
        arguments: args,
        estimated_cost_usd: usd(),
        ...(chance(0.2) ? { risk_level: pick(['minimal', 'low', 'medium', 'high', 'critical'] as const) } : {}),
        ...(chance(0.3) ? { idempotency_key: pick(['k1', 'k2']) } : {}),
        ...(chance(0.2) ? { moderation_scores: [{ field_path: pick(['q', 'text', 'to']), scores: { hate: r(), violence: r() } }] } : {}),
      }),
      context: ctx({
        session_spend_usd: usd(),
        run_spend_usd: usd(),
        recent_calls: calls,
        ...(chance(0.3) ? { idempotency_records: [{ action_name: name, idempotency_key: pick(['k1', 'k2', hash]), at: NOW - Math.floor(r() * 70_000) }] } : {}),
      }),
      ...(Object.keys(quota).length > 0 ? { quota } : {}),
    });
  }
}

/** Every vector file: name (`<kind>.jsonl`) → its text, one canonical JSON vector per line. */
export function generateVectorFiles(): Map<string, string> {
  const b = new Builder();
  killSwitches(b);
  lists(b);
  budgets(b);
  periodBudgets(b);
  rateLimits(b);
  loops(b);
  idempotency(b);
  clocks(b);
  pii(b);
  moderation(b);
  downgrades(b);
  precedence(b);
  unicodeDeep(b);
  random(b, 1500);
  const out = new Map<string, string>();
  for (const [file, vectors] of [...b.files.entries()].sort(([a], [c]) => (a < c ? -1 : 1))) out.set(`${file}.jsonl`, vectors.map((v) => `${canonicalJson(v)}\n`).join(''));
  return out;
}

import type { CreatePolicy, InterventionType, RiskLevel } from '@agp/contracts';
import type { Rng } from './prng.js';

/**
 * The simulated world: agent families, the actions they attempt, the policies that fire and the text templates.
 * Pure data plus small pure functions of a {@link Rng}; `simulate.ts` combines them into intervention bodies.
 */

/** Personal-data categories the PII guardrail reports. */
export type PiiCategory = 'email' | 'phone_number' | 'credit_card' | 'us_ssn';

/** Where personal data can sit in an action's arguments: a dotted path, and whether it replaces the value or is appended to text. */
export interface PiiSlot {
  path: string;
  mode: 'replace' | 'append';
  categories: readonly PiiCategory[];
  /** How an appended value reads in this field. @default {@link piiPhrase} */
  phrase?: (category: PiiCategory, value: string) => string;
}

/** An action agents attempt, with what a policy sees of it. */
export interface ActionSpec {
  name: string;
  /** What the action does, whatever its arguments: the description its agents register (never one call's intent). */
  summary: string;
  /** Relative weights of the risk levels for this action. */
  risk: Readonly<Partial<Record<RiskLevel, number>>>;
  /** Estimated cost in USD: log-normal median and log-space sigma. */
  cost: { median: number; sigma: number };
  /** Intervention types that plausibly fire on this action. */
  types: readonly InterventionType[];
  /** Arguments of one attempt; `costUsd` is its estimated cost (the amount, for money movements). */
  inputs(rng: Rng, costUsd: number): Record<string, unknown>;
  /** Fields that can carry personal data (needed when `types` has `pii_blocked`). */
  piiSlots: readonly PiiSlot[];
  /** Free-text fields moderation reads (needed when `types` has `content_blocked`). */
  textSlots: readonly string[];
  /** The reduced arguments a downgrade policy substitutes, the factor it applies to the cost, and why (needed for `downgrade`). */
  downgrade?(inputs: Record<string, unknown>): { inputs: Record<string, unknown>; costFactor: number; reason: string };
  /** What the agent was trying to do. */
  intent(inputs: Record<string, unknown>): string;
  /** What would have happened had the action run. */
  blastRadius(inputs: Record<string, unknown>): string;
  /**
   * What one successful call returns (its ledger entry's `outputs`). A pure function of the call's `inputs`, so a
   * replay reproduces it (examples/replay-handlers.mjs does, action by action), unless `nondeterministicOutput` is
   * set: then it also draws from `rng`, as a language-model completion differs from call to call. Source: docs/decisions.md
   * (Replaying simulated runs: a simulated run replays with the example handlers).
   */
  output(inputs: Record<string, unknown>, rng: Rng): Record<string, unknown>;
  /** `output` draws from the generator: not reproducible from the inputs, so a replay handler marks it non-deterministic. */
  nondeterministicOutput?: true;
}

/**
 * A policy of the simulated organisation and the intervention types it raises. `id` is a local key only: the
 * generators cite it as `policy_id`, and `runSimulation` creates the policy through `POST /api/v1/policies` (or
 * reuses one of the same `name`) and sends the server's id instead (docs/ingest.md, Simulated data).
 */
export interface PolicySpec {
  /** Local key, e.g. `pol-budget-guard`; never sent as a policy id. */
  id: string;
  /** The policy's name on the platform; a re-run reuses the policy with this exact name. */
  name: string;
  types: readonly InterventionType[];
  /** The settings it is created with (`POST /api/v1/policies` body without `name`; budgets in USD). */
  settings: Omit<CreatePolicy, 'name' | 'enabled'>;
}

/** An agent family: the name stem (`billing-agent` → `billing-agent-3`), what it does, and its action profile (relative weights). */
export interface AgentFamily {
  stem: string;
  /** The agent's description as it registers (`Simulated <description>`). */
  description: string;
  actions: Readonly<Record<string, number>>;
}

/** Relative frequency of each intervention type before filtering by action: blocks and warnings dominate. */
export const TYPE_WEIGHTS: Readonly<Record<InterventionType, number>> = {
  hard_block: 15,
  warning: 17,
  approval_required: 13,
  rate_limited: 10,
  budget_exceeded: 10,
  pii_blocked: 9,
  content_blocked: 6,
  loop_detected: 7,
  idempotent_replay: 5,
  downgrade: 8,
};

/** Human label of each type, for descriptions. */
export const TYPE_LABELS: Readonly<Record<InterventionType, string>> = {
  hard_block: 'Hard block',
  approval_required: 'Approval required',
  rate_limited: 'Rate limited',
  budget_exceeded: 'Budget exceeded',
  pii_blocked: 'PII blocked',
  content_blocked: 'Content blocked',
  loop_detected: 'Loop detected',
  idempotent_replay: 'Idempotent replay',
  downgrade: 'Downgrade',
  warning: 'Warning',
};

/** The six policies. Every type has at least one. */
export const POLICIES: readonly PolicySpec[] = [
  {
    id: 'pol-budget-guard',
    name: 'Budget guard',
    types: ['budget_exceeded', 'downgrade', 'warning'],
    settings: { description: 'Caps spend per run and per session; downgrades or warns on expensive calls (agp simulate).', run_budget: 50, session_budget: 500 },
  },
  {
    id: 'pol-kill-switch',
    name: 'Denied actions and kill switch',
    types: ['hard_block'],
    settings: { description: 'Actions no agent may run unattended (agp simulate).', denied_actions: ['delete_records', 'run_shell'] },
  },
  {
    id: 'pol-human-approval',
    name: 'Human approval for risky actions',
    types: ['approval_required'],
    settings: { description: 'Money movements, deploys and deletes wait for a human (agp simulate).', approval_required_actions: ['refund_payment', 'transfer_funds', 'deploy_service', 'delete_records'] },
  },
  {
    id: 'pol-runaway-guard',
    name: 'Runaway guard (rate, loop, replay)',
    types: ['rate_limited', 'loop_detected', 'idempotent_replay'],
    settings: {
      description: 'Stops call storms, loops and replays (agp simulate).',
      rate_limits: { '*': { max_calls: 60, window_seconds: 60, scope: 'agent' }, send_email: { max_calls: 20, window_seconds: 60, scope: 'agent' }, post_to_slack: { max_calls: 30, window_seconds: 60, scope: 'agent' } },
    },
  },
  {
    id: 'pol-data-protection',
    name: 'Data protection (PII and moderation)',
    types: ['pii_blocked', 'content_blocked'],
    settings: { description: 'Blocks personal data and flagged content in action arguments (agp simulate).' },
  },
  {
    id: 'pol-prod-safety',
    name: 'Production safety',
    types: ['hard_block', 'downgrade', 'warning'],
    settings: { description: 'Guards production systems (agp simulate).', denied_actions: ['run_shell'], approval_required_actions: ['deploy_service'], run_budget: 200 },
  },
];

/** Agent families and what each mostly does. */
export const AGENT_FAMILIES: readonly AgentFamily[] = [
  { stem: 'billing-agent', description: 'billing agent: refunds, transfers and customer billing questions', actions: { refund_payment: 30, query_customer_db: 25, send_email: 20, post_to_slack: 10, transfer_funds: 8, update_crm_contact: 7 } },
  { stem: 'support-triage', description: 'support triage agent: answers customers, looks them up and updates the CRM', actions: { send_email: 30, query_customer_db: 25, post_to_slack: 15, update_crm_contact: 15, refund_payment: 10, generate_report: 5 } },
  { stem: 'devops-runner', description: 'DevOps runner: deploys services and runs operational commands', actions: { run_shell: 35, deploy_service: 30, post_to_slack: 15, delete_records: 10, generate_report: 10 } },
  { stem: 'finance-ops', description: 'finance operations agent: pays vendors, issues refunds and reports', actions: { transfer_funds: 30, generate_report: 20, refund_payment: 15, query_customer_db: 15, send_email: 10, post_to_slack: 10 } },
  { stem: 'data-steward', description: 'data steward: queries, cleans up and reports on customer data', actions: { query_customer_db: 35, delete_records: 25, generate_report: 15, post_to_slack: 15, run_shell: 10 } },
  { stem: 'sales-outreach', description: 'sales outreach agent: emails prospects and keeps the CRM current', actions: { send_email: 45, update_crm_contact: 25, generate_report: 15, post_to_slack: 15 } },
];

const usd = (n: unknown) => `$${Number(n).toFixed(2)}`;
const FIRST = ['jane', 'omar', 'li', 'priya', 'lucas', 'amara', 'sven', 'maria', 'kenji', 'chloe'];
const LAST = ['doe', 'haddad', 'wei', 'sharma', 'martin', 'okafor', 'berg', 'garcia', 'tanaka', 'dubois'];
const VENDORS = ['Northwind Traders', 'Acme Logistics', 'Globex Cloud', 'Initech Consulting', 'Umbrella Supplies'];

/** A fake person's email on a reserved example domain. */
function fakeEmail(rng: Rng): string {
  return `${rng.pick(FIRST)}.${rng.pick(LAST)}${rng.int(1, 99)}@${rng.pick(['example.com', 'example.org', 'mail.example.net'])}`;
}

const PII_VALUES: Record<PiiCategory, (rng: Rng) => string> = {
  email: fakeEmail,
  // 555-01xx numbers are reserved for fiction; card numbers are the networks' published test numbers; 9xx SSNs are never issued.
  phone_number: (rng) => `+1-555-01${rng.int(0, 9)}${rng.int(0, 9)}-${rng.int(1000, 9999)}`,
  credit_card: (rng) => rng.pick(['4111 1111 1111 1111', '5555 5555 5555 4444', '4012 8888 8888 1881', '3782 822463 10005']),
  us_ssn: (rng) => `9${rng.int(10, 99)}-${rng.int(10, 99)}-${rng.int(1000, 9999)}`,
};

/** A fake value of a personal-data category. */
export function fakePii(rng: Rng, category: PiiCategory): string {
  return PII_VALUES[category](rng);
}

/** How a personal-data value reads when appended to free text. */
export function piiPhrase(category: PiiCategory, value: string): string {
  return { email: `(reach me at ${value})`, phone_number: `(call ${value})`, credit_card: `(card on file: ${value})`, us_ssn: `(SSN ${value} for verification)` }[category];
}

/**
 * Partly mask a matched value: emails keep the first character and the domain; numbers keep their last four
 * digits; other text keeps its first and last two characters (the platform's own rule).
 */
export function maskMatch(category: string, value: string): string {
  if (category === 'email') {
    const at = value.indexOf('@');
    return `${value[0]}***${value.slice(at)}`;
  }
  if (category === 'phone_number' || category === 'credit_card' || category === 'us_ssn') {
    let keep = 4;
    return value
      .split('')
      .reverse()
      .map((c) => (/\d/.test(c) ? (keep-- > 0 ? c : '*') : c))
      .reverse()
      .join('');
  }
  return value.length <= 4 ? '*'.repeat(value.length) : value.slice(0, 2) + '*'.repeat(value.length - 4) + value.slice(-2);
}

/** Moderation categories, each with phrases that trip them; the flagged span is in [brackets]. */
export const MODERATION_PHRASES: Readonly<Record<string, readonly string[]>> = {
  harassment: ['this customer is an absolute [idiot] and should be told so', 'tell them they are too [stupid] to use the product'],
  threats: ["if they don't pay by Friday we will [make sure they regret it]", 'remind him [we know where his office is]'],
  spam: ['[CLICK NOW to claim your FREE $500 gift card] before it expires!!!', 'act fast: [guaranteed 300% returns], wire the deposit today'],
  profanity: ['this [damn] release is a total piece of [crap]', 'who the [hell] approved this garbage'],
  misinformation: ['our supplement is [FDA-approved to cure anxiety]', 'the outage was [caused by a competitor hacking us]'],
};

/**
 * A moderation phrase as it appears in the arguments (brackets removed) and as it is reported: the phrase
 * with each flagged span masked to its first and last two characters.
 */
export function moderationMatch(phrase: string): { text: string; masked: string } {
  return { text: phrase.replace(/[[\]]/g, ''), masked: phrase.replace(/\[([^\]]+)\]/g, (_, span: string) => maskMatch('moderation', span)) };
}

/** Every action the fleet attempts. */
export const ACTIONS: Readonly<Record<string, ActionSpec>> = {
  refund_payment: {
    name: 'refund_payment',
    summary: "Refund a customer's payment, in full or in part, to the card it was charged on",
    risk: { critical: 10, high: 45, medium: 35, low: 10 },
    cost: { median: 60, sigma: 1.0 },
    types: ['hard_block', 'approval_required', 'rate_limited', 'budget_exceeded', 'pii_blocked', 'loop_detected', 'idempotent_replay', 'downgrade', 'warning'],
    inputs: (rng, cost) => ({
      payment_id: `pay_${rng.hex(14)}`,
      order_id: `ord-${rng.int(100000, 999999)}`,
      amount_usd: cost,
      currency: 'USD',
      reason: rng.pick(['duplicate_charge', 'item_not_received', 'service_outage_credit', 'customer_goodwill']),
      note: rng.pick(['Customer called twice about this charge.', 'Escalated from chat.', 'Order arrived damaged.']),
    }),
    piiSlots: [{ path: 'note', mode: 'append', categories: ['email', 'phone_number', 'credit_card'] }],
    textSlots: [],
    downgrade: (i) => {
      const capped = Math.round(Number(i.amount_usd) * 0.5 * 100) / 100;
      return { inputs: { ...i, amount_usd: capped, partial: true }, costFactor: 0.5, reason: `Refund reduced from ${usd(i.amount_usd)} to a partial refund of ${usd(capped)} pending review` };
    },
    intent: (i) => `Refund ${usd(i.amount_usd)} for order ${String(i.order_id)} (${String(i.reason).replaceAll('_', ' ')})`,
    blastRadius: (i) => `${usd(i.amount_usd)} returned to the customer's card, possibly twice; finance reconciliation and a chargeback dispute if wrong`,
    output: (i) => ({ refund_id: `re_${String(i.payment_id).slice('pay_'.length)}`, order_id: i.order_id, amount_usd: i.amount_usd, currency: i.currency, status: 'refunded' }),
  },
  transfer_funds: {
    name: 'transfer_funds',
    summary: "Wire money from an operating account to a vendor's or beneficiary's account",
    risk: { critical: 55, high: 35, medium: 10 },
    cost: { median: 400, sigma: 1.1 },
    types: ['hard_block', 'approval_required', 'budget_exceeded', 'loop_detected', 'idempotent_replay', 'downgrade', 'warning'],
    inputs: (rng, cost) => ({
      from_account: `acct_ops_${rng.int(1000, 9999)}`,
      to_account: `acct_ext_${rng.hex(10)}`,
      beneficiary: rng.pick(VENDORS),
      amount_usd: cost,
      memo: `Invoice INV-${rng.int(10000, 99999)}`,
    }),
    piiSlots: [],
    textSlots: [],
    downgrade: (i) => ({
      inputs: { ...i, amount_usd: Math.round(Number(i.amount_usd) * 0.25 * 100) / 100, hold_remainder: true },
      costFactor: 0.25,
      reason: `Transfer of ${usd(i.amount_usd)} reduced to a first instalment of 25%; the rest is held until the beneficiary is verified`,
    }),
    intent: (i) => `Pay ${String(i.beneficiary)} ${usd(i.amount_usd)} for ${String(i.memo)}`,
    blastRadius: (i) => `An irreversible wire of ${usd(i.amount_usd)} to ${String(i.to_account)}, an account first seen today`,
    output: (i) => ({ transfer_id: `tr_${String(i.to_account).slice('acct_ext_'.length)}`, beneficiary: i.beneficiary, amount_usd: i.amount_usd, status: 'settled' }),
  },
  delete_records: {
    name: 'delete_records',
    summary: 'Delete the rows of a database table that match a condition',
    risk: { critical: 50, high: 40, medium: 10 },
    cost: { median: 15, sigma: 1.0 },
    types: ['hard_block', 'approval_required', 'rate_limited', 'loop_detected', 'downgrade', 'warning'],
    inputs: (rng) => {
      const table = rng.pick(['customers', 'orders', 'events', 'sessions', 'invoices']);
      return {
        database: rng.pick(['prod-main', 'prod-analytics', 'crm']),
        table,
        where: rng.pick(["created_at < '2023-01-01'", "status = 'inactive'", 'tenant_id IS NULL', '1 = 1']),
        estimated_rows: rng.int(500, 4_000_000),
        hard_delete: true,
      };
    },
    piiSlots: [],
    textSlots: [],
    downgrade: (i) => ({ inputs: { ...i, hard_delete: false, max_rows: 1000 }, costFactor: 0.1, reason: 'Hard delete turned into a soft delete of at most 1000 rows' }),
    intent: (i) => `Clean up ${String(i.table)} rows where ${String(i.where)}`,
    blastRadius: (i) => `${Number(i.estimated_rows).toLocaleString('en-US')} rows permanently removed from ${String(i.database)}.${String(i.table)}; a restore from backup takes hours`,
    output: (i) => ({ database: i.database, table: i.table, deleted_rows: i.estimated_rows, mode: i.hard_delete ? 'hard' : 'soft' }),
  },
  deploy_service: {
    name: 'deploy_service',
    summary: 'Roll a service version out to an environment',
    risk: { critical: 15, high: 45, medium: 30, low: 10 },
    cost: { median: 8, sigma: 0.9 },
    types: ['hard_block', 'approval_required', 'rate_limited', 'budget_exceeded', 'loop_detected', 'idempotent_replay', 'downgrade', 'warning'],
    inputs: (rng) => ({
      service: rng.pick(['checkout-api', 'billing-worker', 'search', 'auth-gateway', 'notifications']),
      version: `v${rng.int(1, 4)}.${rng.int(0, 30)}.${rng.int(0, 12)}`,
      environment: rng.pick(['production', 'production', 'staging']),
      replicas: rng.int(2, 24),
      strategy: 'rolling',
    }),
    piiSlots: [],
    textSlots: [],
    downgrade: (i) => ({ inputs: { ...i, strategy: 'canary', replicas: 1 }, costFactor: 0.2, reason: `Rolling deploy of ${String(i.service)} to ${String(i.replicas)} replicas reduced to a single canary` }),
    intent: (i) => `Deploy ${String(i.service)} ${String(i.version)} to ${String(i.environment)}`,
    blastRadius: (i) => `${String(i.service)} ${String(i.version)} on ${String(i.replicas)} ${String(i.environment)} replicas at once; a bad build takes the service down`,
    output: (i) => ({ deployment: `${String(i.service)}@${String(i.version)}`, environment: i.environment, ready_replicas: i.replicas }),
  },
  run_shell: {
    name: 'run_shell',
    summary: "Run a shell command on a host with the agent's credentials",
    risk: { critical: 25, high: 40, medium: 25, low: 10 },
    cost: { median: 0.8, sigma: 1.0 },
    types: ['hard_block', 'approval_required', 'rate_limited', 'loop_detected', 'warning'],
    inputs: (rng) => ({
      command: rng.pick([
        'rm -rf /var/lib/app/cache/*',
        'kubectl delete pod -l app=api --all-namespaces',
        'terraform apply -auto-approve',
        'psql -c "VACUUM FULL"',
        'curl -s https://install.example.sh | bash',
        'aws s3 rm s3://prod-backups --recursive',
      ]),
      cwd: rng.pick(['/srv/app', '/home/agent', '/opt/infra']),
      timeout_s: rng.int(30, 600),
    }),
    piiSlots: [],
    textSlots: [],
    intent: (i) => `Run \`${String(i.command)}\` in ${String(i.cwd)}`,
    blastRadius: (i) => `\`${String(i.command)}\` runs with the agent's credentials on a production host; its effects cannot be undone`,
    output: (i) => ({ exit_code: 0, cwd: i.cwd }),
  },
  send_email: {
    name: 'send_email',
    summary: 'Send an email to one or more recipients',
    risk: { high: 15, medium: 40, low: 40, minimal: 5 },
    cost: { median: 0.35, sigma: 1.2 },
    types: ['hard_block', 'rate_limited', 'budget_exceeded', 'pii_blocked', 'content_blocked', 'loop_detected', 'idempotent_replay', 'downgrade', 'warning'],
    inputs: (rng) => ({
      to: [fakeEmail(rng)],
      subject: rng.pick(['Your refund request', 'Follow-up on your ticket', 'Quarterly account review', 'Action needed: payment failed']),
      body: rng.pick(['Hi, thanks for reaching out. We have looked into your account.', 'Hello, following up on our call earlier today.', 'Dear customer, your invoice is attached.']),
      recipients_count: rng.int(1, 5000),
    }),
    piiSlots: [{ path: 'body', mode: 'append', categories: ['email', 'phone_number', 'credit_card', 'us_ssn'] }],
    textSlots: ['body', 'subject'],
    downgrade: (i) => ({ inputs: { ...i, recipients_count: 1, send_as_draft: true }, costFactor: 0.05, reason: `Bulk send to ${String(i.recipients_count)} recipients saved as a draft for one recipient` }),
    intent: (i) => `Email "${String(i.subject)}" to ${String(i.recipients_count)} recipient(s)`,
    blastRadius: (i) => `"${String(i.subject)}" lands in ${String(i.recipients_count)} inboxes and cannot be recalled`,
    output: (i) => ({ queued: i.recipients_count, subject: i.subject }),
  },
  post_to_slack: {
    name: 'post_to_slack',
    summary: 'Post a message to a Slack channel',
    risk: { medium: 10, low: 55, minimal: 35 },
    cost: { median: 0.02, sigma: 0.6 },
    types: ['rate_limited', 'pii_blocked', 'content_blocked', 'loop_detected', 'idempotent_replay', 'warning'],
    inputs: (rng) => ({
      channel: rng.pick(['#general', '#support', '#incidents', '#sales', '#eng-deploys']),
      text: rng.pick(['Heads up: the nightly sync finished.', 'Customer escalation summary below.', 'Deploy status update.', 'Weekly numbers are in.']),
    }),
    piiSlots: [{ path: 'text', mode: 'append', categories: ['email', 'phone_number', 'credit_card'] }],
    textSlots: ['text'],
    intent: (i) => `Post an update to ${String(i.channel)}`,
    blastRadius: (i) => `A message visible to everyone in ${String(i.channel)}, including guests`,
    output: (i) => ({ channel: i.channel, posted: true, characters: String(i.text).length }),
  },
  query_customer_db: {
    name: 'query_customer_db',
    summary: 'Read customer records from the customer database',
    risk: { high: 20, medium: 45, low: 30, minimal: 5 },
    cost: { median: 0.6, sigma: 1.1 },
    types: ['hard_block', 'rate_limited', 'budget_exceeded', 'pii_blocked', 'loop_detected', 'downgrade', 'warning'],
    inputs: (rng) => ({
      database: 'crm',
      sql: rng.pick(['SELECT * FROM customers', 'SELECT id, email, plan FROM customers', 'SELECT * FROM orders JOIN customers USING (customer_id)']),
      limit: rng.int(1000, 500_000),
      purpose: rng.pick(['churn analysis', 'ticket context', 'billing audit']),
    }),
    piiSlots: [
      {
        path: 'sql',
        mode: 'append',
        categories: ['email', 'phone_number', 'us_ssn'],
        phrase: (category, value) => `WHERE ${{ email: 'email', phone_number: 'phone', credit_card: 'card_number', us_ssn: 'ssn' }[category]} = '${value}'`,
      },
    ],
    textSlots: [],
    downgrade: (i) => ({ inputs: { ...i, limit: 1000, columns: ['id', 'plan', 'created_at'] }, costFactor: 0.05, reason: `Query limited to 1000 rows without contact columns (asked for ${String(i.limit)})` }),
    intent: (i) => `Pull customer data for ${String(i.purpose)}`,
    blastRadius: (i) => `Up to ${Number(i.limit).toLocaleString('en-US')} customer rows with contact details copied into the agent's context`,
    output: (i) => ({ database: i.database, rows: i.limit, purpose: i.purpose }),
  },
  generate_report: {
    name: 'generate_report',
    summary: 'Generate a report over documents with a language model',
    risk: { high: 5, medium: 35, low: 40, minimal: 20 },
    cost: { median: 3, sigma: 1.1 },
    types: ['rate_limited', 'budget_exceeded', 'pii_blocked', 'content_blocked', 'loop_detected', 'downgrade', 'warning'],
    inputs: (rng) => ({
      model: rng.pick(['gpt-4o', 'claude-sonnet-4', 'gpt-4.1']),
      prompt: rng.pick(['Summarise this week\'s support tickets for the leadership update.', 'Draft the monthly spend report.', 'Write release notes from these commits.']),
      max_tokens: rng.int(4000, 64_000),
      documents: rng.int(1, 400),
    }),
    piiSlots: [{ path: 'prompt', mode: 'append', categories: ['email', 'phone_number', 'us_ssn'] }],
    textSlots: ['prompt'],
    downgrade: (i) => ({ inputs: { ...i, model: 'gpt-4o-mini', max_tokens: Math.min(Number(i.max_tokens), 4000) }, costFactor: 0.15, reason: `${String(i.model)} with ${String(i.max_tokens)} max tokens downgraded to gpt-4o-mini with 4000` }),
    intent: (i) => `Generate a report over ${String(i.documents)} document(s) with ${String(i.model)}`,
    blastRadius: (i) => `A ${String(i.max_tokens)}-token completion over ${String(i.documents)} documents charged to the team's LLM budget`,
    // A completion: its id and length differ from call to call, so it is the one output a replay cannot reproduce.
    output: (i, rng) => ({ model: i.model, documents: i.documents, report_id: `rpt_${rng.hex(8)}`, completion_tokens: rng.int(200, Number(i.max_tokens)) }),
    nondeterministicOutput: true,
  },
  update_crm_contact: {
    name: 'update_crm_contact',
    summary: "Update a contact's fields in the CRM",
    risk: { high: 15, medium: 45, low: 40 },
    cost: { median: 0.05, sigma: 0.5 },
    types: ['approval_required', 'rate_limited', 'pii_blocked', 'idempotent_replay', 'warning'],
    inputs: (rng) => ({
      contact_id: `c_${rng.hex(10)}`,
      fields: { lifecycle_stage: rng.pick(['lead', 'customer', 'churned']), notes: rng.pick(['Met at the conference.', 'Asked for a discount.', 'Prefers email.']) },
      source: rng.pick(['chat', 'email', 'web-form']),
    }),
    piiSlots: [
      { path: 'fields.email', mode: 'replace', categories: ['email'] },
      { path: 'fields.phone', mode: 'replace', categories: ['phone_number'] },
      { path: 'fields.notes', mode: 'append', categories: ['credit_card', 'us_ssn'] },
    ],
    textSlots: [],
    intent: (i) => `Update CRM contact ${String(i.contact_id)} from ${String(i.source)}`,
    blastRadius: (i) => `Contact ${String(i.contact_id)} overwritten and synced to marketing tools`,
    output: (i) => ({ contact_id: i.contact_id, updated: Object.keys(i.fields as Record<string, unknown>).sort(), source: i.source }),
  },
};

/** Why a warning was raised. */
export const WARNING_FLAGS = [
  'first use of this action by the agent',
  'outside business hours',
  'unusual volume for this agent',
  'cost estimate above the p95 for this action',
  'called from an unreviewed prompt template',
];

/** Why a hard block fired, by policy. */
export const HARD_BLOCK_REASONS = [
  (action: string, agent: string) => `${action} is on the denied-actions list for ${agent}`,
  (action: string) => `Kill switch is active for ${action}`,
  (action: string, agent: string) => `${action} is not in ${agent}'s allowlist`,
];

/**
 * Approvals in Slack, in the policies service: the organisation's connection (`integrations.slack-*`: the bot token
 * and signing secret sealed with the SecretBox, write-only), the approval messages (enqueued by the webhooks
 * projection with its checkpoint, posted by a worker through the official `@slack/web-api` client, retried on the
 * webhook schedule) and the interactivity callback: Slack's signature checked, the Slack user mapped to the
 * organisation's member with the same verified e-mail (`users.info`), the approval decided as that person over the bus
 * (`approvals.approve` / `approvals.reject`, so roles and separation of duties apply as anywhere), the message updated
 * in place (`chat.update`) once decided by any path (Slack, console, API, MCP, expiry: the webhooks projection marks
 * its messages with the decision, the worker updates each once); a user who may not decide gets an ephemeral refusal
 * (`chat.postEphemeral`) and nothing changes. Source: docs/notifications.md (Approvals in Slack).
 */
import { WebClient } from '@slack/web-api';
import {
  ROLES,
  SlackButtonValueSchema,
  parseSlackPayload,
  type PutSlackConnection,
  type RequestContext,
  type SlackChannel,
  type SlackConnection,
  type SlackInteractivityReply,
  type SlackInteractivityRequest,
} from '@agp/contracts';
import { call, RemoteProblemError, type Sender } from '@agp/bus';
import type { Sql, SqlExecutor } from '@agp/eventstore';
import { NotFoundError, UnauthorizedError, deterministicId, type Logger, type SecretBox } from '@agp/runtime';
import { nextAttemptAt } from '../webhooks/schedule.js';
import { decidedMessage, slackSignatureValid, type SlackDecision } from './message.js';
import { jsonOrUndefined } from '@agp/contracts';

/**
 * - `agp_slack_connections`: one per organisation; token and secret sealed, bound to the organisation.
 * - `agp_slack_posts`: one message per (approval, channel): its `text` and `blocks`, `status` (`pending`, `posted`,
 *   `failed`), the attempts, when the next is due, the worker's lease, and once posted its `ts` (Slack's message id).
 *   Once the approval is decided: `decision` (status, who, when), and its update in place: `update_status`
 *   (`pending`, `updated`, `failed`), `update_attempts`, `update_next_attempt_at` (the lease is `lease_until`, free
 *   once the message is posted).
 */
export const SLACK_DDL = `
CREATE TABLE IF NOT EXISTS agp_slack_connections (
  organization_id text PRIMARY KEY,
  sealed_bot_token text NOT NULL,
  sealed_signing_secret text NOT NULL,
  bot_token_hint text NOT NULL,
  channels jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS agp_slack_posts (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  approval_id text NOT NULL,
  channel text NOT NULL,
  message jsonb NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  ts text,
  last_error text,
  created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_slack_posts_due ON agp_slack_posts (next_attempt_at) WHERE status = 'pending';
ALTER TABLE agp_slack_posts ADD COLUMN IF NOT EXISTS decision jsonb;
ALTER TABLE agp_slack_posts ADD COLUMN IF NOT EXISTS update_status text;
ALTER TABLE agp_slack_posts ADD COLUMN IF NOT EXISTS update_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE agp_slack_posts ADD COLUMN IF NOT EXISTS update_next_attempt_at timestamptz;
CREATE INDEX IF NOT EXISTS agp_slack_posts_approval ON agp_slack_posts (organization_id, approval_id);
CREATE INDEX IF NOT EXISTS agp_slack_posts_updates_due ON agp_slack_posts (update_next_attempt_at) WHERE update_status = 'pending';
`;

/** The contexts the token and the secret are sealed under: they open for this organisation only. */
const tokenContext = (org: string) => `slack-bot-token\0${org}`;
const secretContext = (org: string) => `slack-signing-secret\0${org}`;

/** The roles that may decide approvals (approver and above; docs/auth.md). */
const DECIDING_ROLES: ReadonlySet<string> = new Set(ROLES.filter((r) => r !== 'viewer'));

/** An approval message to post: its organisation, approval, channel and Block Kit message. */
export interface NewSlackPost {
  organization_id: string;
  approval_id: string;
  channel: string;
  message: { text: string; blocks: unknown[] };
}

/** The id of an approval's message in one channel: the same in every process and replay. */
export const slackPostId = (org: string, approvalId: string, channel: string) => `slk_${deterministicId(org, approvalId, channel).replaceAll('-', '')}`;

/** Insert approval messages due at `now`; one that exists (the same approval and channel) is left as it is. */
export async function enqueueSlackPosts(tx: SqlExecutor, posts: readonly NewSlackPost[], now: Date): Promise<void> {
  if (posts.length === 0) return;
  await tx.query(
    `INSERT INTO agp_slack_posts (id, organization_id, approval_id, channel, message, status, next_attempt_at, created_at)
     SELECT x.id, x.o, x.a, x.c, x.m, 'pending', $2::timestamptz, $2::timestamptz FROM jsonb_to_recordset($1::jsonb) AS x(id text, o text, a text, c text, m jsonb)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(posts.map((p) => ({ id: slackPostId(p.organization_id, p.approval_id, p.channel), o: p.organization_id, a: p.approval_id, c: p.channel, m: p.message }))), now.toISOString()],
  );
}

/** An approval decided (approved, rejected, expired): its organisation, approval and decision, from `approval.decided`. */
export interface SlackDecided {
  organization_id: string;
  approval_id: string;
  decision: SlackDecision;
}

/**
 * Mark the messages of decided approvals for an update in place, due at `now`. A message already marked keeps its
 * first decision (a replay or a second event never updates it twice); an approval with no message changes nothing.
 */
export async function enqueueSlackUpdates(tx: SqlExecutor, decided: readonly SlackDecided[], now: Date): Promise<void> {
  if (decided.length === 0) return;
  await tx.query(
    `UPDATE agp_slack_posts p SET decision = x.d, update_status = 'pending', update_attempts = 0, update_next_attempt_at = $2::timestamptz
       FROM jsonb_to_recordset($1::jsonb) AS x(o text, a text, d jsonb)
      WHERE p.organization_id = x.o AND p.approval_id = x.a AND p.decision IS NULL`,
    [JSON.stringify(decided.map((d) => ({ o: d.organization_id, a: d.approval_id, d: d.decision }))), now.toISOString()],
  );
}

/** The channels of the organisations of `orgs` that have a connection, by organisation. */
export async function slackChannelsOf(tx: SqlExecutor, orgs: readonly string[]): Promise<Map<string, SlackChannel[]>> {
  if (orgs.length === 0) return new Map();
  const { rows } = await tx.query<{ organization_id: string; channels: unknown }>('SELECT organization_id, channels FROM agp_slack_connections WHERE organization_id = ANY($1::text[])', [[...orgs]]);
  return new Map(rows.map((r) => [r.organization_id, (typeof r.channels === 'string' ? JSON.parse(r.channels) : r.channels) as SlackChannel[]]));
}

/** What the Slack part is built with. */
export interface SlackDeps {
  db: Sql;
  bus: Sender;
  secrets: () => SecretBox;
  logger: Pick<Logger, 'warn' | 'error'>;
  now: () => Date;
  /** The Web API's base URL, ending in `/api/` (AGP_SLACK_API_URL). */
  apiUrl: string;
  /** Delays before each retry of a post, ms (the webhook schedule). */
  schedule: readonly number[];
  pollMs: number;
}

interface ConnectionRow {
  organization_id: string;
  sealed_bot_token: string;
  sealed_signing_secret: string;
  bot_token_hint: string;
  channels: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const iso = (v: unknown) => new Date(v as string).toISOString();
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
const connectionOf = (r: ConnectionRow): SlackConnection => ({
  channels: (typeof r.channels === 'string' ? JSON.parse(r.channels) : r.channels) as SlackChannel[],
  bot_token_hint: r.bot_token_hint,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** See the module's doc. One instance per policies service process. */
export class SlackApprovals {
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private polling = false;
  /** A wake came while a claim ran. */
  private dirty = false;
  private inFlight?: Promise<void>;

  constructor(private readonly deps: SlackDeps) {}

  /** The Web API client of a bot token, at the configured base URL; it does not retry on its own (the worker does). */
  private client(token: string): WebClient {
    return new WebClient(token, { slackApiUrl: this.deps.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, timeout: 10_000 });
  }

  // ------------------------------------------------------------------------------------------- connection

  /** `integrations.slack-put`: seal the token and the secret, replace the connection. @throws ServiceUnavailableError (503) without a secrets key. */
  async put(ctx: RequestContext, body: PutSlackConnection): Promise<SlackConnection> {
    const org = ctx.organization_id;
    const box = this.deps.secrets();
    const now = this.deps.now().toISOString();
    const { rows } = await this.deps.db.query<ConnectionRow>(
      `INSERT INTO agp_slack_connections (organization_id, sealed_bot_token, sealed_signing_secret, bot_token_hint, channels, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $6)
       ON CONFLICT (organization_id) DO UPDATE SET sealed_bot_token = excluded.sealed_bot_token, sealed_signing_secret = excluded.sealed_signing_secret,
         bot_token_hint = excluded.bot_token_hint, channels = excluded.channels, updated_at = excluded.updated_at
       RETURNING *`,
      [org, box.seal(body.bot_token, tokenContext(org)), box.seal(body.signing_secret, secretContext(org)), body.bot_token.slice(-4), JSON.stringify(body.channels), now],
    );
    return connectionOf(rows[0]);
  }

  /** `integrations.slack-get`. @throws NotFoundError (404) when none is set. */
  async get(ctx: RequestContext): Promise<SlackConnection> {
    return connectionOf(await this.row(ctx.organization_id));
  }

  /** `integrations.slack-delete`: the connection, its messages not yet posted and its updates not yet made. @throws NotFoundError (404) when none is set. */
  async delete(ctx: RequestContext): Promise<null> {
    return this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query('DELETE FROM agp_slack_connections WHERE organization_id = $1 RETURNING organization_id', [ctx.organization_id]);
      if (!rows[0]) throw new NotFoundError('no Slack connection is set');
      await tx.query(`DELETE FROM agp_slack_posts WHERE organization_id = $1 AND status = 'pending'`, [ctx.organization_id]);
      await tx.query(`UPDATE agp_slack_posts SET update_status = NULL WHERE organization_id = $1 AND update_status = 'pending'`, [ctx.organization_id]);
      return null;
    });
  }

  private async row(org: string): Promise<ConnectionRow> {
    const { rows } = await this.deps.db.query<ConnectionRow>('SELECT * FROM agp_slack_connections WHERE organization_id = $1', [org]);
    if (!rows[0]) throw new NotFoundError('no Slack connection is set');
    return rows[0];
  }

  // ------------------------------------------------------------------------------------------- interactivity

  /**
   * `integrations.slack-interactivity`: verify the callback with the organisation's signing secret, then decide the
   * approval its button names as the member the Slack user is.
   * @throws UnauthorizedError (401) for an unsigned, wrongly signed or stale request, or an organisation without a
   *   connection; nothing changes then.
   */
  async interactivity(ctx: RequestContext, req: SlackInteractivityRequest): Promise<SlackInteractivityReply> {
    const org = ctx.organization_id;
    const { rows } = await this.deps.db.query<ConnectionRow>('SELECT * FROM agp_slack_connections WHERE organization_id = $1', [org]);
    const conn = rows[0];
    const refuse = () => new UnauthorizedError('not a request signed by the Slack app of this organisation (X-Slack-Signature, X-Slack-Request-Timestamp within 5 minutes)');
    if (!conn) throw refuse();
    const box = this.deps.secrets();
    if (!slackSignatureValid(box.open(conn.sealed_signing_secret, secretContext(org)), req.raw, req.timestamp, req.signature, this.deps.now().getTime())) throw refuse();

    const payload = parseSlackPayload(req.raw);
    const action = payload?.actions?.[0];
    const value = action ? SlackButtonValueSchema.safeParse(jsonOrUndefined(action.value)) : undefined;
    if (!payload || payload.type !== 'block_actions' || !value?.success || value.data.o !== org || !payload.user?.id) return { result: 'ignored' };
    const slack = this.client(box.open(conn.sealed_bot_token, tokenContext(org)));
    const channel = payload.channel?.id ?? payload.container?.channel_id;
    const slackUser = payload.user.id;
    const tell = async (text: string) => {
      if (channel) await slack.chat.postEphemeral({ channel, user: slackUser, text }).catch((err: unknown) => this.deps.logger.warn({ err }, 'Slack refusal could not be posted'));
    };

    // Who clicked: the Slack user's verified e-mail, and the organisation's member with it.
    const info = await slack.users.info({ user: slackUser });
    const profile = info.user as { profile?: { email?: string }; is_email_confirmed?: boolean } | undefined;
    const email = profile?.profile?.email;
    if (!email || profile?.is_email_confirmed === false) {
      await tell('You cannot decide this approval: your Slack account has no verified e-mail address.');
      return { result: 'refused' };
    }
    const member = await this.memberOf(org, email);
    if (!member || !DECIDING_ROLES.has(member.role) || !member.user_id) {
      await tell(!member ? `You cannot decide this approval: ${email} is not a member of this organisation.` : !member.user_id ? 'Sign in to AGP once so your account is linked, then try again.' : `You cannot decide this approval: your role (${member.role}) may not decide approvals.`);
      return { result: 'refused' };
    }
    const person: RequestContext = {
      organization_id: org,
      scope: 'write',
      key_id: `slack:${slackUser}`,
      key_name: email,
      user_id: member.user_id,
      user_email: email,
      user_name: member.name,
      correlation_id: ctx.correlation_id,
    };
    const kind = value.data.d;
    try {
      await call(this.deps.bus, kind === 'approve' ? 'approvals.approve' : 'approvals.reject', person, { path: { id: value.data.a }, body: { approver_email: email, notes: 'decided in Slack' } });
    } catch (err) {
      if (err instanceof RemoteProblemError && err.status >= 400 && err.status < 500) {
        await tell(`Not decided: ${err.problem.detail ?? err.problem.title}`);
        return { result: 'refused' };
      }
      throw err;
    }
    // The message (in every channel it was posted to) is updated by the worker once the decision is in the event log,
    // as for a decision taken anywhere else: once per message.
    return { result: 'decided' };
  }

  /** The organisation's member with `email` (case-insensitive): role, linked person and name; null when none. */
  private async memberOf(org: string, email: string): Promise<{ role: string; user_id: string | null; name: string | null } | null> {
    try {
      const { rows } = await this.deps.db.query<{ role: string; user_id: string | null; name: string | null }>(
        'SELECT m.role, m.user_id, u.name FROM agp_memberships m LEFT JOIN agp_users u ON u.id = m.user_id WHERE m.organization_id = $1 AND lower(m.email) = lower($2)',
        [org, email],
      );
      return rows[0] ?? null;
    } catch {
      return null; // people are not set up on this platform (no membership table)
    }
  }

  // ------------------------------------------------------------------------------------------- worker

  /** Start posting: polls every `pollMs` and whenever {@link wake} is called. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stop polling and wait for the posts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  /** Look for due posts and updates now. */
  wake(): void {
    if (this.stopped) return;
    // A wake during a claim may concern rows that claim could not see: claim again once it is done.
    if (this.polling) this.dirty = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void (this.inFlight = this.poll()), ms);
    this.timer.unref?.();
  }

  /**
   * Claim due posts and due updates (a lease each, so replicas never send one twice at once), send each through the
   * Web API (`chat.postMessage`, `chat.update`), record the outcome; a failure is retried on the schedule.
   */
  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    this.dirty = false;
    let claimed = 0;
    try {
      const [posts, updates] = await Promise.all([this.post(), this.update()]);
      claimed = posts + updates;
    } catch (err) {
      this.deps.logger.warn({ err }, 'Slack worker could not claim posts; retrying');
    } finally {
      this.polling = false;
      if (!this.stopped) this.schedule(claimed > 0 || this.dirty ? 0 : this.deps.pollMs);
    }
  }

  /** The lease of a claimed post or update: until this long from now, ms (the client's timeout and 10 s). */
  private lease(now: Date): string {
    return new Date(now.getTime() + 20_000).toISOString();
  }

  /**
   * Post the due approval messages; a message whose approval was decided before it was posted is posted decided
   * (no buttons), and its update is then done. @returns how many were claimed.
   */
  private async post(): Promise<number> {
    const now = this.deps.now();
    const { rows } = await this.deps.db.query<{ id: string; organization_id: string; channel: string; message: unknown; decision: unknown; attempts: number; sealed_bot_token: string }>(
      `WITH picked AS (
         SELECT p.id FROM agp_slack_posts p
          WHERE p.status = 'pending' AND p.next_attempt_at <= $1 AND (p.lease_until IS NULL OR p.lease_until <= $1)
          ORDER BY p.next_attempt_at LIMIT 32 FOR UPDATE OF p SKIP LOCKED)
       UPDATE agp_slack_posts p SET lease_until = $2 FROM picked, agp_slack_connections c
        WHERE p.id = picked.id AND c.organization_id = p.organization_id
        RETURNING p.id, p.organization_id, p.channel, p.message, p.decision, p.attempts, c.sealed_bot_token`,
      [now.toISOString(), this.lease(now)],
    );
    await Promise.all(
      rows.map(async (r) => {
        const request = json<{ text: string; blocks: unknown[] }>(r.message);
        const decision = r.decision === null ? null : json<SlackDecision>(r.decision);
        const message = decision ? decidedMessage(request, decision) : request;
        try {
          const token = this.deps.secrets().open(r.sealed_bot_token, tokenContext(r.organization_id));
          const answer = await this.client(token).chat.postMessage({ channel: r.channel, text: message.text, blocks: message.blocks as never });
          await this.deps.db.query(
            `UPDATE agp_slack_posts SET status = 'posted', attempts = attempts + 1, ts = $2, last_error = NULL, lease_until = NULL,
               update_status = CASE WHEN $3::boolean THEN 'updated' ELSE update_status END WHERE id = $1`,
            [r.id, answer.ts ?? null, decision !== null],
          );
        } catch (err) {
          this.deps.logger.warn({ err, organization_id: r.organization_id, channel: r.channel }, 'Slack approval message not posted; retrying');
          await this.deps.db.query(`UPDATE agp_slack_posts SET status = $2, attempts = attempts + 1, last_error = $3, next_attempt_at = $4, lease_until = NULL WHERE id = $1`, [r.id, ...this.failedAttempt(r.attempts, err)]);
        }
      }),
    );
    return rows.length;
  }

  /**
   * What a failed attempt (the `attempts`-th before it, 0-based count) records: the status (`failed` once the webhook
   * schedule is spent, else `pending`), the error cut to 500 characters, and the next attempt's time (ISO) or null.
   */
  private failedAttempt(attempts: number, err: unknown): [status: 'failed' | 'pending', error: string, next: string | null] {
    const next = nextAttemptAt(this.deps.schedule, attempts + 1, this.deps.now().getTime());
    return [next === null ? 'failed' : 'pending', (err as Error).message.slice(0, 500), next === null ? null : new Date(next).toISOString()];
  }

  /** Update the posted messages of decided approvals in place (`chat.update`: the outcome, who, when). @returns how many were claimed. */
  private async update(): Promise<number> {
    const now = this.deps.now();
    const { rows } = await this.deps.db.query<{ id: string; organization_id: string; channel: string; ts: string; message: unknown; decision: unknown; update_attempts: number; sealed_bot_token: string }>(
      `WITH picked AS (
         SELECT p.id FROM agp_slack_posts p
          WHERE p.update_status = 'pending' AND p.status = 'posted' AND p.ts IS NOT NULL AND p.update_next_attempt_at <= $1 AND (p.lease_until IS NULL OR p.lease_until <= $1)
          ORDER BY p.update_next_attempt_at LIMIT 32 FOR UPDATE OF p SKIP LOCKED)
       UPDATE agp_slack_posts p SET lease_until = $2 FROM picked, agp_slack_connections c
        WHERE p.id = picked.id AND c.organization_id = p.organization_id
        RETURNING p.id, p.organization_id, p.channel, p.ts, p.message, p.decision, p.update_attempts, c.sealed_bot_token`,
      [now.toISOString(), this.lease(now)],
    );
    await Promise.all(
      rows.map(async (r) => {
        const done = decidedMessage(json<{ text: string; blocks: unknown[] }>(r.message), json<SlackDecision>(r.decision));
        try {
          const token = this.deps.secrets().open(r.sealed_bot_token, tokenContext(r.organization_id));
          await this.client(token).chat.update({ channel: r.channel, ts: r.ts, text: done.text, blocks: done.blocks as never });
          await this.deps.db.query(`UPDATE agp_slack_posts SET update_status = 'updated', update_attempts = update_attempts + 1, last_error = NULL, lease_until = NULL WHERE id = $1`, [r.id]);
        } catch (err) {
          this.deps.logger.warn({ err, organization_id: r.organization_id, channel: r.channel }, 'Slack approval message not updated; retrying');
          await this.deps.db.query(`UPDATE agp_slack_posts SET update_status = $2, update_attempts = update_attempts + 1, last_error = $3, update_next_attempt_at = $4, lease_until = NULL WHERE id = $1`, [r.id, ...this.failedAttempt(r.update_attempts, err)]);
        }
      }),
    );
    return rows.length;
  }
}

/**
 * Approvals in Slack, in the policies service: the organisation's connection (`integrations.slack-*`: the bot token
 * and signing secret sealed with the SecretBox, write-only), the approval messages (enqueued by the webhooks
 * projection with its checkpoint, posted by a worker through the official `@slack/web-api` client, retried on the
 * webhook schedule) and the interactivity callback: Slack's signature checked, the Slack user mapped to the
 * organisation's member with the same verified e-mail (`users.info`), the approval decided as that person over the bus
 * (`approvals.approve` / `approvals.reject`, so roles and separation of duties apply as anywhere), the message updated
 * in place (`chat.update`); a user who may not decide gets an ephemeral refusal (`chat.postEphemeral`) and nothing
 * changes. Source: docs/notifications.md (Approvals in Slack).
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
import { decidedMessage, slackSignatureValid } from './message.js';
import { jsonOrUndefined } from '@agp/contracts';

/**
 * - `agp_slack_connections`: one per organisation; token and secret sealed, bound to the organisation.
 * - `agp_slack_posts`: one message per (approval, channel): its `text` and `blocks`, `status` (`pending`, `posted`,
 *   `failed`), the attempts, when the next is due, the worker's lease, and once posted its `ts` (Slack's message id).
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

  /** `integrations.slack-delete`: the connection and its messages not yet posted. @throws NotFoundError (404) when none is set. */
  async delete(ctx: RequestContext): Promise<null> {
    return this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query('DELETE FROM agp_slack_connections WHERE organization_id = $1 RETURNING organization_id', [ctx.organization_id]);
      if (!rows[0]) throw new NotFoundError('no Slack connection is set');
      await tx.query(`DELETE FROM agp_slack_posts WHERE organization_id = $1 AND status = 'pending'`, [ctx.organization_id]);
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
    const ts = payload.message?.ts ?? payload.container?.message_ts;
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
    if (channel && ts) {
      const done = decidedMessage(payload.message as { blocks?: unknown[] } | undefined, kind === 'approve' ? 'approved' : 'rejected', member.name ? `${member.name} (${email})` : email, this.deps.now().toISOString());
      await slack.chat.update({ channel, ts, text: done.text, blocks: done.blocks as never }).catch((err: unknown) => this.deps.logger.warn({ err }, 'Slack message could not be updated'));
    }
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

  /** Look for due posts now. */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void (this.inFlight = this.poll()), ms);
    this.timer.unref?.();
  }

  /** Claim due posts (a lease each, so replicas never post one twice at once), post each, record the outcome. */
  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    let claimed = 0;
    try {
      const now = this.deps.now();
      const { rows } = await this.deps.db.query<{ id: string; organization_id: string; channel: string; message: unknown; attempts: number; sealed_bot_token: string }>(
        `WITH picked AS (
           SELECT p.id FROM agp_slack_posts p
            WHERE p.status = 'pending' AND p.next_attempt_at <= $1 AND (p.lease_until IS NULL OR p.lease_until <= $1)
            ORDER BY p.next_attempt_at LIMIT 32 FOR UPDATE OF p SKIP LOCKED)
         UPDATE agp_slack_posts p SET lease_until = $2 FROM picked, agp_slack_connections c
          WHERE p.id = picked.id AND c.organization_id = p.organization_id
          RETURNING p.id, p.organization_id, p.channel, p.message, p.attempts, c.sealed_bot_token`,
        [now.toISOString(), new Date(now.getTime() + 20_000).toISOString()],
      );
      claimed = rows.length;
      await Promise.all(
        rows.map(async (r) => {
          const message = (typeof r.message === 'string' ? JSON.parse(r.message) : r.message) as { text: string; blocks: unknown[] };
          try {
            const token = this.deps.secrets().open(r.sealed_bot_token, tokenContext(r.organization_id));
            const answer = await this.client(token).chat.postMessage({ channel: r.channel, text: message.text, blocks: message.blocks as never });
            await this.deps.db.query(`UPDATE agp_slack_posts SET status = 'posted', attempts = attempts + 1, ts = $2, last_error = NULL, lease_until = NULL WHERE id = $1`, [r.id, answer.ts ?? null]);
          } catch (err) {
            const next = nextAttemptAt(this.deps.schedule, r.attempts + 1, this.deps.now().getTime());
            this.deps.logger.warn({ err, organization_id: r.organization_id, channel: r.channel }, 'Slack approval message not posted; retrying');
            await this.deps.db.query(`UPDATE agp_slack_posts SET status = $2, attempts = attempts + 1, last_error = $3, next_attempt_at = $4, lease_until = NULL WHERE id = $1`, [
              r.id,
              next === null ? 'failed' : 'pending',
              (err as Error).message.slice(0, 500),
              next === null ? null : new Date(next).toISOString(),
            ]);
          }
        }),
      );
    } catch (err) {
      this.deps.logger.warn({ err }, 'Slack worker could not claim posts; retrying');
    } finally {
      this.polling = false;
      if (!this.stopped) this.schedule(claimed > 0 ? 0 : this.deps.pollMs);
    }
  }
}

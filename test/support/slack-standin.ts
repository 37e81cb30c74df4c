/**
 * A loopback stand-in for Slack's Web API, for the Slack approval tests: it answers the methods the platform calls
 * (`chat.postMessage`, `chat.update`, `chat.postEphemeral`, `users.info`) with the shapes Slack documents, records every
 * call with its bearer token and arguments, and signs interactivity callbacks as Slack does (v0, HMAC-SHA256 of
 * `v0:<timestamp>:<body>` with the app's signing secret). Real Slack is not reachable from the tests.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** One Web API call the stand-in got. */
export interface SlackCall {
  method: string;
  token: string | null;
  args: Record<string, any>;
  /** The message id (`ts`) a `chat.postMessage` was answered with. */
  ts?: string;
}

/** A Slack user the stand-in's `users.info` knows. */
export interface SlackUser {
  id: string;
  email: string;
  is_email_confirmed?: boolean;
}

/** See the module's doc. */
export class SlackStandIn {
  readonly calls: SlackCall[] = [];
  readonly users = new Map<string, SlackUser>();
  /** The bot token it accepts; any other answers `invalid_auth`. */
  token = '';
  private server!: Server;
  private seq = 0;
  /** The base URL to give AGP_SLACK_API_URL (ends in `/api/`). */
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0];
        const text = Buffer.concat(chunks).toString('utf8');
        // @slack/web-api posts application/x-www-form-urlencoded (objects as JSON strings) or JSON.
        const args: Record<string, any> = (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(text || '{}') : Object.fromEntries(new URLSearchParams(text));
        for (const k of ['blocks', 'attachments']) if (typeof args[k] === 'string') args[k] = JSON.parse(args[k]);
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '') || args.token || null;
        const call: SlackCall = { method, token, args };
        this.calls.push(call);
        const answer = (body: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (token !== this.token) return answer({ ok: false, error: 'invalid_auth' });
        const ts = () => `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, '0')}`;
        switch (method) {
          case 'chat.postMessage': {
            const t = (call.ts = ts());
            return answer({ ok: true, channel: args.channel, ts: t, message: { type: 'message', text: args.text, blocks: args.blocks, ts: t, bot_id: 'B0STANDIN' } });
          }
          case 'chat.update':
            return answer({ ok: true, channel: args.channel, ts: args.ts, text: args.text, message: { text: args.text, blocks: args.blocks } });
          case 'chat.postEphemeral':
            return answer({ ok: true, message_ts: ts() });
          case 'users.info': {
            const u = this.users.get(args.user);
            if (!u) return answer({ ok: false, error: 'user_not_found' });
            return answer({ ok: true, user: { id: u.id, name: u.email.split('@')[0], is_email_confirmed: u.is_email_confirmed ?? true, profile: { email: u.email, real_name: u.email } } });
          }
          default:
            return answer({ ok: false, error: 'unknown_method' });
        }
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/api/`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  /** The calls of one method. */
  of(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }
}

/** The headers Slack signs a request body with at `atSeconds` (v0). */
export function slackSignature(secret: string, body: string, atSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(atSeconds);
  return { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}` };
}

/** The form-encoded body of a click on a button with `value` in the message at `channel`/`ts`, by Slack user `user` (a block_actions payload). */
export function blockActionBody(user: string, channel: string, ts: string, value: string, blocks: unknown[] = []): string {
  const payload = {
    type: 'block_actions',
    user: { id: user, username: user, team_id: 'T0STANDIN' },
    team: { id: 'T0STANDIN', domain: 'standin' },
    container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false },
    channel: { id: channel, name: channel },
    message: { type: 'message', ts, text: 'Approval needed', blocks },
    actions: [{ type: 'button', action_id: 'agp_approve', block_id: 'agp_approval', value, action_ts: String(Date.now() / 1000) }],
    response_url: 'https://hooks.slack.com/actions/T0STANDIN/1/x',
    trigger_id: '1.2.3',
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

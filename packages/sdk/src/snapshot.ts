/**
 * The agent's governance snapshot: the enabled policies that apply to it and the kill switches, as
 * `GET /api/v1/agents/{agent_id}/governance` answers them (the decision API's own selection, in the shape `decide()`
 * takes). Each refresh sends the last ETag as `If-None-Match`; a 304 only confirms the snapshot, so a refresh of an
 * unchanged snapshot costs one small round trip, and the snapshot keeps its identity.
 *
 * The push channel (./channel.ts) keeps it live: a `kill_switch.changed` event is applied at once
 * ({@link SnapshotSource.applyKillSwitch}), a `policy.changed` event refetches ({@link SnapshotSource.refresh}), and
 * while the channel is live the snapshot counts as confirmed now ({@link SnapshotSource.setLive}). While the channel
 * is down the channel polls {@link SnapshotSource.refresh}.
 *
 * A failed refresh keeps the last snapshot: the SDK goes on enforcing the last known policies during an outage and
 * reports their age (`status()`). An answer whose shape the SDK does not understand is remembered as `incompatible`
 * (with the server's version from `GET /api/v1/openapi.json`), and the governor fails closed until a refresh parses.
 * Source: docs/sdk.md §Fail modes, §Live updates; docs/decisions.md (governance snapshot and push channel).
 */
import { AgentGovernanceSchema, PolicySchema, withPolicyDefaults } from '@agp/contracts';
import type { EngineKillSwitches, EnginePolicy } from '@agp/policy-engine';
import { z } from 'zod';

/**
 * The snapshot as the SDK reads it; unknown policy fields are kept (a newer engine may read them). A policy from a
 * platform older than some field reads through `withPolicyDefaults` first: no period budgets, and a rate limit without
 * a scope counted per process, as that platform counts it (never `agent`, the default of a limit written now).
 */
const SnapshotBodySchema = AgentGovernanceSchema.extend({
  policies: z.array(z.unknown().transform((p) => (p !== null && typeof p === 'object' ? withPolicyDefaults(p) : p)).pipe(PolicySchema.loose())),
});

/** The state decisions are taken against. */
export interface Snapshot {
  policies: EnginePolicy[];
  killSwitches: EngineKillSwitches;
  /** When it was last confirmed by the platform, ms since the epoch. */
  loadedAt: number;
}

/** A kill-switch state pushed by the channel: `scope` organization, or the agent's. */
export interface PushedKillSwitch {
  scope: 'organization' | 'agent';
  agent_id: string | null;
  engaged: boolean;
  reason: string | null;
}

/** A failed HTTP answer of the snapshot route. */
class SnapshotHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** See the module docs. */
export class SnapshotSource {
  current: Snapshot | null = null;
  /** Why the last refresh failed; null after a success. */
  lastError: string | null = null;
  /** The HTTP status of the last failed refresh, when the platform answered one (401/403: the key is not accepted). */
  lastStatus: number | null = null;
  /** Set while the platform's answers are not understood: the message, naming the server's version. */
  incompatible: string | null = null;
  /** Snapshot refreshes that got a 304 (the ETag matched) and ones that read a body, since connect. */
  readonly loads = { notModified: 0, full: 0 };
  private etag: string | null = null;
  private refreshing: Promise<void> | null = null;
  /** A refresh was asked for while one was running (a change may have come after it read): run another after it. */
  private again = false;
  private serverVersion: string | null = null;
  /** Whether the live channel currently vouches for the snapshot. */
  private live = false;
  /** Kill-switch states pushed by the channel, with the push counter when they came (see {@link applyKillSwitch}). */
  private readonly pushed = new Map<string, PushedKillSwitch & { gen: number }>();
  private pushGen = 0;

  constructor(
    private readonly fetchFn: typeof fetch,
    private readonly base: string,
    private readonly key: string,
    private readonly agentId: string,
    private readonly sdkVersion: string,
  ) {}

  /**
   * Load now (one at a time; a caller during a running load gets a further load after it, since the running one may
   * have read before the change the caller heard of). Never throws.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again);
    };
    this.refreshing = run().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Whether a refresh is running or asked for: the snapshot may be behind a change the channel told of. */
  get behind(): boolean {
    return this.refreshing !== null;
  }

  /**
   * The channel is live (`true`: a `ready`, an event or a heartbeat arrived) or went down (`false`). While live and
   * not {@link behind}, the snapshot counts as confirmed now; going down stamps the confirmation time, from which
   * its age then grows.
   */
  setLive(live: boolean): void {
    if (this.current && this.vouched()) this.current.loadedAt = Date.now();
    this.live = live;
  }

  /**
   * Apply a kill-switch state pushed by the channel at once (the agent's switch, or the organisation's). It is kept
   * and laid over any snapshot whose load began before it came, so a load in flight cannot undo it.
   */
  applyKillSwitch(ks: PushedKillSwitch): void {
    if (ks.scope === 'agent' && ks.agent_id !== this.agentId) return;
    const key = ks.scope === 'organization' ? 'organization' : `agent:${ks.agent_id}`;
    this.pushed.set(key, { ...ks, gen: ++this.pushGen });
    if (this.current) this.current = { ...this.current, killSwitches: overlay(this.current.killSwitches, [ks]) };
  }

  /**
   * Age of the snapshot in ms, or null when none was ever loaded. 0 while the live channel vouches for it: connected,
   * no refetch running, and the last one worked (a failed refetch after a `policy.changed` leaves it behind).
   */
  ageMs(now = Date.now()): number | null {
    if (!this.current) return null;
    return this.vouched() ? 0 : now - this.current.loadedAt;
  }

  private vouched(): boolean {
    return this.live && !this.behind && this.lastError === null;
  }

  private async load(): Promise<void> {
    const gen = this.pushGen;
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: 'application/json' };
      if (this.etag && this.current) headers['if-none-match'] = this.etag;
      const res = await this.fetchFn(`${this.base}/api/v1/agents/${encodeURIComponent(this.agentId)}/governance`, { headers, signal: AbortSignal.timeout(10_000) });
      if (res.status === 304 && this.current) {
        await res.body?.cancel().catch(() => undefined);
        this.loads.notModified++;
        this.ok();
        this.current.loadedAt = Date.now();
        return;
      }
      const text = await res.text();
      if (res.status !== 200) throw new SnapshotHttpError(res.status, `GET /api/v1/agents/{agent_id}/governance answered ${res.status}: ${text.slice(0, 300)}`);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        return await this.notUnderstood('GET /api/v1/agents/{agent_id}/governance', err);
      }
      const parsed = SnapshotBodySchema.safeParse(json);
      if (!parsed.success) return await this.notUnderstood('GET /api/v1/agents/{agent_id}/governance', parsed.error);
      this.loads.full++;
      this.ok();
      this.etag = res.headers.get('etag');
      // Kill switches pushed while this load was in flight are newer than what it read.
      const later = [...this.pushed.values()].filter((k) => k.gen > gen);
      const killSwitches = overlay(parsed.data.kill_switches, later);
      this.current = { policies: parsed.data.policies as EnginePolicy[], killSwitches, loadedAt: Date.now() };
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.lastStatus = err instanceof SnapshotHttpError ? err.status : null;
    }
  }

  private ok(): void {
    this.incompatible = null;
    this.lastError = null;
    this.lastStatus = null;
  }

  private async notUnderstood(what: string, err: unknown): Promise<void> {
    this.serverVersion ??= await this.fetchServerVersion();
    const detail = err instanceof z.ZodError ? err.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') : String(err);
    this.incompatible = `the answer of ${what} is not understood by @agp/sdk ${this.sdkVersion} (server version ${this.serverVersion}): ${detail}`;
    this.lastError = this.incompatible;
  }

  /** `info.version` of the platform's OpenAPI document, or `unknown`. */
  private async fetchServerVersion(): Promise<string> {
    try {
      const res = await this.fetchFn(`${this.base}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${this.key}` }, signal: AbortSignal.timeout(5000) });
      const doc = (await res.json()) as { info?: { version?: unknown } };
      return typeof doc?.info?.version === 'string' ? doc.info.version : 'unknown';
    } catch {
      return 'unknown';
    }
  }
}

/** `base` with each pushed state laid over it (the organisation's switch, or the agent's entry replaced). */
function overlay(base: EngineKillSwitches, states: readonly PushedKillSwitch[]): EngineKillSwitches {
  let out = base;
  for (const s of states) {
    if (s.scope === 'organization') out = { ...out, organization: { engaged: s.engaged, reason: s.reason } };
    else out = { ...out, agents: [...out.agents.filter((a) => a.agent_id !== s.agent_id), { agent_id: s.agent_id as string, engaged: s.engaged, reason: s.reason }] };
  }
  return out;
}

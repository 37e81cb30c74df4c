/**
 * The agent's governance snapshot: the enabled policies that apply to it and the kill switches, loaded at connect
 * through `GET /api/v1/policies?enabled=true&agent_id=…` and `GET /api/v1/kill-switches`, then refreshed by polling
 * (every `pollIntervalMs`, 1 s by default). Neither list answers ETags today, so each poll reads both in full (a few
 * KB for a typical organisation); a snapshot whose content did not change keeps its identity.
 *
 * A failed refresh keeps the last snapshot: the SDK goes on enforcing the last known policies during an outage and
 * reports their age (`status()`). An answer whose shape the SDK does not understand is remembered as `incompatible`
 * (with the server's version from `GET /api/v1/openapi.json`), and the governor fails closed until a refresh parses.
 * Source: docs/sdk.md §Fail modes.
 */
import { AgpHttpError, type AgpClient } from '@agp/client/http';
import { KillSwitchOverviewSchema, PolicySchema, canonicalJson, type KillSwitchOverview, type Policy } from '@agp/contracts';
import type { EnginePolicy } from '@agp/policy-engine';
import { z } from 'zod';

/** The policies page as the SDK reads it; unknown policy fields are kept (a newer engine may read them). */
const PolicyPageSchema = z.object({ policies: z.array(PolicySchema.loose()), total: z.number().int() });

/** The state decisions are taken against. */
export interface Snapshot {
  policies: EnginePolicy[];
  killSwitches: KillSwitchOverview;
  /** When it was last confirmed by the platform, ms since the epoch. */
  loadedAt: number;
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
  private timer: NodeJS.Timeout | null = null;
  private fingerprint = '';
  private refreshing: Promise<void> | null = null;
  private serverVersion: string | null = null;

  constructor(
    private readonly client: AgpClient,
    private readonly base: string,
    private readonly key: string,
    private readonly agentId: string,
    private readonly sdkVersion: string,
  ) {}

  /** Load once now (one at a time; a concurrent caller shares the running refresh). Never throws. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Poll every `intervalMs` until {@link stop}. */
  start(intervalMs: number): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.refresh().then(() => this.timer && tick()), intervalMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Age of the snapshot in ms, or null when none was ever loaded. */
  ageMs(now = Date.now()): number | null {
    return this.current ? now - this.current.loadedAt : null;
  }

  private async load(): Promise<void> {
    try {
      const [policies, killSwitches] = await Promise.all([this.loadPolicies(), this.client.getKillSwitches()]);
      const ks = KillSwitchOverviewSchema.safeParse(killSwitches);
      if (!ks.success) return await this.notUnderstood('GET /api/v1/kill-switches', ks.error);
      if (policies === null) return;
      this.incompatible = null;
      this.lastError = null;
      this.lastStatus = null;
      const fingerprint = canonicalJson([policies, ks.data]);
      const now = Date.now();
      if (this.current && fingerprint === this.fingerprint) this.current.loadedAt = now;
      else {
        this.fingerprint = fingerprint;
        this.current = { policies, killSwitches: ks.data, loadedAt: now };
      }
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.lastStatus = err instanceof AgpHttpError ? err.status : null;
      if (err instanceof SyntaxError) await this.notUnderstood('the platform', err);
    }
  }

  /** Every page of the applicable enabled policies, or null when an answer was not understood. */
  private async loadPolicies(): Promise<EnginePolicy[] | null> {
    const out: EnginePolicy[] = [];
    for (let skip = 0; ; ) {
      const page = PolicyPageSchema.safeParse(await this.client.listPolicies({ enabled: true, agent_id: this.agentId, skip, limit: 1000 }));
      if (!page.success) {
        await this.notUnderstood('GET /api/v1/policies', page.error);
        return null;
      }
      out.push(...(page.data.policies as Policy[]));
      skip += page.data.policies.length;
      if (page.data.policies.length === 0 || skip >= page.data.total) return out;
    }
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
      const res = await fetch(`${this.base}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${this.key}` }, signal: AbortSignal.timeout(5000) });
      const doc = (await res.json()) as { info?: { version?: unknown } };
      return typeof doc?.info?.version === 'string' ? doc.info.version : 'unknown';
    } catch {
      return 'unknown';
    }
  }
}

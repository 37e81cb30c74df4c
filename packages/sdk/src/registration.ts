/**
 * The agent's registration at connect: `Governor.connect` registers the agent before it returns, so the registry
 * (`GET /api/v1/agents/{id}`), the console's agent list and the agent's kill switch know it at once.
 * - With `actions`: `POST /api/v1/agents` with the definition (re-registering replaces it; an identical one changes
 *   nothing).
 * - Without: `GET /api/v1/agents/{id}` first; an agent the registry already knows is left as it is (its actions, name
 *   and owner are not wiped), an unknown one is registered with the `agent` details alone.
 * The route answers once the registry shows the agent (the policies service reads its own writes).
 * When the platform cannot be reached (network, 429, 5xx), connect does not fail: with `actions` the registration is
 * reported through the spool (delivered when the platform is back, like every report); without, it is tried again in
 * the background (1 s doubling to 30 s) until it is done or the governor closes.
 * Source: docs/sdk.md §Connecting.
 */
import type { AgentRegister } from '@agp/contracts';
import { AgpHttpError, AgpNetworkError, type AgpClient } from './http.js';

/**
 * How a registration attempt ended: `done` (registered, or already known), `refused` (401/403: the key is not
 * accepted for it), `rejected` (another 4xx: the platform will not take it), `unavailable` (network, 429, 5xx).
 */
export type RegistrationResult = { kind: 'done' } | { kind: 'refused' | 'rejected' | 'unavailable'; message: string };

/** Register `body`'s agent (see the module docs); `withActions`: the caller gave its actions (the definition is then replaced). Never throws. */
export async function registerAgent(client: Pick<AgpClient, 'registerAgent' | 'getAgent'>, body: AgentRegister, withActions: boolean): Promise<RegistrationResult> {
  try {
    if (!withActions) {
      try {
        await client.getAgent(body.agent_id);
        return { kind: 'done' };
      } catch (err) {
        if (!(err instanceof AgpHttpError && err.status === 404)) throw err;
      }
    }
    await client.registerAgent(body);
    return { kind: 'done' };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof AgpNetworkError || (err instanceof AgpHttpError && (err.status === 429 || err.status >= 500))) return { kind: 'unavailable', message };
    if (err instanceof AgpHttpError && (err.status === 401 || err.status === 403)) return { kind: 'refused', message };
    return { kind: 'rejected', message };
  }
}

/**
 * Retry {@link registerAgent} in the background until it is done, refused or rejected (then `onError` hears why), or
 * {@link RegistrationRetry.stop} is called. Waits 1 s doubling to 30 s between attempts; its timer does not keep
 * the process alive.
 */
export class RegistrationRetry {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly attempt: () => Promise<RegistrationResult>,
    private readonly onError: (message: string) => void,
  ) {}

  /** Schedule the first retry. */
  start(): void {
    this.schedule(1000);
  }

  /** Stop retrying. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.attempt().then((r) => {
        if (r.kind === 'unavailable') this.schedule(Math.min(30_000, ms * 2));
        else if (r.kind !== 'done' && !this.stopped) this.onError(`the agent could not be registered: ${r.message}`);
      });
    }, ms);
    this.timer.unref();
  }
}

/**
 * A service killed (SIGKILL) after it took a request: the caller learns at once that nobody will answer, instead of
 * waiting its whole timeout. The responder is a real PrefixedNatsServer in its own process (./stuck-responder.ts),
 * on the shared NATS with subjects of its own; it takes a `runs.get` and never answers. While the request waits, the
 * client probes the subject (RESPONDER_PROBE_MS); the live server answers the probes without running its handler,
 * and once the process is killed a probe finds no responder and the request fails with a 503 (ServiceUnavailableError,
 * with Retry-After at the HTTP edge) within a second or two, not at the 10 s timeout.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { RETRY_AFTER_SECONDS, ServiceUnavailableError, retryAfterHeaders, toProblem } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infra, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import { callRpc, NoRespondersError, PrefixedNatsClient, RESPONDER_PROBE_MS } from '../src/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
/** Wait until `ok()` holds, checking every 20 ms. @throws Error after `timeoutMs`. */
async function until(ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ctx = { organization_id: 'acme', scope: 'read' as const, key_id: 'key-1', correlation_id: 'corr-1' };

describe.skipIf(skipIntegration('nats'))('a responder killed while it holds a request (real NATS)', () => {
  const prefix = `killed${runSuffix()}`.replace(/[^a-z0-9]/gi, '').toLowerCase();
  let child: ChildProcess | undefined;
  let client: PrefixedNatsClient;
  let out = '';

  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'packages/bus/test/stuck-responder.ts'], { cwd: ROOT, env: { ...process.env, NATS_URL: infra().natsUrl, AGP_SUBJECT_PREFIX: prefix }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.on('data', (c: Buffer) => void (out += c.toString()));
    await until(() => out.includes('listening'), 60_000);
    client = new PrefixedNatsClient({ servers: infra().natsUrl, prefix });
    await client.connect();
  }, 90_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await client?.close();
  });

  it('fails the request it took with a 503 soon after the kill, not at the caller’s timeout', { timeout: 30_000 }, async () => {
    const asked = Date.now();
    const answer = callRpc(client, 'runs.get', { ctx, body: { path: { id: 'run-1' }, query: {} } }, 10_000).catch((e: unknown) => e);
    await until(() => out.includes('took run-1'), 5_000);
    // Held past several probes: the live server answers them, so the request keeps waiting and the handler ran once.
    await new Promise((r) => setTimeout(r, RESPONDER_PROBE_MS * 4));
    expect(await Promise.race([answer, new Promise((r) => setTimeout(() => r('waiting'), 0))])).toBe('waiting');
    expect(out.match(/took /g)).toHaveLength(1);

    const killed = Date.now();
    child!.kill('SIGKILL');
    const err = await answer;
    const failedAfterMs = Date.now() - killed;
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as Error).cause).toBeInstanceOf(NoRespondersError);
    expect(toProblem(err).status).toBe(503);
    expect(retryAfterHeaders(toProblem(err).status)).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    // At once: within a few probe intervals of the kill, far below the 10 s timeout the request was sent with.
    expect(failedAfterMs).toBeLessThan(RESPONDER_PROBE_MS * 5);
    expect(Date.now() - asked).toBeLessThan(9_000);
  });

  it('answers a request sent after the kill 503 at once (NATS no responders)', async () => {
    const asked = Date.now();
    const err = await callRpc(client, 'runs.get', { ctx, body: { path: { id: 'run-2' }, query: {} } }, 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(Date.now() - asked).toBeLessThan(1_000);
  });
});

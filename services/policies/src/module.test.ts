import { describe, expect, it } from 'vitest';
import { Wire, wireKeysOf } from '@agp/contracts';
import { serveRpc } from '@agp/bus';
import { ValidationError } from '@agp/runtime';
import { policiesHandlers } from './module.js';
import { parseIfMatch, type PoliciesService } from './service.js';

const ctx = { organization_id: 'acme', scope: 'write' as const, key_id: 'key-1', correlation_id: 'corr-1' };

/** A service that records which method got which arguments. */
function recorder() {
  const calls: Array<[string, unknown[]]> = [];
  const service = new Proxy({}, { get: (_t, name: string) => async (...args: unknown[]) => void calls.push([name, args.slice(1)]) }) as unknown as PoliciesService;
  return { calls, service };
}

describe('policiesHandlers', () => {
  it('serves exactly the policies rows of the wire table', () => {
    const { service } = recorder();
    expect(Object.keys(policiesHandlers(service)).sort()).toEqual([...wireKeysOf('policies')].sort());
    expect(() => serveRpc('policies', policiesHandlers(service), { error: () => undefined })).not.toThrow();
  });

  it('passes the parsed request pieces to the service', async () => {
    const { calls, service } = recorder();
    const h = policiesHandlers(service);
    await h['policies.get'](ctx, Wire['policies.get'].request.parse({ path: { id: 'p1' }, query: { version: '2' } }));
    await h['policies.update'](ctx, Wire['policies.update'].request.parse({ path: { id: 'p1' }, headers: { if_match: '"3"' }, body: { enabled: false } }));
    await h['kill-switches.set'](ctx, Wire['kill-switches.set'].request.parse({ path: {}, body: { engaged: true } }));
    await h['kill-switches.set'](ctx, Wire['kill-switches.set'].request.parse({ path: { agent_id: 'a1' }, body: { engaged: false, reason: 'ok' } }));
    expect(calls).toEqual([
      ['getPolicy', ['p1', { version: 2 }]],
      ['updatePolicy', ['p1', '"3"', { enabled: false }]],
      ['setKillSwitch', [undefined, { engaged: true }]],
      ['setKillSwitch', ['a1', { engaged: false, reason: 'ok' }]],
    ]);
  });
});

describe('parseIfMatch', () => {
  it('reads 3, "3" and W/"3" as version 3, and * or absent as any version', () => {
    for (const v of ['3', '"3"', 'W/"3"', ' "3" ']) expect(parseIfMatch(v)).toBe(3);
    for (const v of [null, '*', '']) expect(parseIfMatch(v)).toBeNull();
  });

  it('refuses anything else with a 422 naming header.if-match', () => {
    for (const v of ['latest', '0', '"-1"', '1.5']) {
      const err = (() => {
        try {
          parseIfMatch(v);
        } catch (e) {
          return e;
        }
      })();
      expect(err, v).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).errors.map((e) => e.path), v).toEqual(['header.if-match']);
    }
  });
});

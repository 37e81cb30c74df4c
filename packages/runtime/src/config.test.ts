import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { baseEnvSchema, loadEnv } from './config.js';
import { startOpsServer } from './ops.js';

describe('loadEnv', () => {
  it('treats empty variables as unset, so defaults apply', () => {
    const env = loadEnv(baseEnvSchema, { AGP_LLM_API_KEY: '', AGP_LLM_BASE_URL: '', PORT: '' });
    expect(env.AGP_LLM_API_KEY).toBeUndefined();
    expect(env.PORT).toBe(8080);
    expect(env.AGP_APPROVAL_TTL_SECONDS).toBe(86_400);
  });
  it('names every bad variable', () => {
    expect(() => loadEnv(baseEnvSchema, { PORT: 'eighty', AGP_LLM_BASE_URL: 'not a url' })).toThrow(/PORT[\s\S]*AGP_LLM_BASE_URL|AGP_LLM_BASE_URL[\s\S]*PORT/);
  });
});

describe('listen addresses (HOST, OPS_HOST)', () => {
  it('default to loopback and accept addresses and host names; anything else is refused', () => {
    const env = loadEnv(baseEnvSchema, {});
    expect([env.HOST, env.OPS_HOST]).toEqual(['127.0.0.1', '127.0.0.1']);
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', '10.1.2.3', 'agp.internal']) expect(loadEnv(baseEnvSchema, { HOST: host, OPS_HOST: host }).HOST).toBe(host);
    expect(() => loadEnv(baseEnvSchema, { HOST: 'http://0.0.0.0', OPS_HOST: '0.0.0.0:9460' })).toThrow(/HOST[\s\S]*listen address[\s\S]*OPS_HOST/);
  });
  it('the ops server listens where OPS_HOST says (loopback by default)', async () => {
    for (const [vars, expected] of [[{}, '127.0.0.1'], [{ OPS_HOST: '0.0.0.0' }, '0.0.0.0']] as const) {
      const env = loadEnv(baseEnvSchema, vars);
      const ops = await startOpsServer({ port: 0, host: env.OPS_HOST, service: 'test', readiness: async () => {} });
      try {
        expect((ops.server.address() as AddressInfo).address).toBe(expected);
      } finally {
        await ops.close();
      }
    }
    const bare = await startOpsServer({ port: 0, service: 'test', readiness: async () => {} });
    expect((bare.server.address() as AddressInfo).address).toBe('127.0.0.1');
    await bare.close();
  });
});

import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { answerCacheEnv, listenEnv, llmEnv, loadEnv, logEnv, opsEnv } from './config.js';

/** A process schema composed as a service's `env.ts` composes one. */
const processSchema = z.object({ ...logEnv, ...listenEnv, ...opsEnv(9460), ...llmEnv, ...answerCacheEnv });
import { startOpsServer } from './ops.js';

describe('loadEnv', () => {
  it('treats empty variables as unset, so defaults apply', () => {
    const env = loadEnv(processSchema, { AGP_LLM_API_KEY: '', AGP_LLM_BASE_URL: '', PORT: '' });
    expect(env.AGP_LLM_API_KEY).toBeUndefined();
    expect(env.PORT).toBe(8080);
    expect(env.AGP_ANSWER_CACHE_ENTRIES).toBe(256);
    expect(env.OPS_PORT).toBe(9460);
  });
  it('names every bad variable', () => {
    expect(() => loadEnv(processSchema, { PORT: 'eighty', AGP_LLM_BASE_URL: 'not a url' })).toThrow(/PORT[\s\S]*AGP_LLM_BASE_URL|AGP_LLM_BASE_URL[\s\S]*PORT/);
  });
  it("checks only the settings the process reads: another process's bad value does not stop it", () => {
    const listenOnly = z.object({ ...logEnv, ...listenEnv });
    expect(loadEnv(listenOnly, { PORT: '9000', AGP_LLM_BASE_URL: 'not a url' })).toEqual({ LOG_LEVEL: 'info', PORT: 9000, HOST: '127.0.0.1' });
  });
});

describe('listen addresses (HOST, OPS_HOST)', () => {
  it('default to loopback and accept addresses and host names; anything else is refused', () => {
    const env = loadEnv(processSchema, {});
    expect([env.HOST, env.OPS_HOST]).toEqual(['127.0.0.1', '127.0.0.1']);
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', '10.1.2.3', 'agp.internal']) expect(loadEnv(processSchema, { HOST: host, OPS_HOST: host }).HOST).toBe(host);
    expect(() => loadEnv(processSchema, { HOST: 'http://0.0.0.0', OPS_HOST: '0.0.0.0:9460' })).toThrow(/HOST[\s\S]*listen address[\s\S]*OPS_HOST/);
  });
  it('the ops server listens where OPS_HOST says (loopback by default)', async () => {
    for (const [vars, expected] of [[{}, '127.0.0.1'], [{ OPS_HOST: '0.0.0.0' }, '0.0.0.0']] as const) {
      const env = loadEnv(processSchema, vars);
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

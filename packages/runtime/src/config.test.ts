import { describe, expect, it } from 'vitest';
import { baseEnvSchema, loadEnv } from './config.js';

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

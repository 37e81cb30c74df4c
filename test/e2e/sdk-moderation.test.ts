/**
 * The SDK's moderation provider, `openAIModeration`, against a real HTTP server on loopback speaking OpenAI's
 * `/v1/moderations` protocol (test/support/fake-moderation.ts): the request it sends, the category mapping, retries,
 * timeouts and answers of another shape. Then end to end on the embedded platform: a Governor whose agent's policy has
 * `guardrails.moderation` blocks a harmful text with `content_blocked` and the spec's moderation context (stored on
 * the intervention), allows benign text, and fails closed (block mode) or warns (warn mode) when the provider fails or
 * is missing. Embedded only: the moderation runs in the agent; what the platform stores is the same intervention
 * ingest takes in both modes (covered by the ingest and SDK tests in both).
 * Source: docs/sdk.md §Moderation provider; spec §Guardrail context payload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionBlockedError, Governor, ModerationError, moderationCategory, openAIModeration } from '@agp/sdk';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import { startFakeModeration, type FakeModeration } from '../support/fake-moderation.js';

let fake: FakeModeration;
let p: BootedPlatform;
const govs: Governor[] = [];
const uniq = () => Math.random().toString(36).slice(2, 10);

beforeAll(async () => {
  [fake, p] = await Promise.all([startFakeModeration(), bootEmbedded()]);
}, 120_000);
afterAll(async () => {
  for (const g of govs.splice(0)) await g.close({ timeoutMs: 2000 }).catch(() => undefined);
  await Promise.all([fake?.close(), p?.stop()]);
});

describe('openAIModeration (loopback /v1/moderations)', () => {
  it('sends {model, input: string[]} with the bearer key and maps the scores to the guardrail categories', async () => {
    const before = fake.requests.length;
    const provider = openAIModeration({ baseURL: `${fake.url}/`, apiKey: 'sk-test-moderation' });
    const out = await provider.moderate(['Where is my parcel?', 'If this is not fixed I will hurt myself']);
    expect(fake.requests.slice(before)).toEqual([{ authorization: 'Bearer sk-test-moderation', body: { model: 'omni-moderation-latest', input: ['Where is my parcel?', 'If this is not fixed I will hurt myself'] } }]);
    expect(out).toHaveLength(2);
    expect(out[0]['self-harm']).toBe(0.001);
    expect(out[1]).toMatchObject({ 'self-harm': 0.97, 'self-harm/intent': 0.93, violence: 0.31 });
    expect(Object.keys(out[1]).sort()).toEqual(['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/instructions', 'self-harm/intent', 'sexual', 'sexual/minors', 'violence', 'violence/graphic']);
    // Other spellings land on the same category; unknown names are dropped.
    fake.fail({ body: { id: 'x', model: 'm', results: [{ category_scores: { self_harm_intent: 0.9, 'Harassment-Threatening': 0.8, spam: 0.99 } }] } });
    expect(await openAIModeration({ baseURL: fake.url, model: 'text-moderation-stable' }).moderate(['x'])).toEqual([{ 'self-harm/intent': 0.9, 'harassment/threatening': 0.8 }]);
    expect(fake.requests.at(-1)).toEqual({ authorization: undefined, body: { model: 'text-moderation-stable', input: ['x'] } });
    expect([moderationCategory('sexual_minors'), moderationCategory('violence/graphic'), moderationCategory('spam')]).toEqual(['sexual/minors', 'violence/graphic', null]);
  });

  it('retries 5xx and 429 (Retry-After), not 4xx; a timeout, too many failures or an answer of another shape reject with ModerationError', async () => {
    const provider = openAIModeration({ baseURL: fake.url, maxRetries: 2, timeoutMs: 20_000 });
    fake.fail({ status: 503 }, { status: 429, retryAfter: '0' });
    const started = Date.now();
    expect(await provider.moderate(['hello'])).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240); // the 503 without Retry-After waits the first backoff step (250 ms)
    fake.fail({ status: 400 });
    const before = fake.requests.length;
    await expect(provider.moderate(['hello'])).rejects.toMatchObject({ name: 'ModerationError', status: 400, message: expect.stringContaining('HTTP 400') });
    expect(fake.requests.length - before).toBe(1);
    fake.fail({ status: 500 }, { status: 502 }, { status: 503 });
    await expect(provider.moderate(['hello'])).rejects.toMatchObject({ status: 503, message: expect.stringContaining('after 3 attempt(s)') });
    fake.fail({ stallMs: 1500 });
    const t0 = Date.now();
    const err = await openAIModeration({ baseURL: fake.url, timeoutMs: 300 }).moderate(['hello']).catch((e) => e);
    expect(err).toBeInstanceOf(ModerationError);
    expect(err.message).toContain('300 ms');
    expect(Date.now() - t0).toBeLessThan(1400); // the server would answer after 1500 ms
    fake.fail({ body: { results: [] } });
    await expect(provider.moderate(['a'])).rejects.toThrow('has 0 results for 1 input(s)');
    fake.fail({ body: { results: [{ category_scores: { violence: 7 } }] } });
    await expect(provider.moderate(['a'])).rejects.toThrow('results[0].category_scores.violence is 7');
    expect(() => openAIModeration({ baseURL: 'ftp://x' })).toThrow(TypeError);
    expect(() => openAIModeration({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});

describe('the moderation guardrail through Governor (embedded platform)', () => {
  /** A fresh agent with one policy `{guardrails: {moderation}}`, and its connected governor. */
  async function agentWith(moderation: Record<string, unknown>, opts: Partial<Parameters<typeof Governor.connect>[0]> = {}) {
    const agentId = `mod-${uniq()}`;
    const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `moderation ${agentId}`, agent_ids: [agentId], guardrails: { moderation } } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId, onReportError: () => undefined, ...opts });
    govs.push(gov);
    return { agentId, gov, policy: r.body as { id: string; name: string } };
  }
  const interventions = (agentId: string, n: number) =>
    eventually(async () => {
      const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${agentId}&limit=100`, { key: p.readKey });
      return r.body.total >= n ? (r.body.interventions as any[]) : null;
    });

  it('blocks a harmful text with content_blocked and the moderation context; allows benign text; the server got every string once', async () => {
    const { agentId, gov, policy } = await agentWith({ mode: 'block', threshold: 0.8, categories: ['self-harm', 'harassment'] }, { moderation: openAIModeration({ baseURL: fake.url, apiKey: 'sk-test' }) });
    const run = gov.startRun();
    const before = fake.requests.length;
    let ran = 0;
    const args = { ticket: 'T-100', reply: { text: 'I will hurt myself if you close this ticket', to: 'T-100' }, tags: ['urgent', ' '] };
    const err = await run.act('post_reply', args, () => ++ran, { estimatedCostUsd: 0.01 }).catch((e) => e);
    expect(err).toBeInstanceOf(ActionBlockedError);
    expect(ran).toBe(0);
    const context = {
      guardrail_schema_version: 1,
      guardrail: 'moderation',
      matches: [
        { category: 'self-harm', field_path: 'reply.text', matched_text: expect.any(String), score: 0.97 },
        { category: 'self-harm/intent', field_path: 'reply.text', matched_text: expect.any(String), score: 0.93 },
      ],
      categories: ['self-harm', 'self-harm/intent'],
      fields: ['reply.text'],
    };
    expect(err.decision).toMatchObject({ decision: 'content_blocked', intervention_type: 'content_blocked', outcome: 'blocked', rule: 'moderation_guardrail', policy_id: policy.id, context });
    expect(err.decision.context.matches[0].matched_text).not.toContain('hurt myself');
    // One request: each distinct non-blank string once, in argument order (violence 0.31 is below the threshold and not listed).
    expect(fake.requests.slice(before)).toEqual([{ authorization: 'Bearer sk-test', body: { model: 'omni-moderation-latest', input: ['T-100', 'I will hurt myself if you close this ticket', 'urgent'] } }]);
    expect(await run.act('post_reply', { ticket: 'T-101', reply: { text: 'Your parcel ships tomorrow.' } }, () => ++ran)).toBe(1);
    await gov.close();
    const [rec] = await interventions(agentId, 1);
    expect(rec).toMatchObject({ type: 'content_blocked', outcome: 'blocked', policy_id: policy.id, action_name: 'post_reply', context });
  });

  it('fails closed when the provider fails (block mode) or is missing; warns in warn mode', async () => {
    const failing = openAIModeration({ baseURL: fake.url, maxRetries: 1 });
    const blocking = await agentWith({ threshold: 0.5 }, { moderation: failing });
    fake.fail({ status: 503 }, { status: 503 });
    const run = blocking.gov.startRun();
    const err = await run.act('post_reply', { text: 'hello' }, () => 'sent').catch((e) => e);
    expect(err).toBeInstanceOf(ActionBlockedError);
    expect(err.decision).toMatchObject({ decision: 'block', intervention_type: 'hard_block', rule: 'moderation_guardrail', policy_id: blocking.policy.id });
    expect(err.decision.reason).toMatch(/could not be moderated \(.*HTTP 503.*\); the moderation guardrail of policy ".*" fails closed/);
    expect(await run.act('post_reply', { text: 'hello' }, () => 'sent')).toBe('sent');

    const missing = await agentWith({ threshold: 0.5 });
    const e2 = await missing.gov.startRun().act('post_reply', { text: 'hello' }, () => 'sent').catch((e) => e);
    expect(e2.decision.reason).toContain('no moderation provider was given to Governor.connect');

    const warning = await agentWith({ mode: 'warn', threshold: 0.5 }, { moderation: failing });
    fake.fail({ status: 500 }, { status: 500 });
    expect(await warning.gov.startRun().act('post_reply', { text: 'hello' }, () => 'sent')).toBe('sent');
    await Promise.all([blocking.gov.close(), missing.gov.close(), warning.gov.close()]);
    expect((await interventions(blocking.agentId, 1))[0]).toMatchObject({ type: 'hard_block', outcome: 'blocked', policy_id: blocking.policy.id });
    expect((await interventions(warning.agentId, 1))[0]).toMatchObject({ type: 'warning', outcome: 'warned', policy_id: warning.policy.id, reason: expect.stringContaining('HTTP 500') });
  });
});

import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveJsonLoopback } from './fake-llm.js';

/**
 * A real `node:http` server on 127.0.0.1 (free port) speaking OpenAI's `POST /v1/moderations`: request
 * `{model, input: string | string[]}`, answer `{id, model, results: [{flagged, categories, category_scores,
 * category_applied_input_types}]}`, one result per input in order. A text's scores come from the first rule whose
 * phrase it contains (case-insensitive); other texts score 0.001 in every category. Failures are scripted as a queue:
 * each queued behaviour answers one request, then the server answers normally again. Every request is recorded.
 * Used by the moderation provider tests (no in-process mock of fetch).
 */
export interface FakeModeration {
  /** Base URL for `openAIModeration({ baseURL })`, e.g. `http://127.0.0.1:40123/v1`. */
  url: string;
  /** Every request received, in arrival order: its `Authorization` header and parsed JSON body. */
  requests: Array<{ authorization: string | undefined; body: any }>;
  /** Answer the next requests with these, one each: an HTTP status (an error body), or a stall of `ms` first. */
  fail(...behaviours: Array<{ status: number; retryAfter?: string } | { stallMs: number } | { body: unknown }>): void;
  close(): Promise<void>;
}

/** OpenAI's category names, with `/` (their `category_applied_input_types` and booleans use the same keys). */
export const OPENAI_CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm',
  'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
];

/** Scores by phrase: a text containing the phrase gets these scores (the rest 0.001). */
export const FLAGGED_PHRASES: Record<string, Record<string, number>> = {
  'hurt myself': { 'self-harm': 0.97, 'self-harm/intent': 0.93, violence: 0.31 },
  'i know where you live': { harassment: 0.88, 'harassment/threatening': 0.91, violence: 0.62 },
};

export async function startFakeModeration(): Promise<FakeModeration> {
  const requests: FakeModeration['requests'] = [];
  const queue: Array<{ status: number; retryAfter?: string } | { stallMs: number } | { body: unknown }> = [];
  let seq = 0;
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const result = (text: string) => {
    const lower = text.toLowerCase();
    const rule = Object.entries(FLAGGED_PHRASES).find(([phrase]) => lower.includes(phrase))?.[1] ?? {};
    const category_scores = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, rule[c] ?? 0.001]));
    return {
      flagged: Object.values(category_scores).some((s) => s >= 0.5),
      categories: Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, category_scores[c] >= 0.5])),
      category_scores,
      category_applied_input_types: Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, ['text']])),
    };
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/moderations') return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
    }
    requests.push({ authorization: req.headers.authorization, body });
    const next = queue.shift();
    if (next && 'stallMs' in next) await new Promise((r) => setTimeout(r, next.stallMs));
    else if (next && 'status' in next) return send(res, next.status, { error: { message: `fake moderation answers ${next.status}`, type: 'server_error' } }, next.retryAfter ? { 'retry-after': next.retryAfter } : {});
    else if (next && 'body' in next) return send(res, 200, next.body);
    const inputs: unknown[] = typeof body?.input === 'string' ? [body.input] : Array.isArray(body?.input) ? body.input : [];
    if (inputs.length === 0 || inputs.some((t) => typeof t !== 'string')) return send(res, 400, { error: { message: "'input' must be a string or an array of strings", type: 'invalid_request_error' } });
    send(res, 200, { id: `modr-${++seq}`, model: body.model ?? 'omni-moderation-latest', results: (inputs as string[]).map(result) });
  };
  const { port, close } = await serveJsonLoopback(handle, send);
  return { url: `http://127.0.0.1:${port}/v1`, requests, fail: (...b) => void queue.push(...b), close };
}

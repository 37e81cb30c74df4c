import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What the fake answers to one chat-completions request. */
export type FakeBehaviour =
  /** 200 with this assistant message content (an object is sent as its JSON). */
  | { kind: 'ok'; content: string | object }
  /** 200 with an assistant message calling these function tools (`finish_reason: tool_calls`), for agent loops. */
  | { kind: 'tool_calls'; calls: Array<{ id: string; name: string; arguments: object }> }
  /** An error status, with an optional `Retry-After` header (seconds). */
  | { kind: 'status'; status: number; retryAfter?: string }
  /** Wait `ms` before answering with `then` (default: the fake's default answer). */
  | { kind: 'stall'; ms: number; then?: FakeBehaviour };

/** Builders for {@link FakeBehaviour}s. */
export const reply = {
  ok: (content: string | object): FakeBehaviour => ({ kind: 'ok', content }),
  toolCalls: (...calls: Array<[id: string, name: string, args: object]>): FakeBehaviour => ({ kind: 'tool_calls', calls: calls.map(([id, name, args]) => ({ id, name, arguments: args })) }),
  invalidJson: (text = 'Sure! Here is the rewrite: reason = the agent was blocked'): FakeBehaviour => ({ kind: 'ok', content: text }),
  status: (status: number, retryAfterSeconds?: number): FakeBehaviour => ({ kind: 'status', status, ...(retryAfterSeconds !== undefined ? { retryAfter: String(retryAfterSeconds) } : {}) }),
  stall: (ms: number, then?: FakeBehaviour): FakeBehaviour => ({ kind: 'stall', ms, ...(then ? { then } : {}) }),
};

/** One request the fake received. */
export interface FakeRequest {
  /** Date.now() when it arrived, in ms. */
  at: number;
  path: string;
  authorization: string | undefined;
  /** The parsed JSON body (model, messages, response_format). */
  body: any;
  /** The messages' contents joined, for matching markers. */
  text: string;
}

/** A running fake chat-completions server. */
export interface FakeLlm {
  /** Base URL for AGP_LLM_BASE_URL, e.g. `http://127.0.0.1:40123/v1`. */
  url: string;
  /** Every request received, in arrival order. */
  requests: FakeRequest[];
  /**
   * Queue behaviours for requests whose messages contain `marker` (e.g. a unique action name), one per
   * request in order; when the queue is empty such requests get the default answer.
   */
  script(marker: string, ...behaviours: FakeBehaviour[]): void;
  /** Requests whose messages contain `marker`. */
  callsFor(marker: string): FakeRequest[];
  /** Requests containing `marker` being answered right now (e.g. stalled). */
  inFlight(marker: string): number;
  close(): Promise<void>;
}

/** The default answer: a valid enrichment in plain English, risk level `high`. */
export const DEFAULT_ANSWER = {
  reason: 'The action was stopped because a policy forbids it.',
  agent_intent: 'The agent wanted to finish its task.',
  risk_level: 'high',
  suggested_rewrite: 'Ask a person to approve the action first.',
};

/**
 * Start a real `node:http` server on 127.0.0.1 (free port) that speaks `POST /v1/chat/completions` with the
 * OpenAI response shape, scriptable per request marker and recording every request. Used as
 * AGP_LLM_BASE_URL by the enrichment tests (no in-process mock of the openai client), and as the model of agent loops
 * in the framework adapter tests ({@link reply.toolCalls}).
 */
export async function startFakeLlm(): Promise<FakeLlm> {
  const requests: FakeRequest[] = [];
  const scripts = new Map<string, FakeBehaviour[]>();
  const active = new Map<FakeRequest, true>();
  let seq = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const answer = async (req: FakeRequest, res: ServerResponse, b: FakeBehaviour): Promise<void> => {
    switch (b.kind) {
      case 'stall':
        await new Promise((r) => setTimeout(r, b.ms));
        return answer(req, res, b.then ?? reply.ok(DEFAULT_ANSWER));
      case 'status':
        return send(res, b.status, { error: { message: `fake provider answers ${b.status}`, type: b.status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } }, b.retryAfter ? { 'retry-after': b.retryAfter } : {});
      case 'ok':
      case 'tool_calls': {
        const message =
          b.kind === 'ok'
            ? { role: 'assistant', content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content), refusal: null }
            : { role: 'assistant', content: null, refusal: null, tool_calls: b.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) };
        return send(res, 200, {
          id: `chatcmpl-fake-${++seq}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: req.body?.model ?? 'fake',
          choices: [{ index: 0, message, logprobs: null, finish_reason: b.kind === 'ok' ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      }
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { error: { message: 'body is not JSON' } });
    }
    const text = Array.isArray(body?.messages) ? body.messages.map((m: { content?: unknown }) => String(m.content ?? '')).join('\n') : '';
    const rec: FakeRequest = { at: Date.now(), path, authorization: req.headers.authorization, body, text };
    requests.push(rec);
    const marker = [...scripts.keys()].find((m) => text.includes(m));
    const behaviour = (marker && scripts.get(marker)!.shift()) || reply.ok(DEFAULT_ANSWER);
    active.set(rec, true);
    try {
      await answer(rec, res, behaviour);
    } finally {
      active.delete(rec);
    }
  };

  const { port, close } = await serveJsonLoopback(handle, send);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(marker, ...behaviours) {
      scripts.set(marker, [...(scripts.get(marker) ?? []), ...behaviours]);
    },
    callsFor: (marker) => requests.filter((r) => r.text.includes(marker)),
    inFlight: (marker) => [...active.keys()].filter((r) => r.text.includes(marker)).length,
    close,
  };
}

/**
 * Serve `handle` on 127.0.0.1 (a free port) with `node:http`; a handler that throws answers 500 with an OpenAI-style
 * error body (through `send`). `close` drops open connections and stops the server.
 */
export async function serveJsonLoopback(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  send: (res: ServerResponse, status: number, body: unknown) => void,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => send(res, 500, { error: { message: String(err) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { port, close };
}

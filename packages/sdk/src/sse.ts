/**
 * A small Server-Sent Events reader over a fetch response body: no dependency, no EventSource (which cannot send an
 * `Authorization` header). It parses the WHATWG event-stream format: lines end with CRLF, LF or CR; `id:`, `event:`,
 * `data:` (several join with `\n`) and `retry:` fields, one optional space after the colon; `:` starts a comment; a
 * blank line dispatches the event (an event without `data:` is not dispatched). Source: WHATWG HTML §9.2 Server-sent
 * events, "Interpreting an event stream".
 */

/** One dispatched event. `id` is the last `id:` seen on the stream so far (the spec's "last event ID"), or null. */
export interface SseEvent {
  id: string | null;
  /** The `event:` name; `message` when the event named none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/** Handlers of {@link readSse}. Each is called synchronously as the stream is parsed; a throw ends the read. */
export interface SseHandlers {
  onEvent(e: SseEvent): void;
  /** A comment line (its text after `:`), e.g. `heartbeat`. */
  onComment?(text: string): void;
  /** Any bytes arrived (called before parsing them): the connection is alive. */
  onBytes?(): void;
}

/** Longest line the reader holds before it calls the stream broken, in characters (a line never ends: garbage). */
export const SSE_MAX_LINE = 1024 * 1024;

/**
 * Read `body` to its end, calling `handlers` for each event and comment. Resolves when the stream ends (the server
 * closed it); rejects with the handler's error when a handler throws, with an Error when a line exceeds
 * {@link SSE_MAX_LINE}, or with the body's error (e.g. an abort). A partial event at the end is discarded, as the
 * format asks.
 */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  let lastId: string | null = null;
  let event = '';
  let data: string[] = [];
  const line = (l: string) => {
    if (l === '') {
      if (data.length) handlers.onEvent({ id: lastId, event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      return;
    }
    if (l.startsWith(':')) return handlers.onComment?.(l.slice(1).trimStart());
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\u0000')) lastId = value;
    // `retry:` and unknown fields are ignored (the caller owns the reconnection delay).
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      handlers.onBytes?.();
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      for (let i = 0; i < buf.length; i++) {
        const c = buf.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        // A CR at the very end may be the first half of a CRLF still in flight: wait for the next chunk.
        if (c === 13 && i === buf.length - 1) break;
        line(buf.slice(start, i));
        if (c === 13 && buf.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
      buf = buf.slice(start);
      if (buf.length > SSE_MAX_LINE) throw new Error(`event-stream line longer than ${SSE_MAX_LINE} characters`);
    }
  } finally {
    reader.releaseLock();
    void body.cancel().catch(() => undefined);
  }
}

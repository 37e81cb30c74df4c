/**
 * The SDK's event-stream reader: CRLF, LF and CR line ends (a CRLF split across chunks is one line end), multi-line
 * data, comments, the last `id:` carried to later events, a trailing partial event discarded, and a handler's throw
 * ending the read. Source: WHATWG HTML §9.2 "Interpreting an event stream".
 */
import { describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from '../src/sse.js';

/** A body that yields `chunks` in turn. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

describe('readSse', () => {
  it('parses fields, line ends split across chunks, comments and ids; drops a partial event at the end', async () => {
    const events: SseEvent[] = [];
    const comments: string[] = [];
    await readSse(body(['id: 5\r', '\nevent: ready\r\ndata: {"a":\r\ndata:1}\r\n\r', '\n: heartbeat\n\n', 'data: x\r\rid: 9\nevent: e\ndata: half']), {
      onEvent: (e) => events.push(e),
      onComment: (c) => comments.push(c),
    });
    expect(events).toEqual([
      { id: '5', event: 'ready', data: '{"a":\n1}' },
      { id: '5', event: 'message', data: 'x' },
    ]);
    expect(comments).toEqual(['heartbeat']);
  });

  it("a handler's throw ends the read with its error", async () => {
    const err = await readSse(body(['event: surprise\ndata: {}\n\ndata: later\n\n']), {
      onEvent: (e) => {
        throw new Error(`unknown event ${e.event}`);
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe('unknown event surprise');
  });
});

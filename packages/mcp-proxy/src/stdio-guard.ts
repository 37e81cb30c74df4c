/**
 * What stands between the agent's stdin and the SDK's stdio transport in the local proxy: newline-delimited framing
 * with an answer for every line that is not a message. The official SDK's `StdioServerTransport` skips a line that is
 * not JSON without a word, reports a JSON value that is not a JSON-RPC message only to `onerror`, and closes the
 * connection (ending the proxy) when a line passes its 10 MiB buffer. Here each of those is answered on stdout as
 * JSON-RPC 2.0 prescribes, and the connection stays up:
 * - a line that is not JSON: `-32700` (Parse error), id null;
 * - JSON that is not a JSON-RPC 2.0 envelope (a batch array, `jsonrpc` not "2.0", neither a `method` nor a
 *   `result`/`error`): `-32600` (Invalid Request), with the request's id when it has a usable one, else null. What
 *   has the envelope but not a valid message's shape is the SDK's transport's to judge (it reports it to `onerror`);
 * - a line longer than {@link STDIO_MAX_MESSAGE_BYTES}: `-32600` naming the limit, the line dropped.
 * Good lines pass through unchanged for the SDK to read. Unknown methods are the SDK's (`-32601`). The protocol stays
 * the SDK's; this is framing. Source: docs/mcp-proxy.md (Bad input).
 */
import { Transform, type TransformCallback, type Writable } from 'node:stream';

/** Longest message (one line, bytes) the local proxy reads from the agent; below the SDK's own 10 MiB bound. */
export const STDIO_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** JSON-RPC 2.0 error codes the guard answers with. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/** What {@link guardStdin} is built with. */
export interface StdioGuardOptions {
  /** Where the answers to refused lines go: the same stream the transport writes to (stdout). */
  output: Writable;
  /** Longest line passed on, bytes. @default STDIO_MAX_MESSAGE_BYTES */
  maxBytes?: number;
  /** Told why each refused line was refused (for the proxy's log on stderr). */
  onRefused?: (why: string) => void;
}

/**
 * A stream to give `StdioServerTransport` as its stdin: pipe the agent's stdin into it. Lines that are JSON-RPC
 * messages come out as they went in; every other line is answered on `output` (see the module's description) and
 * dropped. Never throws on input.
 */
export function guardStdin(o: StdioGuardOptions): Transform {
  const maxBytes = o.maxBytes ?? STDIO_MAX_MESSAGE_BYTES;
  const refuse = (code: number, message: string, id: string | number | null) => {
    o.output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
    o.onRefused?.(`${code} ${message}`);
  };
  /** The start of the line not yet ended. */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Whether the rest of the current line is being dropped (it passed the limit). */
  let dropping = false;

  const judge = (line: Buffer, push: (b: Buffer) => void) => {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return refuse(PARSE_ERROR, `Parse error: ${err instanceof Error ? err.message : String(err)}`, null);
    }
    const obj = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    // The envelope only (cheap, no schema walk on the hot path); the SDK's transport validates the message in full.
    if (!obj || obj.jsonrpc !== '2.0' || !(typeof obj.method === 'string' || 'result' in obj || 'error' in obj)) {
      const id = obj && (typeof obj.id === 'string' || (typeof obj.id === 'number' && Number.isFinite(obj.id))) ? (obj.id as string | number) : null;
      const why = Array.isArray(value) ? 'JSON-RPC batches are not part of MCP; send one message per line' : 'not a JSON-RPC 2.0 message (jsonrpc "2.0", a method, an id for a request)';
      return refuse(INVALID_REQUEST, `Invalid Request: ${why}`, id);
    }
    push(Buffer.concat([line, Buffer.from('\n')]));
  };

  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        const part = chunk.subarray(start, nl);
        start = nl + 1;
        if (dropping) {
          dropping = false;
          continue;
        }
        if (pendingBytes + part.length > maxBytes) {
          pending = [];
          pendingBytes = 0;
          refuse(INVALID_REQUEST, `Invalid Request: a message over ${maxBytes} bytes`, null);
          continue;
        }
        const line = pending.length ? Buffer.concat([...pending, part]) : part;
        pending = [];
        pendingBytes = 0;
        judge(line, (b) => this.push(b));
      }
      const rest = chunk.subarray(start);
      if (rest.length && !dropping) {
        if (pendingBytes + rest.length > maxBytes) {
          pending = [];
          pendingBytes = 0;
          dropping = true;
          refuse(INVALID_REQUEST, `Invalid Request: a message over ${maxBytes} bytes`, null);
        } else {
          pending.push(rest);
          pendingBytes += rest.length;
        }
      }
      done();
    },
  });
}

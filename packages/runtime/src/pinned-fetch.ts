/**
 * An outbound `fetch` pinned to the addresses the outbound check accepted (undici's `Agent` with a fixed `lookup`):
 * the hosted MCP proxy's upstream connections and webhook deliveries. Source: docs/mcp-proxy.md (The hosted proxy);
 * docs/notifications.md (SSRF); docs/decisions.md (Outbound calls).
 */
import { Agent, fetch as undiciFetch } from 'undici';

/** A WHATWG `fetch` (the shape the MCP SDK's transports and the webhook worker call). */
export type PinnedFetchFn = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` whose connections go only to `addresses` (those the outbound check resolved and accepted), whatever the
 * host name resolves to later: a name re-pointed at an internal address after the check (DNS rebinding) is not
 * followed. TLS still verifies the URL's host name. Returns the dispatcher too, to be closed with the client.
 */
export function pinnedFetch(addresses: string[]): { fetch: PinnedFetchFn; agent: Agent } {
  const pinned = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const agent = new Agent({
    connect: {
      lookup: (_host: string, options: { all?: boolean }, done: (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void) =>
        options.all ? done(null, pinned) : done(null, pinned[0].address, pinned[0].family),
    },
  });
  const pinnedFetchFn = (url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent }) as unknown as Promise<globalThis.Response>;
  return { fetch: pinnedFetchFn, agent };
}

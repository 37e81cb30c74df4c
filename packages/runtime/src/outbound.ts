/**
 * The outbound address check: whether the platform may call a URL that a user gave it (an upstream MCP server's
 * address), so that a caller cannot make the platform reach its own network (server-side request forgery).
 *
 * A URL passes when its scheme is http or https, it carries no user name or password, and either its host is named in
 * `AGP_OUTBOUND_ALLOWED_HOSTS` (a host name, an IP address or a CIDR range the address falls in) or every address its
 * host name resolves to (DNS, `dns.lookup` with every family) is a public unicast address: loopback, link-local, the
 * cloud metadata addresses (169.254.169.254, fd00:ec2::254, `metadata.google.internal`), private (RFC 1918),
 * carrier-grade NAT, unique-local, unspecified, multicast, broadcast, reserved and the IPv6 translation ranges
 * (6to4, Teredo, NAT64) are refused. An IPv4-mapped IPv6 address is judged as its IPv4 address.
 * Source: docs/operations.md (Outbound calls); docs/decisions.md (The outbound address check).
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ValidationError } from './errors.js';

/** Host names refused whatever they resolve to (cloud metadata services), unless the allow list names them. */
export const METADATA_HOST_NAMES: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** The URL schemes an outbound call may use. */
export const OUTBOUND_SCHEMES: readonly string[] = ['http:', 'https:'];

/** What `AGP_OUTBOUND_ALLOWED_HOSTS` names, parsed: lower-case host names, and address ranges (a single address is a /32 or /128). */
export interface OutboundAllowList {
  /** Host names, lower case, without a trailing dot. */
  readonly hosts: ReadonlySet<string>;
  /** Address ranges: `[network, prefix length]` as ipaddr.js parses them. */
  readonly ranges: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

/** The empty allow list: every private, loopback and metadata address is refused. */
export const NO_OUTBOUND_EXCEPTIONS: OutboundAllowList = { hosts: new Set(), ranges: [] };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)*$/;

/** A host as it appears in a URL or the allow list: lower case, IPv6 brackets and a trailing dot removed. */
function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * Parse `AGP_OUTBOUND_ALLOWED_HOSTS`: comma-separated host names (`mcp.internal`, `localhost`), IP addresses
 * (`127.0.0.1`, `::1`) and CIDR ranges (`10.0.0.0/8`, `fd00::/8`); blanks around entries are ignored.
 * @throws Error naming each entry that is none of the three.
 */
export function parseOutboundAllowList(value: string | undefined): OutboundAllowList {
  const hosts = new Set<string>();
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  const bad: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const entry = normaliseHost(raw);
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
      else bad.push(raw.trim());
    } else if (ipaddr.isValid(entry)) {
      const addr = ipaddr.process(entry);
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else if (HOST_NAME.test(entry)) hosts.add(entry);
    else bad.push(raw.trim());
  }
  if (bad.length) throw new Error(`not a host name, IP address or CIDR range: ${bad.join(', ')}`);
  return { hosts, ranges };
}

/** AGP_OUTBOUND_ALLOWED_HOSTS: every process that calls a URL a user registered (the policies service, the gateway). */
export const outboundEnv = {
  /**
   * Comma-separated host names, IP addresses and CIDR ranges the platform may call although they are loopback,
   * private, link-local or metadata addresses (e.g. `mcp.internal,10.2.0.0/16`). Unset: only public addresses.
   */
  AGP_OUTBOUND_ALLOWED_HOSTS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseOutboundAllowList(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
};

/** Resolves a host name to its addresses (`dns.lookup` with `all: true` by default; a test or a caller may pass its own). */
export type HostLookup = (host: string) => Promise<string[]>;

/** The system resolver: every address of `host`, IPv4 and IPv6, in the order the system gives them. */
export const systemLookup: HostLookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Why a URL was refused, in a sentence a client may read (it names the address, never a path or query). */
export type OutboundVerdict = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

function inAllowedRange(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: OutboundAllowList): boolean {
  return allow.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net as never, bits));
}

/**
 * Whether one address may be called: public unicast, or inside an allowed range.
 * @returns null when it may, else the range it falls in (`loopback`, `private`, `linkLocal`, …).
 */
export function refusedAddressRange(address: string, allow: OutboundAllowList = NO_OUTBOUND_EXCEPTIONS): string | null {
  const addr = ipaddr.process(normaliseHost(address));
  if (inAllowedRange(addr, allow)) return null;
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

/**
 * Check one outbound URL (see the module's doc). Never throws for a bad URL: the verdict says why.
 * @param allow the parsed allow list ({@link parseOutboundAllowList}).
 * @param resolve how host names are resolved; {@link systemLookup} by default. A name that does not resolve is refused.
 * @returns `{ok: true, url, addresses}` (the addresses checked; empty for an allowed host name) or `{ok: false, reason}`.
 */
export async function checkOutboundUrl(url: string, allow: OutboundAllowList, resolve: HostLookup = systemLookup): Promise<OutboundVerdict> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (!OUTBOUND_SCHEMES.includes(parsed.protocol)) return { ok: false, reason: `scheme ${parsed.protocol.replace(/:$/, '')} is not allowed (http or https only)` };
  if (parsed.username !== '' || parsed.password !== '') return { ok: false, reason: 'a URL may not carry a user name or password (send credentials as headers)' };
  const host = normaliseHost(parsed.hostname);
  if (host === '') return { ok: false, reason: 'the URL has no host' };
  if (allow.hosts.has(host)) return { ok: true, url: parsed, addresses: [] };
  if (METADATA_HOST_NAMES.has(host)) return { ok: false, reason: `${host} is a cloud metadata service` };
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      return { ok: false, reason: `host ${host} does not resolve` };
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
  }
  for (const address of addresses) {
    const range = refusedAddressRange(address, allow);
    if (range !== null) {
      const what = host === address ? `address ${address}` : `host ${host} resolves to ${address}, which`;
      return { ok: false, reason: `${what} is ${describeRange(range)}; AGP_OUTBOUND_ALLOWED_HOSTS may name it` };
    }
  }
  return { ok: true, url: parsed, addresses };
}

/**
 * {@link checkOutboundUrl}, throwing a 422 that names `field` when the URL is refused.
 * @param field the field's path in the problem details (`body.url`).
 * @throws ValidationError (422) naming `field` and the reason.
 */
export async function assertOutboundUrl(url: string, field: string, allow: OutboundAllowList, resolve?: HostLookup): Promise<URL> {
  const verdict = await checkOutboundUrl(url, allow, resolve);
  if (!verdict.ok) throw new ValidationError(`${field}: the platform does not call this URL: ${verdict.reason}`, [{ path: field, message: `refused: ${verdict.reason}` }]);
  return verdict.url;
}

function describeRange(range: string): string {
  switch (range) {
    case 'loopback':
      return 'a loopback address';
    case 'linkLocal':
      return 'a link-local address (the metadata service among them)';
    case 'private':
      return 'a private address';
    case 'uniqueLocal':
      return 'a unique-local address (the metadata service fd00:ec2::254 among them)';
    case 'unspecified':
      return 'the unspecified address';
    case 'carrierGradeNat':
      return 'a carrier-grade NAT address';
    default:
      return `not a public address (${range})`;
  }
}

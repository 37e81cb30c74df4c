import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadEnv } from './config.js';
import { ValidationError } from './errors.js';
import { assertOutboundUrl, checkOutboundUrl, NO_OUTBOUND_EXCEPTIONS, outboundEnv, parseOutboundAllowList, refusedAddressRange, type HostLookup } from './outbound.js';

/** A resolver with fixed answers (the DNS boundary), so the test runs without a network. */
const names = (table: Record<string, string[]>): HostLookup => async (host) => {
  const found = table[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

describe('the outbound address check', () => {
  it('lets public addresses through, as literals and by name', async () => {
    for (const url of ['https://1.1.1.1/mcp', 'http://[2606:4700::1111]:8080/mcp', 'https://mcp.example.com/mcp']) {
      const verdict = await checkOutboundUrl(url, NO_OUTBOUND_EXCEPTIONS, names({ 'mcp.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] }));
      expect(verdict.ok, url).toBe(true);
    }
  });

  it('refuses loopback, link-local, metadata, private, unique-local, unspecified and translated addresses', async () => {
    const refused = [
      'http://127.0.0.1/', 'http://127.8.9.10:9000/', 'http://[::1]/', 'http://localhost/', 'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/', 'http://metadata.google.internal/computeMetadata/v1/', 'http://10.0.0.5/', 'http://172.16.1.1/',
      'http://192.168.1.1/', 'http://[fc00::1]/', 'http://0.0.0.0/', 'http://[::]/', 'http://[::ffff:127.0.0.1]/', 'http://[fe80::1]/',
      'http://100.64.0.1/', 'http://[64:ff9b::7f00:1]/', 'http://2130706433/', 'http://0x7f.1/',
    ];
    const lookup = names({ localhost: ['127.0.0.1', '::1'] });
    for (const url of refused) {
      const verdict = await checkOutboundUrl(url, NO_OUTBOUND_EXCEPTIONS, lookup);
      expect(verdict.ok, url).toBe(false);
    }
  });

  it('checks every address a name resolves to: one private address among public ones refuses it', async () => {
    const verdict = await checkOutboundUrl('https://rebind.example/mcp', NO_OUTBOUND_EXCEPTIONS, names({ 'rebind.example': ['93.184.215.14', '10.1.2.3'] }));
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining('resolves to 10.1.2.3, which is a private address') });
  });

  it('refuses other schemes, credentials in the URL, names that do not resolve and what is not a URL', async () => {
    const lookup = names({});
    for (const [url, reason] of [
      ['file:///etc/passwd', /scheme file/],
      ['gopher://1.1.1.1/', /scheme gopher/],
      ['ftp://1.1.1.1/', /scheme ftp/],
      ['https://user:pw@1.1.1.1/', /user name or password/],
      ['https://nowhere.invalid/', /does not resolve/],
      ['not a url', /not an absolute URL/],
    ] as const) {
      const verdict = await checkOutboundUrl(url, NO_OUTBOUND_EXCEPTIONS, lookup);
      expect(verdict.ok ? 'ok' : verdict.reason, url).toMatch(reason);
    }
  });

  it('lets through what AGP_OUTBOUND_ALLOWED_HOSTS names: a host name, an address, a CIDR range', async () => {
    const allow = parseOutboundAllowList(' mcp.internal, 127.0.0.1 ,10.0.0.0/8,fd00::/8, Metadata.Google.Internal.');
    const lookup = names({ 'mcp.internal': ['192.168.7.7'] });
    for (const url of ['http://mcp.internal:3000/mcp', 'http://127.0.0.1:3000/', 'http://10.200.1.1/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://[::ffff:127.0.0.1]/']) {
      expect((await checkOutboundUrl(url, allow, lookup)).ok, url).toBe(true);
    }
    // Allowed ones only: another loopback address and another private range are still refused.
    for (const url of ['http://127.0.0.2/', 'http://192.168.1.1/', 'http://[::1]/']) expect((await checkOutboundUrl(url, allow, lookup)).ok, url).toBe(false);
    expect(refusedAddressRange('10.9.9.9', allow)).toBeNull();
    expect(refusedAddressRange('169.254.169.254', allow)).toBe('linkLocal');
  });

  it('refuses a bad allow list at start, naming the entries', () => {
    expect(() => parseOutboundAllowList('ok.example, 10.0.0.0/33, bad host')).toThrow(/10\.0\.0\.0\/33, bad host/);
    expect(() => loadEnv(z.object(outboundEnv), { AGP_OUTBOUND_ALLOWED_HOSTS: 'a..b' })).toThrow(/AGP_OUTBOUND_ALLOWED_HOSTS/);
    expect(loadEnv(z.object(outboundEnv), { AGP_OUTBOUND_ALLOWED_HOSTS: 'localhost,::1' }).AGP_OUTBOUND_ALLOWED_HOSTS).toBe('localhost,::1');
  });

  it('throws a 422 naming the field', async () => {
    const err = await assertOutboundUrl('http://169.254.169.254/', 'body.url', NO_OUTBOUND_EXCEPTIONS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).errors).toEqual([{ path: 'body.url', message: expect.stringContaining('link-local') }]);
  });
});

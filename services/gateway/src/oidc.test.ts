import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LoginQuerySchema } from '@agp/contracts';
import { ServiceUnavailableError } from '@agp/runtime';
import { oidcSettings, authEnv } from './env.js';
import { OidcRelyingParty, csrfRefusal } from './oidc.js';
import { z } from 'zod';

const env = (over: Record<string, string>) => ({ ...z.object(authEnv).parse(over), AGP_INIT_ORG: undefined });

describe('oidcSettings', () => {
  it('is null in keys mode and names every variable oidc needs and lacks', () => {
    expect(oidcSettings(env({}))).toBeNull();
    expect(() => oidcSettings(env({ AGP_AUTH_MODE: 'oidc' }))).toThrow(/AGP_PUBLIC_URL, AGP_OIDC_ISSUER, AGP_OIDC_CLIENT_ID/);
  });

  it('refuses a plain-http issuer off loopback; defaults the redirect URL, lower-cases admin e-mails, converts lifetimes to ms', () => {
    const base = { AGP_AUTH_MODE: 'both', AGP_PUBLIC_URL: 'https://agp.example.com', AGP_OIDC_CLIENT_ID: 'agp' };
    expect(() => oidcSettings(env({ ...base, AGP_OIDC_ISSUER: 'http://idp.example.com' }))).toThrow(/https/);
    const s = oidcSettings(env({ ...base, AGP_OIDC_ISSUER: 'https://idp.example.com', AGP_ADMIN_EMAILS: ' Ops@Example.com, ,b@x.test', AGP_SESSION_IDLE_MINUTES: '30', AGP_SESSION_MAX_HOURS: '8' }))!;
    expect(s.redirectUrl.href).toBe('https://agp.example.com/auth/callback');
    expect(s.adminEmails).toEqual(['ops@example.com', 'b@x.test']);
    expect([s.idleMs, s.maxMs]).toEqual([30 * 60_000, 8 * 3_600_000]);
  });
});

describe('sign-in checks', () => {
  it('return_to: a path of this site only', () => {
    for (const ok of ['/', '/approvals', '/approvals?status=pending#x']) expect(LoginQuerySchema.safeParse({ return_to: ok }).success, ok).toBe(true);
    for (const bad of ['https://evil.test', '//evil.test', '/\\evil.test', 'evil', 'javascript:alert(1)', '/a b']) expect(LoginQuerySchema.safeParse({ return_to: bad }).success, bad).toBe(false);
  });

  it('CSRF: a cookie write needs the public origin; reads need none', () => {
    const req = (method: string, origin?: string) => ({ method, get: (h: string) => (h === 'origin' ? origin : undefined) }) as never;
    const pub = new URL('https://agp.example.com/');
    expect(csrfRefusal(req('GET'), pub)).toBeNull();
    expect(csrfRefusal(req('POST', 'https://agp.example.com'), pub)).toBeNull();
    expect(csrfRefusal(req('POST'), pub)).toMatch(/Origin/);
    expect(csrfRefusal(req('DELETE', 'https://evil.test'), pub)).toMatch(/evil\.test/);
  });

  it('a provider that cannot be reached: starting a sign-in is a 503 naming the issuer', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const s = oidcSettings(env({ AGP_AUTH_MODE: 'oidc', AGP_PUBLIC_URL: 'http://127.0.0.1:1', AGP_OIDC_ISSUER: `http://127.0.0.1:${port}`, AGP_OIDC_CLIENT_ID: 'agp' }))!;
    const err = await new OidcRelyingParty(s).start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
  });
});

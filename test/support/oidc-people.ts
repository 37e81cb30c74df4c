import type { TestProvider } from './oidc-provider.js';

/**
 * Signing people in through the test OpenID provider over real HTTP, for e2e tests that act as people: a cookie jar
 * and the whole redirect dance (/auth/login → the provider → /auth/callback) with manual redirects. The platform's
 * public URL may differ from its address (as behind a reverse proxy): requests to the public URL go to the platform.
 * Source: docs/auth.md (Signing in).
 */

/** Cookies by name, from the Set-Cookie headers of each answer (an expired one removed). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  /** Take the Set-Cookie headers of `res`. */
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(i + 1).trim());
    }
  }

  /** The `cookie` request header of every cookie held. */
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Sign person `who` (an account id of the provider) in at the platform at `platformUrl` whose public URL is `publicUrl`.
 * @returns the `cookie` header of the session.
 * @throws Error naming the step that did not answer as expected (login, a provider hop, or the callback).
 */
export async function signInPerson(platformUrl: string, publicUrl: string, provider: TestProvider, who: string): Promise<string> {
  provider.signInAs(who);
  const jar = new CookieJar();
  const providerJar = new CookieJar();
  const get = async (url: string, j: CookieJar) => {
    const target = url.startsWith(publicUrl) ? platformUrl + url.slice(publicUrl.length) : url;
    const res = await fetch(target, { redirect: 'manual', headers: j.cookies.size ? { cookie: j.header() } : {} });
    j.take(res);
    await res.body?.cancel();
    if (res.status !== 302 && res.status !== 303) throw new Error(`sign-in of ${who}: ${url} answered ${res.status}`);
    return new URL(res.headers.get('location')!, url);
  };
  let location = await get(`${platformUrl}/auth/login?return_to=%2F`, jar);
  for (let hop = 0; hop < 10 && location.origin === provider.issuer; hop++) location = await get(location.href, providerJar);
  await get(location.href, jar);
  if (!jar.cookies.has('agp_session')) throw new Error(`sign-in of ${who}: no session cookie`);
  return jar.header();
}

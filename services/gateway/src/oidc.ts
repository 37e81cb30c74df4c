/**
 * Signing people in through OpenID Connect with `openid-client` (Authorization Code with PKCE, state and nonce), and
 * the session cookie that then authenticates their requests. The provider's metadata is discovered at the first
 * sign-in and kept; a provider that cannot be reached fails only new sign-ins (503), never existing sessions or keys.
 * Source: docs/auth.md; OpenID Connect Core 1.0 §3.1; RFC 7636 (PKCE).
 */
import * as client from 'openid-client';
import type { Request, Response } from 'express';
import type { SessionLifetimes } from '@agp/auth';
import { ServiceUnavailableError } from '@agp/runtime';
import type { OidcSettings } from './env.js';

/** The name of the session cookie. */
export const SESSION_COOKIE = 'agp_session';

/** Scopes asked of the provider: the ID token, the e-mail address and the name. */
const SCOPES = 'openid email profile';

/** How long discovery and token requests to the provider may take, in seconds. */
const PROVIDER_TIMEOUT_S = 5;

/** What a finished sign-in yields: who the provider says signed in. */
export interface ProviderIdentity {
  issuer: string;
  sub: string;
  email: string | null;
  name: string | null;
}

/** A started sign-in: the provider URL to send the browser to, and what must be kept to finish it. */
export interface StartedSignIn {
  url: URL;
  state: string;
  codeVerifier: string;
  nonce: string;
}

/**
 * The relying party: discovers the provider once (again after a failure), builds authorization URLs and exchanges
 * codes. Plain http is allowed only for a loopback issuer (checked when the settings are read).
 */
export class OidcRelyingParty {
  private config: Promise<client.Configuration> | null = null;

  constructor(readonly settings: OidcSettings) {}

  /** The provider's configuration, discovered once. @throws ServiceUnavailableError (503) when the provider cannot be reached. */
  private configuration(): Promise<client.Configuration> {
    if (!this.config) {
      const s = this.settings;
      const insecure = s.issuer.protocol === 'http:';
      const options = { timeout: PROVIDER_TIMEOUT_S, ...(insecure ? { execute: [client.allowInsecureRequests] } : {}) };
      this.config = (s.clientSecret ? client.discovery(s.issuer, s.clientId, s.clientSecret, undefined, options) : client.discovery(s.issuer, s.clientId, undefined, client.None(), options)).catch((err: unknown) => {
        this.config = null;
        throw new ServiceUnavailableError(`the OpenID provider ${s.issuer.href} cannot be reached (${(err as Error)?.message ?? String(err)}); retry, or sign in with an API key`, { cause: err });
      });
    }
    return this.config;
  }

  /** The provider's JWKS URL (its `jwks_uri`), from the discovered metadata. @throws ServiceUnavailableError (503) when the provider cannot be reached or publishes none. */
  async jwksUri(): Promise<URL> {
    const uri = (await this.configuration()).serverMetadata().jwks_uri;
    if (!uri) throw new ServiceUnavailableError(`the OpenID provider ${this.settings.issuer.href} publishes no jwks_uri; access tokens cannot be checked`);
    return new URL(uri);
  }

  /** Start a sign-in: a fresh state, nonce and PKCE verifier, and the provider URL carrying the state, nonce and S256 challenge. @throws ServiceUnavailableError (503). */
  async start(): Promise<StartedSignIn> {
    const config = await this.configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl.href,
      scope: SCOPES,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state, codeVerifier, nonce };
  }

  /**
   * Finish a sign-in: exchange the code of `search` (the callback's query string) with the PKCE verifier, check the
   * state and the ID token (issuer, audience, signature, nonce), and read the e-mail and name (from the userinfo
   * endpoint when the ID token lacks them).
   * @throws ServiceUnavailableError (503) when the provider cannot be reached; the library's errors for a refused exchange.
   */
  async finish(search: string, pending: { state: string; codeVerifier: string; nonce: string }): Promise<ProviderIdentity> {
    const config = await this.configuration();
    const current = new URL(this.settings.redirectUrl.href);
    current.search = search;
    const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    let email = typeof claims.email === 'string' ? claims.email : null;
    let name = typeof claims.name === 'string' ? claims.name : null;
    if (!email || !name) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email ??= typeof info.email === 'string' ? info.email : null;
      name ??= typeof info.name === 'string' ? info.name : null;
    }
    return { issuer: claims.iss, sub: claims.sub, email, name };
  }
}

/** The value of cookie `name` in the request's Cookie header, or null. */
export function cookieOf(req: Request, name: string): string | null {
  const header = req.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      return v.length > 0 && v.length <= 256 ? v : null;
    }
  }
  return null;
}

/** Set the session cookie: HttpOnly, SameSite=Lax, path /, Secure when the public URL is https; it lasts as long as the session at most. */
export function setSessionCookie(res: Response, token: string, publicUrl: URL, lifetimes: SessionLifetimes): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: publicUrl.protocol === 'https:', path: '/', maxAge: lifetimes.maxMs });
}

/** Clear the session cookie. */
export function clearSessionCookie(res: Response, publicUrl: URL): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure: publicUrl.protocol === 'https:', path: '/' });
}

/**
 * The CSRF check of a cookie-authenticated request: a method that changes state (anything but GET, HEAD, OPTIONS)
 * must carry an `Origin` header equal to the public URL's origin. Returns why it is refused, or null when it passes.
 */
export function csrfRefusal(req: Request, publicUrl: URL): string | null {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return null;
  const origin = req.get('origin');
  if (!origin) return `a change made with a session cookie needs an Origin header (${publicUrl.origin}); API clients send an API key instead`;
  if (origin !== publicUrl.origin) return `Origin ${origin.slice(0, 200)} is not this platform's public URL (${publicUrl.origin})`;
  return null;
}

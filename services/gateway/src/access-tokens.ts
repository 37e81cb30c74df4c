/**
 * OAuth access tokens for the MCP endpoints, as the MCP authorization specification asks of a resource server: the
 * protected-resource metadata (RFC 9728) that tells a client where to get a token, the `WWW-Authenticate` challenge that
 * names it, and the check of a JWT access token (RFC 9068) against the OpenID provider's JWKS with `jose`: signature,
 * issuer, audience (one of the platform's MCP resource identifiers, RFC 8707, or AGP_OAUTH_AUDIENCES) and expiry.
 * The token's subject is a person who signed in here before; they act with their membership's role, as with a session.
 * Source: docs/auth.md (OAuth for the MCP endpoints); RFC 9728; RFC 9068; MCP specification, Authorization.
 */
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { PeopleStore, SessionPrincipal } from '@agp/auth';
import { McpServerNameSchema, type ProtectedResourceMetadata } from '@agp/contracts';
import { ServiceUnavailableError } from '@agp/runtime';
import type { OidcSettings } from './env.js';
import type { OidcRelyingParty } from './oidc.js';

/** The path of the platform's MCP endpoint, and the prefix of the hosted proxy's endpoints. */
const MCP_PATH = '/api/v1/mcp';
const PROXY_PREFIX = '/api/v1/mcp/proxy/';
/** Where RFC 9728 puts the metadata of a resource whose identifier has a path: this, then that path. */
export const RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource';
/** Clock skew allowed on `exp` and `nbf`, in seconds. */
const CLOCK_TOLERANCE_S = 30;
/** How long a JWKS fetch may take, in ms. */
const JWKS_TIMEOUT_MS = 5_000;

/** A compact JWS: what an access token looks like, as opposed to an API key. */
export function looksLikeJwt(token: string): boolean {
  return /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(token);
}

/**
 * The path of the MCP endpoint (`/api/v1/mcp` or `/api/v1/mcp/proxy/<server>`) a request path is, without a trailing
 * slash, or null for any other path.
 */
export function mcpResourcePath(path: string): string | null {
  const p = path.replace(/\/+$/, '');
  if (p === MCP_PATH) return p;
  if (p.startsWith(PROXY_PREFIX) && McpServerNameSchema.safeParse(p.slice(PROXY_PREFIX.length)).success) return p;
  return null;
}

/** The resource identifier (RFC 8707) of an MCP endpoint path: the public URL's origin and path prefix, then the path. */
export function resourceOf(publicUrl: URL, path: string): string {
  return `${publicUrl.origin}${publicUrl.pathname.replace(/\/+$/, '')}${path}`;
}

/** The protected-resource metadata (RFC 9728 §2) of the MCP endpoint at `path`. */
export function resourceMetadata(settings: OidcSettings, path: string): ProtectedResourceMetadata {
  return {
    resource: resourceOf(settings.publicUrl, path),
    // The issuer as providers spell it: no trailing slash on a bare origin (`https://login.example.com`).
    authorization_servers: [settings.issuer.pathname === '/' ? settings.issuer.origin : settings.issuer.href],
    bearer_methods_supported: ['header'],
    resource_name: path === MCP_PATH ? 'AGP MCP endpoint' : `AGP hosted MCP proxy: ${path.slice(PROXY_PREFIX.length)}`,
    resource_documentation: resourceOf(settings.publicUrl, '/docs'),
  };
}

/** The `WWW-Authenticate` value of a 401 at `path`: `Bearer`, an error when a token was refused, and, on an MCP endpoint, `resource_metadata`. */
export function bearerChallenge(settings: OidcSettings | null, path: string, error?: string): string {
  const parts = ['realm="agp"'];
  if (error) parts.push('error="invalid_token"', `error_description="${error.replace(/["\\]/g, "'")}"`);
  const mcp = settings ? mcpResourcePath(path) : null;
  if (settings && mcp) parts.push(`resource_metadata="${resourceOf(settings.publicUrl, RESOURCE_METADATA_PREFIX + mcp)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** A refused access token: the reason goes into the 401's `WWW-Authenticate` and problem details. */
export class InvalidAccessTokenError extends Error {}

/** A token whose person is not a member anywhere here: 403, since the token itself is good. */
export class TokenWithoutMembershipError extends Error {}

/** Checks access tokens and finds their person; see the module comment. */
export class AccessTokenVerifier {
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;

  constructor(
    private readonly settings: OidcSettings,
    private readonly rp: OidcRelyingParty,
    private readonly people: Pick<PeopleStore, 'personOfSubject'>,
  ) {}

  /** Whether `aud` names one of the platform's MCP resources, or an audience of AGP_OAUTH_AUDIENCES. */
  private audienceAllowed(aud: JWTPayload['aud']): boolean {
    const base = resourceOf(this.settings.publicUrl, '');
    const ok = (a: string) => this.settings.extraAudiences.includes(a) || (a.startsWith(base) && mcpResourcePath(a.slice(base.length)) === a.slice(base.length));
    return (Array.isArray(aud) ? aud : aud ? [aud] : []).some(ok);
  }

  /**
   * The person of an access token, acting in their first organisation (oldest membership) with its role.
   * @throws InvalidAccessTokenError (401) for a bad signature, an unknown key, another issuer, an audience that is not
   *   the platform's, an expired or not-yet-valid token, or no `sub`; TokenWithoutMembershipError (403) for a person
   *   unknown here or without membership; ServiceUnavailableError (503) when the provider's keys cannot be fetched.
   */
  async resolve(token: string): Promise<SessionPrincipal> {
    this.jwks ??= createRemoteJWKSet(await this.rp.jwksUri(), { timeoutDuration: JWKS_TIMEOUT_MS });
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, { issuer: [this.settings.issuer.href, this.settings.issuer.href.replace(/\/$/, '')], clockTolerance: CLOCK_TOLERANCE_S }));
    } catch (err) {
      if (err instanceof joseErrors.JWKSTimeout || (err instanceof Error && /fetch failed|ECONNREFUSED/i.test(err.message))) {
        throw new ServiceUnavailableError("the OpenID provider's keys cannot be fetched; retry, or use an API key", { cause: err });
      }
      const why = err instanceof joseErrors.JWTExpired ? 'the access token has expired' : err instanceof joseErrors.JWTClaimValidationFailed ? `the access token's ${err.claim} claim is not accepted` : 'the access token is not signed by the configured OpenID provider';
      throw new InvalidAccessTokenError(why);
    }
    if (!this.audienceAllowed(payload.aud)) throw new InvalidAccessTokenError(`the access token's audience is not this platform's MCP endpoint (${resourceOf(this.settings.publicUrl, MCP_PATH)})`);
    if (!payload.sub || typeof payload.iss !== 'string') throw new InvalidAccessTokenError('the access token names no subject');
    const person = await this.people.personOfSubject(payload.iss, payload.sub);
    const first = person?.memberships[0];
    if (!person || !first) throw new TokenWithoutMembershipError('the access token is good, but its person is not a member here: sign in once at /auth/login (an invitation is taken up then)');
    const id = payload.jti ?? createHash('sha256').update(token).digest('base64url').slice(0, 22);
    return {
      session_id: `token:${id}`,
      user: person.user,
      organization_id: first.organization_id,
      role: first.role,
      memberships: person.memberships,
      expires_at: new Date((payload.exp ?? 0) * 1000).toISOString(),
    };
  }
}

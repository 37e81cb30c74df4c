/**
 * Signing in and out (`/auth/login`, `/auth/callback`, `/auth/logout`), who calls (`/api/v1/auth/me`) and the
 * organisation's members (`/api/v1/members`), answered by the gateway itself: it owns the people store beside the key
 * store, and it resolves every request's session cookie. Roles are checked at the edge from the route table; every
 * member query is scoped by the caller's organisation, so another organisation's member id is a 404.
 * Source: docs/auth.md; docs/api.md (Sign-in, Members).
 */
import { GatewayOps, SCOPE_ROLE, type AuthConfig, type AuthMe, type Member, type MemberList } from '@agp/contracts';
import type { PeopleStore } from '@agp/auth';
import { requestMetadata } from '@agp/eventstore';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError, UnauthorizedError, databaseUnavailable, parseOrThrow } from '@agp/runtime';
import type { OidcSettings } from '../env.js';
import { SESSION_COOKIE, clearSessionCookie, cookieOf, csrfRefusal, setSessionCookie, type OidcRelyingParty } from '../oidc.js';
import { resourceMetadata } from '../access-tokens.js';
import type { RouteAnswer, RouteCall } from '../router.js';

/** What the sign-in routes need: the relying party and the settings (absent when AGP_AUTH_MODE is keys). */
export interface SignInDeps {
  rp: OidcRelyingParty;
  settings: OidcSettings;
}

/** What the people routes need of the people store. */
export type PeopleAdmin = Pick<PeopleStore, 'saveLogin' | 'takeLogin' | 'signIn' | 'oldestOrganization' | 'createSession' | 'revokeSession' | 'switchOrganization' | 'listMembers' | 'addMember' | 'updateMember' | 'removeMember'>;

const peopleUnavailable = databaseUnavailable('the people store');

/** The sign-in settings. @throws NotFoundError (404) when sign-in is off (AGP_AUTH_MODE=keys). */
function signInOn(signIn: SignInDeps | null): SignInDeps {
  if (!signIn) throw new NotFoundError('sign-in is off on this platform (AGP_AUTH_MODE=keys); use an API key');
  return signIn;
}

/**
 * GET /auth/login?return_to: 302 to the provider with a fresh state, nonce and PKCE challenge (saved, to be taken once
 * by the callback). @throws ValidationError (422) for a `return_to` that is not a path of this site; NotFoundError
 * (404) when sign-in is off; ServiceUnavailableError (503) when the provider cannot be reached.
 */
export async function signIn({ req, res, deps }: RouteCall): Promise<void> {
  const { rp } = signInOn(deps.signIn);
  const { query } = parseOrThrow(GatewayOps['auth.login'].request, { query: req.query });
  const started = await rp.start();
  await deps.people.saveLogin(started.state, { codeVerifier: started.codeVerifier, nonce: started.nonce, returnTo: query.return_to ?? '/' }).catch(peopleUnavailable);
  res.set('cache-control', 'no-store').redirect(302, started.url.href);
}

/** Whether an error of the code exchange is the provider being unreachable (a network failure or timeout), not a refusal. */
function unreachable(err: unknown): boolean {
  const e = err as { name?: string; cause?: { code?: string } } | undefined;
  return err instanceof ServiceUnavailableError || e?.name === 'TimeoutError' || e?.name === 'AbortError' || (err instanceof TypeError && /fetch failed/.test(err.message));
}

/**
 * GET /auth/callback?code&state: takes the saved sign-in of `state` (once), exchanges the code with its PKCE verifier,
 * checks the ID token, records the person (an invited e-mail takes up its membership; AGP_ADMIN_EMAILS become admin
 * of the initial organisation), opens a session in their first organisation, sets the cookie and redirects to `return_to`.
 * @throws BadRequestError (400) for a forged, replayed or expired state or a refused exchange; ForbiddenError (403)
 * for a person with no membership; NotFoundError (404) when sign-in is off; ServiceUnavailableError (503) when the
 * provider cannot be reached.
 */
export async function signInCallback({ req, res, deps }: RouteCall): Promise<void> {
  const { rp, settings } = signInOn(deps.signIn);
  const { query } = parseOrThrow(GatewayOps['auth.callback'].request, { query: req.query });
  if (query.error) throw new BadRequestError(`the OpenID provider refused the sign-in: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`);
  if (!query.state || !query.code) throw new BadRequestError('the callback needs the code and state the OpenID provider sends; start at /auth/login');
  const pending = await deps.people.takeLogin(query.state).catch(peopleUnavailable);
  if (!pending) throw new BadRequestError('unknown, used or expired sign-in state (a sign-in is finished once, within 10 minutes); start again at /auth/login');
  const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
  let identity;
  try {
    identity = await rp.finish(search, { state: query.state, codeVerifier: pending.codeVerifier, nonce: pending.nonce });
  } catch (err) {
    if (unreachable(err)) throw err instanceof ServiceUnavailableError ? err : new ServiceUnavailableError('the OpenID provider cannot be reached; retry', { cause: err });
    throw new BadRequestError(`the sign-in could not be finished: ${(err as Error)?.message ?? String(err)}; start again at /auth/login`, { cause: err });
  }
  const initialOrg = settings.initialOrg ?? (await deps.people.oldestOrganization().catch(peopleUnavailable)) ?? 'default';
  const { user, memberships } = await deps.people.signIn(identity, { adminEmails: settings.adminEmails, initialOrg }).catch(peopleUnavailable);
  if (memberships.length === 0) throw new ForbiddenError(`${user.email ?? identity.sub} is a member of no organisation on this platform; ask an admin to invite this e-mail (POST /api/v1/members)`);
  const session = await deps.people.createSession(user.id, memberships[0].organization_id, settings).catch(peopleUnavailable);
  setSessionCookie(res, session.token, settings.publicUrl, settings);
  res.set('cache-control', 'no-store').redirect(302, pending.returnTo);
}

/**
 * POST /auth/logout: revokes the cookie's session (at once, on every gateway: sessions are not cached) and clears the
 * cookie; 204 also without a session. @throws ForbiddenError (403) when a session cookie comes without the public
 * URL's Origin (CSRF); NotFoundError (404) when sign-in is off.
 */
export async function signOut({ req, res, deps }: RouteCall): Promise<RouteAnswer> {
  const { settings } = signInOn(deps.signIn);
  const token = cookieOf(req, SESSION_COOKIE);
  if (token) {
    const csrf = csrfRefusal(req, settings.publicUrl);
    if (csrf) throw new ForbiddenError(csrf);
    await deps.people.revokeSession(token).catch(peopleUnavailable);
  }
  clearSessionCookie(res, settings.publicUrl);
  return { body: undefined };
}

/** GET /auth/config: how people sign in here; public, answered in every mode. */
export function getSignInConfig({ deps }: RouteCall): RouteAnswer {
  const s = deps.signIn?.settings;
  const body: AuthConfig = s ? { mode: s.mode, sign_in_url: '/auth/login', provider: s.issuer.origin } : { mode: 'keys', sign_in_url: null, provider: null };
  return { body };
}

/**
 * PUT /api/v1/auth/session `{organization_id}`: the cookie's session acts in another of its person's organisations.
 * @throws ConflictError (409) for a key or an access token; ForbiddenError (403) when the person is not a member there; ValidationError (422).
 */
export async function switchOrganization({ req, deps }: RouteCall): Promise<RouteAnswer> {
  const { body: b } = parseOrThrow(GatewayOps['auth.session'].request, { body: req.body ?? {} });
  const session = req.agpSession;
  const token = cookieOf(req, SESSION_COOKIE);
  if (!session || !token || session.session_id.startsWith('token:') || !deps.signIn) throw new ConflictError('only a signed-in session switches organisation; an API key or an access token acts in the organisation it was issued for');
  const ok = await deps.people.switchOrganization(token, b.organization_id).catch(peopleUnavailable);
  if (!ok) throw new ForbiddenError(`you are not a member of organisation ${b.organization_id}; your memberships: ${session.memberships.map((m) => m.organization_id).join(', ')}`);
  const role = session.memberships.find((m) => m.organization_id === b.organization_id)?.role ?? session.role;
  const body: AuthMe = { kind: 'user', organization_id: b.organization_id, role, user: session.user, key: null, memberships: session.memberships, session_expires_at: session.expires_at };
  return { body };
}

/** GET /api/v1/auth/me: the signed-in person or the key, the organisation, the role and the person's memberships, from what the edge resolved. */
export function getCaller({ req }: RouteCall): RouteAnswer {
  const session = req.agpSession;
  const key = req.agpKey;
  let body: AuthMe;
  if (session) {
    body = { kind: 'user', organization_id: session.organization_id, role: session.role, user: session.user, key: null, memberships: session.memberships, session_expires_at: session.expires_at };
  } else if (key) {
    body = { kind: 'key', organization_id: key.organization_id, role: SCOPE_ROLE[key.scope], user: null, key: { id: key.key_id, name: key.name ?? null, scope: key.scope }, memberships: [], session_expires_at: null };
  } else throw new UnauthorizedError('missing API key or session');
  return { body };
}

/** GET /.well-known/oauth-protected-resource/api/v1/mcp: the MCP endpoint's protected-resource metadata (RFC 9728). @throws NotFoundError (404) when sign-in is off. */
export function getMcpResourceMetadata({ deps }: RouteCall): RouteAnswer {
  return { body: resourceMetadata(signInOn(deps.signIn).settings, '/api/v1/mcp') };
}

/** GET /.well-known/oauth-protected-resource/api/v1/mcp/proxy/{server}: a hosted proxy endpoint's metadata. @throws NotFoundError (404) when sign-in is off; ValidationError (422) for a bad server name. */
export function getMcpProxyResourceMetadata({ params, deps }: RouteCall): RouteAnswer {
  const { settings } = signInOn(deps.signIn);
  const { path } = parseOrThrow(GatewayOps['oauth.proxy-resource'].request, { path: { server: params.server } });
  return { body: resourceMetadata(settings, `/api/v1/mcp/proxy/${path.server}`) };
}

/** GET /api/v1/members: every member of the caller's organisation, oldest first. */
export async function listMembers({ ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const body: MemberList = { members: await deps.people.listMembers(ctx.organization_id).catch(peopleUnavailable) };
  return { body };
}

/** POST /api/v1/members `{email, role}`: 201 with the member. @throws ValidationError (422) naming each bad field; ConflictError (409) for a member already. */
export async function createMember({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const { body: b } = parseOrThrow(GatewayOps['members.create'].request, { body: req.body ?? {} });
  const body: Member = await deps.people.addMember(ctx.organization_id, b.email, b.role, requestMetadata(ctx)).catch(peopleUnavailable);
  res.location(`/api/v1/members/${encodeURIComponent(body.id)}`);
  return { body };
}

/** PATCH /api/v1/members/{id} `{role}`. @throws NotFoundError (404); ConflictError (409) for the last admin; ValidationError (422). */
export async function updateMember({ req, ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  const { path, body: b } = parseOrThrow(GatewayOps['members.update'].request, { path: { id: params.id }, body: req.body ?? {} });
  return { body: await deps.people.updateMember(ctx.organization_id, path.id, b.role, requestMetadata(ctx)).catch(peopleUnavailable) };
}

/** DELETE /api/v1/members/{id}: the removed member; their sessions in the organisation end. @throws NotFoundError (404); ConflictError (409) for the last admin. */
export async function removeMember({ ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  const { path } = parseOrThrow(GatewayOps['members.remove'].request, { path: { id: params.id } });
  return { body: await deps.people.removeMember(ctx.organization_id, path.id, requestMetadata(ctx)).catch(peopleUnavailable) };
}

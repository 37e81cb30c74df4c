import { afterAll, expect, it } from 'vitest';
import { HTTP_ROUTES, ROLES, roleAllows, routeRole, type Role } from '@agp/contracts';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { generateKeyPairSync } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider, type StoredOAuthTokens } from '@modelcontextprotocol/client';
import { SignJWT } from 'jose';
import { MCP_CLIENT_REDIRECT, MCP_SCOPE, startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { CookieJar } from '../support/oidc-people.js';

/**
 * People sign in through a real OpenID provider (`oidc-provider` on loopback), in both run modes, over HTTP with
 * manual redirects and cookie jars: /auth/login → the provider → /auth/callback → the session cookie → /api/v1/auth/me
 * → a write with and without Origin → /auth/logout → the cookie refused. Refusals: a forged or replayed state, an
 * open-redirect return_to, an uninvited person, a viewer approving, an approver changing a policy, a policy_admin
 * creating a key. The platform's public URL is `http://agp.test` (as behind a reverse proxy): the provider redirects
 * the browser there, and the test sends that request to the platform's own address.
 * Source: docs/auth.md.
 */
const PUBLIC_URL = 'http://agp.test';
const PEOPLE = {
  alice: { email: 'Alice@Acme.test', name: 'Alice Admin' },
  vera: { email: 'vera@acme.test', name: 'Vera Viewer' },
  april: { email: 'april@acme.test', name: 'April Approver' },
  paul: { email: 'paul@acme.test', name: 'Paul Policy' },
  nobody: { email: 'nobody@elsewhere.test', name: 'No Body' },
};

let provider: TestProvider;

describeModes(
  'OIDC sign-in, sessions, members and roles',
  (platform, mode) => {
    /** GET `url` without following redirects, with `jar`'s cookies; URLs on the public URL go to the platform. */
    async function get(url: string, jar: CookieJar): Promise<Response> {
      const target = url.startsWith(PUBLIC_URL) ? platform().url + url.slice(PUBLIC_URL.length) : url;
      const res = await fetch(target, { redirect: 'manual', headers: jar.cookies.size ? { cookie: jar.header() } : {} });
      jar.take(res);
      return res;
    }

    /**
     * Sign `who` in from `/auth/login?return_to=…` through the provider, up to the callback (not followed).
     * Returns the callback's answer, its URL and the platform's cookie jar.
     */
    async function signIn(who: keyof typeof PEOPLE, returnTo = '/approvals'): Promise<{ res: Response; callbackUrl: string; jar: CookieJar }> {
      provider.signInAs(who);
      const jar = new CookieJar();
      const providerJar = new CookieJar();
      const login = await get(`${platform().url}/auth/login?return_to=${encodeURIComponent(returnTo)}`, jar);
      expect(login.status, await login.clone().text()).toBe(302);
      let location = new URL(login.headers.get('location')!);
      expect(location.origin).toBe(provider.issuer);
      expect(location.searchParams.get('code_challenge_method')).toBe('S256');
      expect(location.searchParams.get('state')).toBeTruthy();
      expect(location.searchParams.get('nonce')).toBeTruthy();
      for (let hop = 0; hop < 10 && location.origin === provider.issuer; hop++) {
        const r = await get(location.href, providerJar);
        expect([302, 303], `${location.href}: ${await r.clone().text()}`).toContain(r.status);
        location = new URL(r.headers.get('location')!, location);
      }
      expect(location.href.startsWith(`${PUBLIC_URL}/auth/callback?`)).toBe(true);
      const res = await get(location.href, jar);
      return { res, callbackUrl: location.href, jar };
    }

    /** A signed-in session: its cookie header. */
    async function session(who: keyof typeof PEOPLE): Promise<string> {
      const { res, jar } = await signIn(who);
      expect(res.status, await res.clone().text()).toBe(302);
      return jar.header();
    }

    const asPerson = (cookie: string, origin = true) => ({ headers: { cookie, ...(origin ? { origin: PUBLIC_URL } : {}) } });
    let alice: string;

    it('signs the first admin in: login → provider → callback → cookie → /api/v1/auth/me, back to return_to', async () => {
      const { res, jar } = await signIn('alice', '/approvals?status=pending');
      expect(res.status, await res.clone().text()).toBe(302);
      expect(res.headers.get('location')).toBe('/approvals?status=pending');
      const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('agp_session='))!;
      expect(setCookie).toMatch(/HttpOnly/i);
      expect(setCookie).toMatch(/SameSite=Lax/i);
      // The public URL is http here, so the cookie is not Secure (it is behind https).
      expect(setCookie).not.toMatch(/Secure/i);
      alice = jar.header();
      const me = await call(platform(), 'GET', '/api/v1/auth/me', asPerson(alice, false));
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ kind: 'user', organization_id: 'acme', role: 'admin', key: null, user: { email: 'alice@acme.test', name: 'Alice Admin' }, memberships: [{ organization_id: 'acme', role: 'admin' }] });
      expect(Date.parse(me.body.session_expires_at)).toBeGreaterThan(Date.now());
      // Only the session's SHA-256 is stored, never the cookie's value.
      const token = decodeURIComponent(alice.split('agp_session=')[1].split(';')[0]);
      const rows = await platform().queryRows('SELECT token_hash FROM agp_sessions');
      expect(rows.some((r) => JSON.stringify(r).includes(token))).toBe(false);
      // A key still answers /api/v1/auth/me and /api/v1/auth/key.
      const keyMe = await call(platform(), 'GET', '/api/v1/auth/me', { key: platform().readKey });
      expect(keyMe.body).toMatchObject({ kind: 'key', role: 'viewer', user: null, memberships: [] });
      expect((await call(platform(), 'GET', '/api/v1/auth/key', { key: platform().readKey })).status).toBe(200);
    });

    it('a cookie-authenticated write needs the public URL as Origin; a bearer-key write needs none', async () => {
      const p = platform();
      const body = { email: 'vera@acme.test', role: 'viewer' };
      expectProblem(await call(p, 'POST', '/api/v1/members', { ...asPerson(alice, false), body }), 403);
      expectProblem(await call(p, 'POST', '/api/v1/members', { headers: { cookie: alice, origin: 'http://evil.test' }, body }), 403);
      expect((await call(p, 'GET', '/api/v1/members', asPerson(alice, false))).body.members).toHaveLength(1);
      const vera = await call(p, 'POST', '/api/v1/members', { ...asPerson(alice), body });
      expect(vera.status, JSON.stringify(vera.body)).toBe(201);
      expect(vera.body).toMatchObject({ email: 'vera@acme.test', role: 'viewer', status: 'invited', user_id: null });
      for (const [email, role] of [['april@acme.test', 'approver'], ['paul@acme.test', 'policy_admin']]) {
        expect((await call(p, 'POST', '/api/v1/members', { ...asPerson(alice), body: { email, role } })).status).toBe(201);
      }
      // Bad fields are named, with the allowed roles; nothing is written.
      const bad = await call(p, 'POST', '/api/v1/members', { ...asPerson(alice), body: { email: 'not-an-address', role: 'owner' } });
      expectProblem(bad, 422);
      expect(JSON.stringify(bad.body)).toContain('email');
      expect(JSON.stringify(bad.body)).toContain('policy_admin');
      expectProblem(await call(p, 'POST', '/api/v1/members', { ...asPerson(alice), body: { email: 'VERA@acme.test', role: 'admin' } }), 409);
      // A bearer key writes without Origin (an admin key manages members too).
      const policy = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: 'key-made policy' } });
      expect(policy.status).toBe(201);
      expect((await call(p, 'GET', '/api/v1/members', { key: p.adminKey })).body.members).toHaveLength(4);
    });

    it('an invited e-mail takes up its membership at first sign-in; each role is held to its routes', async () => {
      const p = platform();
      const vera = await session('vera');
      const april = await session('april');
      const paul = await session('paul');
      const members = (await call(p, 'GET', '/api/v1/members', { key: p.adminKey })).body.members;
      expect(members.every((m: { status: string }) => m.status === 'active')).toBe(true);
      expect((await call(p, 'GET', '/api/v1/auth/me', asPerson(vera, false))).body).toMatchObject({ kind: 'user', role: 'viewer' });
      // viewer approving: 403 problem; viewer reading: 200.
      expect((await call(p, 'GET', '/api/v1/approvals', asPerson(vera, false))).status).toBe(200);
      const veraApproves = await call(p, 'POST', '/api/v1/approvals/apr-none/approve', { ...asPerson(vera), body: {} });
      expectProblem(veraApproves, 403);
      expect(veraApproves.body.detail).toContain('approver');
      // approver: may decide approvals (an unknown one is the service's 404), may not change a policy.
      const policy = await call(p, 'POST', '/api/v1/policies', { ...asPerson(paul), body: { name: 'made by paul' } });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      expect((await call(p, 'POST', '/api/v1/approvals/apr-none/approve', { ...asPerson(april), body: { approver_email: 'april@acme.test' } })).status).toBe(404);
      expectProblem(await call(p, 'PATCH', `/api/v1/policies/${policy.body.id}`, { ...asPerson(april), body: { name: 'changed by april' } }), 403);
      // April approves a pending approval: the decision records her as the actor, with her e-mail.
      const escalated = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: 'oidc-agent', risk_level: 'high' } });
      expect(escalated.status, JSON.stringify(escalated.body)).toBe(201);
      const approvalId = `apr-${escalated.body.id}`;
      await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 200, 30_000);
      expectProblem(await call(p, 'POST', `/api/v1/approvals/${approvalId}/approve`, { ...asPerson(vera), body: { approver_email: 'vera@acme.test' } }), 403);
      const approved = await call(p, 'POST', `/api/v1/approvals/${approvalId}/approve`, { ...asPerson(april), body: { approver_email: 'april@acme.test' } });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const aprilMe = (await call(p, 'GET', '/api/v1/auth/me', asPerson(april, false))).body;
      expect(approved.body).toMatchObject({ status: 'approved', actor: `user:${aprilMe.user.id}`, actor_name: 'april@acme.test' });
      // policy_admin: changes policies (recorded as the person), may not create a key or manage members.
      const changed = await call(p, 'PATCH', `/api/v1/policies/${policy.body.id}`, { ...asPerson(paul), body: { name: 'changed by paul' } });
      expect(changed.status).toBe(200);
      expectProblem(await call(p, 'POST', '/api/v1/keys', { ...asPerson(paul), body: { name: 'nope', scope: 'read' } }), 403);
      expectProblem(await call(p, 'GET', '/api/v1/members', asPerson(paul, false)), 403);
      const history = await call(p, 'GET', `/api/v1/policies/${policy.body.id}/history`, { key: p.readKey });
      expect(JSON.stringify(history.body)).toContain('paul@acme.test');
      // admin creates a key.
      expect((await call(p, 'POST', '/api/v1/keys', { ...asPerson(alice), body: { name: 'made by alice', scope: 'read' } })).status).toBe(201);
    });

    it('refuses a forged state, a replayed callback, an open-redirect return_to and an uninvited person', async () => {
      const p = platform();
      const forged = await call(p, 'GET', '/auth/callback?code=abc&state=forged-state');
      expectProblem(forged, 400);
      expect(forged.body.detail).toContain('state');
      const { res, callbackUrl } = await signIn('vera');
      expect(res.status).toBe(302);
      const replay = await fetch(p.url + callbackUrl.slice(PUBLIC_URL.length), { redirect: 'manual' });
      expect(replay.status).toBe(400);
      expect(replay.headers.getSetCookie()).toEqual([]);
      for (const bad of ['https://evil.test/x', '//evil.test/x', '/\\evil.test', 'javascript:alert(1)']) {
        const r = await call(p, 'GET', `/auth/login?return_to=${encodeURIComponent(bad)}`);
        expectProblem(r, 422);
        expect(JSON.stringify(r.body)).toContain('return_to');
      }
      const nobody = await signIn('nobody');
      expect(nobody.res.status).toBe(403);
      expect(nobody.jar.cookies.has('agp_session')).toBe(false);
    });

    it('logout revokes the session: the cookie is refused afterwards; a removed member loses their sessions', async () => {
      const p = platform();
      const vera = await session('vera');
      expect((await call(p, 'GET', '/api/v1/auth/me', asPerson(vera, false))).status).toBe(200);
      expectProblem(await call(p, 'POST', '/auth/logout', asPerson(vera, false)), 403);
      const out = await call(p, 'POST', '/auth/logout', asPerson(vera));
      expect(out.status).toBe(204);
      expectProblem(await call(p, 'GET', '/api/v1/auth/me', asPerson(vera, false)), 401);
      // Removing April ends her sessions at once.
      const april = await session('april');
      const members = (await call(p, 'GET', '/api/v1/members', { key: p.adminKey })).body.members;
      const id = members.find((m: { email: string }) => m.email === 'april@acme.test').id;
      expect((await call(p, 'DELETE', `/api/v1/members/${id}`, asPerson(alice))).status).toBe(200);
      expectProblem(await call(p, 'GET', '/api/v1/auth/me', asPerson(april, false)), 401);
      // The last admin cannot be demoted.
      const aliceId = members.find((m: { email: string }) => m.email === 'alice@acme.test').id;
      expectProblem(await call(p, 'PATCH', `/api/v1/members/${aliceId}`, { ...asPerson(alice), body: { role: 'viewer' } }), 409);
    });

    it(`role matrix (${mode}): every row whose role is above viewer refuses a person of each lower role with 403`, async () => {
      const p = platform();
      const sessions: Partial<Record<Role, string>> = { viewer: await session('vera'), policy_admin: await session('paul'), admin: alice };
      // April was removed above: invite her back as approver.
      expect((await call(p, 'POST', '/api/v1/members', { ...asPerson(alice), body: { email: 'april@acme.test', role: 'approver' } })).status).toBe(201);
      sessions.approver = await session('april');
      let checked = 0;
      for (const route of HTTP_ROUTES.filter((r) => r.auth !== 'none' && routeRole(r) !== 'viewer')) {
        for (const role of ROLES.filter((r) => !roleAllows(r, routeRole(route)))) {
          const path = route.path.replace(/\{[^}]+\}/g, 'no-such-id');
          const res = await fetch(p.url + path, { method: route.method, headers: { cookie: sessions[role]!, origin: PUBLIC_URL, 'content-type': 'application/json' }, body: ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined });
          expect(res.status, `${route.method} ${route.path} as ${role}`).toBe(403);
          expect(res.headers.get('content-type')).toContain('application/problem+json');
          await res.body?.cancel();
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(40);
    });

    it('/auth/config tells the sign-in page what to offer; a person in two organisations switches between them', async () => {
      const p = platform();
      expect((await call(p, 'GET', '/auth/config')).body).toEqual({ mode: 'both', sign_in_url: '/auth/login', provider: provider.issuer });
      const other = (await call(p, 'GET', '/api/v1/auth/key', { key: p.otherOrgAdminKey })).body.organization_id as string;
      expect((await call(p, 'POST', '/api/v1/members', { key: p.otherOrgAdminKey, body: { email: 'alice@acme.test', role: 'viewer' } })).status).toBe(201);
      const me = await call(p, 'GET', '/api/v1/auth/me', asPerson(alice, false));
      expect(me.body.memberships.map((m: { organization_id: string }) => m.organization_id).sort()).toEqual(['acme', other].sort());
      // CSRF, a key, and an organisation she is not a member of: refused, nothing changes.
      expectProblem(await call(p, 'PUT', '/api/v1/auth/session', { ...asPerson(alice, false), body: { organization_id: other } }), 403);
      expectProblem(await call(p, 'PUT', '/api/v1/auth/session', { key: p.adminKey, body: { organization_id: other } }), 409);
      expectProblem(await call(p, 'PUT', '/api/v1/auth/session', { ...asPerson(alice), body: { organization_id: 'nowhere' } }), 403);
      expectProblem(await call(p, 'PUT', '/api/v1/auth/session', { ...asPerson(alice), body: { organisation: other } }), 422);
      expect((await call(p, 'GET', '/api/v1/auth/me', asPerson(alice, false))).body).toMatchObject({ organization_id: 'acme', role: 'admin' });
      const switched = await call(p, 'PUT', '/api/v1/auth/session', { ...asPerson(alice), body: { organization_id: other } });
      expect(switched.status, JSON.stringify(switched.body)).toBe(200);
      expect(switched.body).toMatchObject({ kind: 'user', organization_id: other, role: 'viewer' });
      // Now she acts there, as a viewer: she reads its members, and cannot write.
      expect((await call(p, 'GET', '/api/v1/auth/me', asPerson(alice, false))).body).toMatchObject({ organization_id: other, role: 'viewer' });
      expectProblem(await call(p, 'POST', '/api/v1/policies', { ...asPerson(alice), body: { name: 'not allowed here' } }), 403);
      // Back to acme as admin.
      expect((await call(p, 'PUT', '/api/v1/auth/session', { ...asPerson(alice), body: { organization_id: 'acme' } })).body).toMatchObject({ organization_id: 'acme', role: 'admin' });
    });

    it('OAuth for the MCP endpoints: protected-resource metadata, and a 401 that names it', async () => {
      const p = platform();
      for (const path of ['/api/v1/mcp', '/api/v1/mcp/proxy/github']) {
        const meta = await call(p, 'GET', `/.well-known/oauth-protected-resource${path}`);
        expect(meta.status, JSON.stringify(meta.body)).toBe(200);
        expect(meta.body).toMatchObject({ resource: `${PUBLIC_URL}${path}`, authorization_servers: [provider.issuer], bearer_methods_supported: ['header'] });
        const refused = await fetch(`${p.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource${path}"`);
      }
      expectProblem(await call(p, 'GET', '/.well-known/oauth-protected-resource/api/v1/mcp/proxy/Not%20A%20Name'), 422);
      // A console session cannot call the hosted proxy (its governor needs a bearer credential): 403, not a failure.
      const bySession = await fetch(`${p.url}/api/v1/mcp/proxy/github`, { method: 'POST', headers: { cookie: alice, origin: PUBLIC_URL, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      expect(bySession.status).toBe(403);
      expect(bySession.headers.get('content-type')).toContain('application/problem+json');
      // Other routes challenge without resource metadata.
      const rest = await fetch(`${p.url}/api/v1/policies`);
      expect(rest.headers.get('www-authenticate')).toBe('Bearer realm="agp"');
    });

    it('an MCP SDK client finds the provider, gets an access token (PKCE, resource indicator) and calls tools as the person', async () => {
      const p = platform();
      const aliceMe = (await call(p, 'GET', '/api/v1/auth/me', asPerson(alice, false))).body;
      provider.signInAs('alice');
      const providerJar = new CookieJar();
      let authorizeAt: URL | undefined;
      let verifier = '';
      let tokens: StoredOAuthTokens | undefined;
      const oauth: OAuthClientProvider = {
        redirectUrl: MCP_CLIENT_REDIRECT,
        clientMetadata: { redirect_uris: [MCP_CLIENT_REDIRECT], client_name: 'test MCP client', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'], scope: `openid ${MCP_SCOPE}` },
        clientInformation: () => ({ client_id: provider.mcpClientId }),
        tokens: () => tokens,
        saveTokens: (t) => void (tokens = t),
        redirectToAuthorization: (url) => void (authorizeAt = url),
        saveCodeVerifier: (v) => void (verifier = v),
        codeVerifier: () => verifier,
      };
      // The client speaks to the public URL; requests for it go to the platform's own address.
      const toPlatform: typeof fetch = (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        return url.startsWith(PUBLIC_URL) ? fetch(p.url + url.slice(PUBLIC_URL.length), init) : fetch(input, init);
      };
      const endpoint = new URL(`${PUBLIC_URL}/api/v1/mcp`);
      const first = new StreamableHTTPClientTransport(endpoint, { authProvider: oauth, fetch: toPlatform });
      await expect(new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(authorizeAt?.origin).toBe(provider.issuer);
      expect(authorizeAt!.searchParams.get('resource')).toBe(endpoint.href);
      expect(authorizeAt!.searchParams.get('code_challenge_method')).toBe('S256');
      let location = authorizeAt!;
      for (let hop = 0; hop < 10 && location.origin === provider.issuer; hop++) {
        const r = await fetch(location, { redirect: 'manual', headers: providerJar.cookies.size ? { cookie: providerJar.header() } : {} });
        providerJar.take(r);
        expect([302, 303], `${location.href}: ${await r.clone().text()}`).toContain(r.status);
        location = new URL(r.headers.get('location')!, location);
      }
      expect(location.href.startsWith(MCP_CLIENT_REDIRECT)).toBe(true);
      await first.finishAuth(location.searchParams);
      expect(tokens?.access_token.split('.')).toHaveLength(3);
      const client = new Client({ name: 'oauth-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: oauth, fetch: toPlatform }));
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('set_kill_switch');
      const set = await client.callTool({ name: 'set_kill_switch', arguments: { engaged: true, agent_id: 'oauth-agent', reason: 'from an OAuth MCP client' } });
      expect(set.isError ?? false, JSON.stringify(set.content)).toBe(false);
      await client.close();
      const switches = await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey });
      expect(JSON.stringify(switches.body)).toContain(`user:${aliceMe.user.id}`);
      // The token is a bearer credential of the REST API too, as the person; /api/v1/auth/me says so.
      const me = await call(p, 'GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${tokens!.access_token}` } });
      expect(me.body).toMatchObject({ kind: 'user', role: 'admin', user: { email: 'alice@acme.test' } });
    });

    it('a forged, expired, wrong-audience or unknown-person access token is refused; nothing is written', async () => {
      const p = platform();
      const aliceSub = 'alice';
      const now = Math.floor(Date.now() / 1000);
      const good = { iss: provider.issuer, sub: aliceSub, aud: `${PUBLIC_URL}/api/v1/mcp`, iat: now, exp: now + 300, scope: MCP_SCOPE };
      const sign = (claims: object, key = provider.signingKey) => new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: provider.signingKid, typ: 'at+jwt' }).sign(key);
      const { privateKey: stranger } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      // The provider's own key signs a good token: accepted (the control).
      const control = await sign(good);
      expect((await call(p, 'GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${control}` } })).body).toMatchObject({ kind: 'user', user: { email: 'alice@acme.test' } });
      const cases: Array<[string, string, number]> = [
        ['forged (another key)', await sign(good, stranger), 401],
        ['expired', await sign({ ...good, iat: now - 600, exp: now - 300 }), 401],
        ['wrong audience', await sign({ ...good, aud: 'https://elsewhere.test/mcp' }), 401],
        ['another issuer', await sign({ ...good, iss: 'https://evil.test' }), 401],
        ['a person never signed in here', await sign({ ...good, sub: 'stranger-sub' }), 403],
      ];
      const before = (await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey })).body;
      for (const [what, token, status] of cases) {
        const res = await fetch(`${p.url}/api/v1/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'set_kill_switch', arguments: { engaged: true } } }),
        });
        expect(res.status, what).toBe(status);
        expect(res.headers.get('content-type'), what).toContain('application/problem+json');
        if (status === 401) expect(res.headers.get('www-authenticate'), what).toMatch(/error="invalid_token".*resource_metadata=/);
      }
      expect((await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey })).body).toEqual(before);
    });

    it('the provider down: existing sessions and keys keep working; a new sign-in fails with a problem, never a 5xx crash', async () => {
      const p = platform();
      await provider.close();
      expect((await call(p, 'GET', '/api/v1/auth/me', asPerson(alice, false))).status).toBe(200);
      expect((await call(p, 'GET', '/api/v1/policies', { key: p.readKey })).status).toBe(200);
      // The provider's metadata is known: the redirect is still built; the callback then cannot reach the provider.
      const login = await fetch(`${p.url}/auth/login`, { redirect: 'manual' });
      expect([302, 503]).toContain(login.status);
      // The callback cannot reach the provider to exchange the code: 503 problem details, no session.
      const started = new URL(login.headers.get('location')!);
      const callback = await fetch(`${p.url}/auth/callback?code=abc&state=${started.searchParams.get('state')}&iss=${encodeURIComponent(provider.issuer)}`, { redirect: 'manual' });
      expect(callback.status, await callback.clone().text()).toBe(503);
      expect(callback.headers.get('content-type')).toContain('application/problem+json');
      expect(callback.headers.getSetCookie()).toEqual([]);
    });
  },
  async () => {
    provider = await startTestProvider(`${PUBLIC_URL}/auth/callback`, PEOPLE);
    return { env: { AGP_AUTH_MODE: 'both', AGP_PUBLIC_URL: PUBLIC_URL, AGP_OIDC_ISSUER: provider.issuer, AGP_OIDC_CLIENT_ID: provider.clientId, AGP_OIDC_CLIENT_SECRET: provider.clientSecret, AGP_ADMIN_EMAILS: 'alice@acme.test, root@acme.test', AGP_INIT_ORG: 'acme' } };
  },
);

afterAll(async () => {
  await provider?.close().catch(() => undefined);
});

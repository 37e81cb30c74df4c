/**
 * A real OpenID provider on loopback for the sign-in tests: `oidc-provider` (a certified OpenID Connect
 * implementation) with one confidential client and test people. Its login step is programmatic: the interaction page
 * signs in whoever {@link TestProvider.signInAs} names, and every grant is given (no consent page), so a test drives
 * the whole Authorization Code + PKCE flow over HTTP with fetch.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the provider knows, by account id (the `sub`). */
export interface TestPerson {
  email: string;
  name: string;
}

/** A started provider. */
export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** A public client for MCP clients (PKCE, no secret) whose redirect URL {@link MCP_CLIENT_REDIRECT} is never served: tests read the code from it. */
  mcpClientId: string;
  /** The private key the provider signs with (RS256), so a test can mint tokens the provider could have issued. */
  signingKey: KeyObject;
  /** Its key id (`kid`). */
  signingKid: string;
  /** Who the next login interaction signs in (an account id of `people`). */
  signInAs(accountId: string): void;
  close(): Promise<void>;
}

/** The redirect URL of the MCP client of {@link TestProvider.mcpClientId}: nothing listens there. */
export const MCP_CLIENT_REDIRECT = 'http://127.0.0.1:9/oauth/callback';

/** The scope a resource server's access tokens carry here. */
export const MCP_SCOPE = 'mcp';

/**
 * Start the provider on 127.0.0.1 (a free port) with a client whose only redirect URL is `redirectUrl`.
 * @param people the accounts, by id (the `sub` claim).
 */
export async function startTestProvider(redirectUrl: string, people: Readonly<Record<string, TestPerson>>): Promise<TestProvider> {
  let provider: Provider | undefined;
  let next = Object.keys(people)[0];
  const server: Server = createServer((req, res) => {
    if (!provider) return void res.writeHead(503).end();
    if (/^\/interaction\/[^/?]+/.test(req.url ?? '')) {
      provider
        .interactionDetails(req, res)
        .then(() => provider!.interactionFinished(req, res, { login: { accountId: next } }, { mergeWithLastSubmission: false }))
        .catch((err: Error) => void res.writeHead(500).end(err.message));
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'agp-console';
  const clientSecret = 'agp-console-test-secret-0123456789';
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKid = 'test-signing-key';
  provider = new Provider(issuer, {
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: signingKid, alg: 'RS256', use: 'sig' }] as never },
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUrl], grant_types: ['authorization_code'], response_types: ['code'] },
      { client_id: 'mcp-client', token_endpoint_auth_method: 'none', redirect_uris: [MCP_CLIENT_REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    async findAccount(_ctx, id) {
      const person = people[id];
      return person ? { accountId: id, claims: async () => ({ sub: id, email: person.email, email_verified: true, name: person.name }) } : undefined;
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: {
      devInteractions: { enabled: false },
      // An authorization request naming a resource (RFC 8707) gets a JWT access token (RFC 9068) for that audience.
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({ scope: MCP_SCOPE, audience: resource, accessTokenTTL: 300, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Every client is first-party here: the requested scopes are granted without a consent page.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      const resource = ctx.oidc.params?.resource;
      for (const r of Array.isArray(resource) ? resource : typeof resource === 'string' ? [resource] : []) grant.addResourceScope(r, MCP_SCOPE);
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
  });
  return {
    issuer,
    clientId,
    clientSecret,
    mcpClientId: 'mcp-client',
    signingKey: privateKey,
    signingKid,
    signInAs: (accountId) => void (next = accountId),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/**
 * Sign `who` (an account id of the provider's people) in to the platform at `platformUrl` through `provider`, the way a
 * browser does (login → the provider's redirects → the callback, no redirect followed automatically), and return the
 * platform's cookie header (`agp_session=…`). `publicUrl` is the platform's AGP_PUBLIC_URL: requests to it are sent
 * to `platformUrl`. @throws Error when a step does not answer a redirect or no session cookie is set.
 */
export async function signInSession(platformUrl: string, publicUrl: string, provider: TestProvider, who: string): Promise<string> {
  provider.signInAs(who);
  const jars = new Map<string, Map<string, string>>();
  let url = `${platformUrl}/auth/login`;
  for (let hop = 0; hop < 12; hop++) {
    const target = url.startsWith(publicUrl) ? platformUrl + url.slice(publicUrl.length) : url;
    const origin = new URL(target).origin;
    const jar = jars.get(origin) ?? new Map<string, string>();
    jars.set(origin, jar);
    const res = await fetch(target, { redirect: 'manual', headers: jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0];
      jar.set(pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim());
    }
    await res.body?.cancel();
    const session = origin === new URL(platformUrl).origin ? jar.get('agp_session') : undefined;
    if (session) return `agp_session=${session}`;
    const location = res.headers.get('location');
    if (res.status < 300 || res.status > 303 || !location) throw new Error(`sign-in of ${who} stopped at ${target}: ${res.status}`);
    url = new URL(location, target).href;
  }
  throw new Error(`sign-in of ${who} did not finish`);
}

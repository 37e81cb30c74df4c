import { z } from 'zod';
import { OpaqueIdSchema } from './common.js';
import { ApiKeyPageSchema, ApiKeySchema, CallerKeySchema, CreateApiKeySchema, CreatedApiKeySchema, ListApiKeysQuerySchema } from './keys.js';
import { DeadLetterIdPathSchema, DeadLetterPageSchema, DeadLetterRetrySchema, ListDeadLettersQuerySchema } from './dead-letters.js';
import { McpServerNameSchema } from './mcp.js';
import { AuthConfigSchema, AuthMeSchema, CallbackQuerySchema, CreateMemberSchema, LoginQuerySchema, MemberIdPathSchema, MemberListSchema, MemberSchema, ProtectedResourceMetadataSchema, ProxyResourcePathSchema, SwitchOrganizationSchema, UpdateMemberSchema } from './members.js';
import type { WireMessage } from './wire.js';
import { AuditKeysSchema } from './audit-trail.js';

/**
 * Operations the gateway answers itself, without a bus message: the gateway owns the key store (it resolves every
 * request's key), so API key management and "who am I" are answered where the keys live. Each row has the shape of a
 * {@link WireMessage} row without a service: the scope a caller's key needs, the request parts (`path`, `query`,
 * `body`) and the reply. The route table names these rows as it names wire messages, so the scope check and the
 * OpenAPI document treat both alike. The dead letters are read from the platform's database through the query modules of
 * the packages that write them (@agp/eventstore, @agp/bus), as the interventions list is. Source: architecture §1 (gateway: auth), §4 (Auth); docs/decisions.md (Keys over HTTP).
 */
export type GatewayOp<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> = Omit<WireMessage<Req, Res>, 'service'>;

const op = <Req extends z.ZodType, Res extends z.ZodType>(m: GatewayOp<Req, Res>): GatewayOp<Req, Res> => m;

/** Every operation the gateway answers itself. The key is its name in the route table. */
export const GatewayOps = {
  'keys.create': op({
    scope: 'admin',
    request: z.object({ body: CreateApiKeySchema }),
    reply: CreatedApiKeySchema,
    summary: "create an API key of the caller's organisation; the plaintext is answered once",
  }),
  'keys.list': op({
    scope: 'admin',
    request: z.object({ query: ListApiKeysQuerySchema }),
    reply: ApiKeyPageSchema,
    summary: "one page of the organisation's API keys, newest first, never their plaintext",
  }),
  'keys.revoke': op({
    scope: 'admin',
    request: z.object({ path: z.strictObject({ id: OpaqueIdSchema }) }),
    reply: ApiKeySchema,
    summary: 'revoke one API key of the organisation (idempotent)',
  }),
  'auth.key': op({
    scope: 'read',
    request: z.object({}),
    reply: CallerKeySchema,
    summary: 'the calling key: its organisation, name, scope and expiry',
  }),
  'auth.me': op({
    scope: 'read',
    request: z.object({}),
    reply: AuthMeSchema,
    summary: 'who calls: the signed-in person or the key, the organisation, the role and the other memberships',
  }),
  'auth.config': op({
    scope: 'read',
    request: z.object({}),
    reply: AuthConfigSchema,
    summary: 'how people may sign in here (keys, the OpenID provider, or both)',
  }),
  'auth.session': op({
    scope: 'read',
    request: z.object({ body: SwitchOrganizationSchema }),
    reply: AuthMeSchema,
    summary: "switch the signed-in session to another of the person's organisations",
  }),
  'auth.login': op({
    scope: 'read',
    request: z.object({ query: LoginQuerySchema }),
    reply: z.null(),
    summary: "start signing in: a redirect to the organisation's OpenID provider (Authorization Code with PKCE)",
  }),
  'auth.callback': op({
    scope: 'read',
    request: z.object({ query: CallbackQuerySchema }),
    reply: z.null(),
    summary: "finish signing in: the provider's answer is checked (state, PKCE, ID token), a session is made, and the browser is sent back",
  }),
  'auth.logout': op({
    scope: 'read',
    request: z.object({}),
    reply: z.null(),
    summary: "sign out: the cookie's session is revoked",
  }),
  'oauth.resource': op({
    scope: 'read',
    request: z.object({}),
    reply: ProtectedResourceMetadataSchema,
    summary: "the platform MCP endpoint's OAuth protected-resource metadata (RFC 9728): where its access tokens come from",
  }),
  'oauth.proxy-resource': op({
    scope: 'read',
    request: z.object({ path: ProxyResourcePathSchema }),
    reply: ProtectedResourceMetadataSchema,
    summary: "a hosted MCP proxy endpoint's OAuth protected-resource metadata (RFC 9728)",
  }),
  'audit.keys': op({
    scope: 'read',
    request: z.object({}),
    reply: AuditKeysSchema,
    summary: 'the public keys that sign the verifiable audit trail’s checkpoints (read from the platform’s database)',
  }),
  'members.list': op({
    scope: 'admin',
    request: z.object({}),
    reply: MemberListSchema,
    summary: "the organisation's members (people and invited e-mail addresses) with their roles",
  }),
  'members.create': op({
    scope: 'admin',
    request: z.object({ body: CreateMemberSchema }),
    reply: MemberSchema,
    summary: 'invite an e-mail address with a role; it takes the membership up at its first sign-in',
  }),
  'members.update': op({
    scope: 'admin',
    request: z.object({ path: MemberIdPathSchema, body: UpdateMemberSchema }),
    reply: MemberSchema,
    summary: "change a member's role",
  }),
  'members.remove': op({
    scope: 'admin',
    request: z.object({ path: MemberIdPathSchema }),
    reply: MemberSchema,
    summary: "remove a member from the organisation (their sessions in it end)",
  }),
  'dead-letters.list': op({
    scope: 'admin',
    request: z.object({ query: ListDeadLettersQuerySchema }),
    reply: DeadLetterPageSchema,
    summary: "one page of the organisation's ingest and projection dead letters, the most recently failed first",
  }),
  'dead-letters.retry': op({
    scope: 'admin',
    request: z.object({ path: DeadLetterIdPathSchema }),
    reply: DeadLetterRetrySchema,
    summary: "re-submit an ingest dead letter's events through ingest, or apply a projection dead letter's event again through its projection (in the service that owns it); removed once accepted",
  }),
  'mcp-proxy.http': op({
    scope: 'write',
    request: z.object({ path: z.strictObject({ server: McpServerNameSchema }) }),
    reply: z.unknown(),
    summary: "one Streamable HTTP exchange of the hosted MCP proxy: the caller's registered upstream server, each tools/call governed as the caller's agent",
  }),
} as const satisfies Record<string, GatewayOp>;

/** A name of the {@link GatewayOps} table. */
export type GatewayOpKey = keyof typeof GatewayOps;
/** What a handler of `K` receives (defaults applied). */
export type GatewayOpRequest<K extends GatewayOpKey> = z.output<(typeof GatewayOps)[K]['request']>;
/** The reply of `K`. */
export type GatewayOpReply<K extends GatewayOpKey> = z.output<(typeof GatewayOps)[K]['reply']>;

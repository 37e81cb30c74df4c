import { z } from 'zod';
import { McpServerNameSchema } from './mcp.js';
import { OpaqueIdSchema } from './common.js';
import { KeyScopeSchema, type Scope } from './keys.js';

/**
 * People and their roles: the roles a member of an organisation may have, how API key scopes map onto them, and the
 * bodies of `/api/v1/members` and `/api/v1/auth/me`. A person signs in through the organisation's OpenID provider
 * (docs/auth.md); what they may do is their membership's role in the organisation they act in.
 * Source: docs/auth.md (Roles); docs/api.md (Members).
 */

/**
 * The roles, each including the ones before it: `viewer` reads; `approver` also approves and rejects approvals;
 * `policy_admin` also changes policies, kill switches, agents, MCP servers and quotas (and everything else a write key
 * may); `admin` also manages API keys and members.
 */
export const ROLES = ['viewer', 'approver', 'policy_admin', 'admin'] as const;
/** One of {@link ROLES}. */
export type Role = (typeof ROLES)[number];
/** See {@link ROLES}. */
export const RoleSchema = z.enum(ROLES).describe('viewer < approver < policy_admin < admin: each role may do what the ones before it may');

/** Whether role `have` may call a route that requires `need` (`admin` ⊃ `policy_admin` ⊃ `approver` ⊃ `viewer`). Pure. */
export function roleAllows(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

/**
 * The role an API key of each scope acts with, and the role a route needs by default from the scope of its operation:
 * a read key is a viewer, a write key a policy_admin (which also ingests), an admin key an admin.
 */
export const SCOPE_ROLE: Readonly<Record<Scope, Role>> = { read: 'viewer', write: 'policy_admin', admin: 'admin' };

/**
 * The key scope the services are told a person acts with (the request context's `scope`): viewer and approver read,
 * policy_admin writes, admin is admin. The gateway raises it to a route's own scope once the person's role passed the
 * route's role check (an approver approving acts with `write` for that request only). Pure.
 */
export function roleScope(role: Role): Scope {
  return role === 'admin' ? 'admin' : role === 'policy_admin' ? 'write' : 'read';
}

/** Longest e-mail address, in characters (RFC 5321 path limit). */
export const EMAIL_MAX = 254;

/** An e-mail address, compared lower-cased. */
export const EmailSchema = z
  .string()
  .max(EMAIL_MAX)
  .regex(/^[^\s@]+@[^\s@]+$/, 'expected an e-mail address (name@domain)')
  .transform((s) => s.toLowerCase())
  .describe('E-mail address (compared case-insensitively)');

/** A member of an organisation: a person who signed in, or an invited e-mail address that has not signed in yet. */
export const MemberSchema = z.object({
  id: z.string().describe('Member id (of the membership, not of the person)'),
  organization_id: z.string().describe('The organisation'),
  email: z.string().describe('The e-mail address, lower-cased'),
  role: RoleSchema,
  user_id: z.string().nullable().describe('The person, once they signed in with this e-mail; null while invited'),
  name: z.string().nullable().describe('The name the provider gave at the last sign-in; null while invited'),
  status: z.enum(['invited', 'active']).describe('invited: the e-mail has not signed in yet; active: it has'),
  created_at: z.string().describe('When the member was invited or made (ISO 8601 UTC)'),
});
export type Member = z.infer<typeof MemberSchema>;

/** Body of `POST /api/v1/members`: invite an e-mail address with a role; it takes the membership up at its first sign-in. */
export const CreateMemberSchema = z.strictObject({ email: EmailSchema, role: RoleSchema });
export type CreateMember = z.infer<typeof CreateMemberSchema>;

/** Body of `PATCH /api/v1/members/{id}`: the new role. */
export const UpdateMemberSchema = z.strictObject({ role: RoleSchema });
export type UpdateMember = z.infer<typeof UpdateMemberSchema>;

/** The path of `/api/v1/members/{id}`. */
export const MemberIdPathSchema = z.strictObject({ id: OpaqueIdSchema });

/** `GET /api/v1/members`: every member of the caller's organisation, oldest first. */
export const MemberListSchema = z.object({ members: z.array(MemberSchema).describe('Oldest first') });
export type MemberList = z.infer<typeof MemberListSchema>;

/** `GET /api/v1/auth/me`: who calls (a signed-in person or an API key), in which organisation, with which role. */
export const AuthMeSchema = z.object({
  kind: z.enum(['user', 'key']).describe('user: a person (session cookie or OAuth access token); key: an API key'),
  organization_id: z.string().describe('The organisation the caller acts in'),
  role: RoleSchema.describe('The role the caller acts with here (a key: the role of its scope)'),
  user: z.object({ id: z.string().describe('User id'), email: z.string().nullable().describe('E-mail from the provider'), name: z.string().nullable().describe('Name from the provider') }).nullable().describe('The person; null for a key'),
  key: z.object({ id: z.string().describe('Key id'), name: z.string().nullable().describe('Key name'), scope: KeyScopeSchema }).nullable().describe('The key; null for a person'),
  memberships: z.array(z.object({ organization_id: z.string().describe('An organisation'), role: RoleSchema })).describe("The person's memberships, the current one included; empty for a key"),
  session_expires_at: z.string().nullable().describe('When the session (or the access token) ends at the latest; null for a key'),
});
export type AuthMe = z.infer<typeof AuthMeSchema>;

/** Query of `GET /auth/login`: where to go after signing in (a path of this site; anything else is refused). */
export const LoginQuerySchema = z.object({
  return_to: z
    .string()
    .max(2048)
    .regex(/^\/(?![/\\])[^\s\\]*$/, 'expected a path of this site starting with a single "/" (no scheme, host or backslash)')
    .optional()
    .describe('A path of this site to return to after sign-in (default /)'),
});

/** Query of `GET /auth/callback`: what the provider sends back (`code` and `state`, or `error`). */
export const CallbackQuerySchema = z.object({
  code: z.string().max(4096).optional().describe('The authorization code'),
  state: z.string().max(512).optional().describe('The state /auth/login sent; taken once'),
  error: z.string().max(512).optional().describe("The provider's error code, when it refused"),
  error_description: z.string().max(2048).optional().describe("The provider's error text"),
  iss: z.string().max(2048).optional().describe('The issuer (RFC 9207), checked against the configured one'),
  session_state: z.string().max(2048).optional().describe("The provider's session state (unused)"),
});

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728 §2) of one of the platform's MCP endpoints, served at
 * `/.well-known/oauth-protected-resource` followed by the endpoint's path, so an MCP client finds the authorization
 * server to get an access token from (MCP authorization specification). Source: docs/auth.md (OAuth for the MCP endpoints).
 */
export const ProtectedResourceMetadataSchema = z.object({
  resource: z.url().describe("The endpoint's resource identifier: AGP_PUBLIC_URL followed by its path; an access token's audience"),
  authorization_servers: z.array(z.url()).describe('The OpenID provider (AGP_OIDC_ISSUER) that issues access tokens for it'),
  bearer_methods_supported: z.array(z.literal('header')).describe('Access tokens go in the Authorization header'),
  resource_name: z.string().describe('A name for people'),
  resource_documentation: z.url().describe('Where the endpoint is documented'),
});
export type ProtectedResourceMetadata = z.infer<typeof ProtectedResourceMetadataSchema>;

/** Path of `/.well-known/oauth-protected-resource/api/v1/mcp/proxy/{server}`. */
export const ProxyResourcePathSchema = z.strictObject({ server: McpServerNameSchema });

/** `GET /auth/config`: how people may sign in here, so a sign-in page offers the right choices. Public. */
export const AuthConfigSchema = z.object({
  mode: z.enum(['keys', 'oidc', 'both']).describe('keys: API keys only; oidc: the provider for people (keys for programs); both: either'),
  sign_in_url: z.string().nullable().describe('Where a browser starts signing in (`/auth/login`); null when sign-in is off'),
  provider: z.string().nullable().describe("The OpenID provider's origin, for the sign-in button; null when sign-in is off"),
});
export type AuthConfig = z.infer<typeof AuthConfigSchema>;

/** Body of `PUT /api/v1/auth/session`: the organisation the session acts in from now on (one of the person's memberships). */
export const SwitchOrganizationSchema = z.strictObject({ organization_id: z.string().min(1).max(256).describe('An organisation the person is a member of') });
export type SwitchOrganization = z.infer<typeof SwitchOrganizationSchema>;

import { z } from 'zod';
import { DateFilterSchema, NextCursorSchema, enumFilter, keysetPaginationShape } from './common.js';
import { endExclusive } from './intervention.js';
import { ApiKeySchema } from './keys.js';
import { KillSwitchEvents, AgentEvents, PolicyEvents } from './policy.js';
import { McpServerEvents, McpServerPinEvents } from './mcp.js';
import { MemberSchema } from './members.js';

/**
 * The log of administrative changes: every change to policies, kill switches, agents, API keys, members and their
 * roles, registered MCP servers and their tools accepted, with who made it, when, in which organisation, to what, and the object before and
 * after (secrets never shown). It is a projection of the events those changes already are (`audit-log-read-model`,
 * run by the policies service); API keys and members are recorded as events by the key and people stores in the
 * transaction of their change. Source: docs/auth.md (Audit log); docs/decisions.md (Key and member changes are events).
 */

/** Domain events of API keys (stream `api-key-<key id>`) and members (stream `member-<member id>`). */
export const AuthEvents = {
  KeyCreated: 'ApiKeyCreated',
  KeyRevoked: 'ApiKeyRevoked',
  MemberInvited: 'MemberInvited',
  MemberJoined: 'MemberJoined',
  MemberRoleChanged: 'MemberRoleChanged',
  MemberRemoved: 'MemberRemoved',
} as const;

/** Stream id of an API key's events. */
export const apiKeyStream = (id: string) => `api-key-${id}`;
/** Stream id of a membership's events. */
export const memberStream = (id: string) => `member-${id}`;

/** Data of ApiKeyCreated and ApiKeyRevoked: the key as listed after the change (never its plaintext or hash). */
export const ApiKeyChangedDataSchema = z.object({ key: ApiKeySchema });
export type ApiKeyChangedData = z.infer<typeof ApiKeyChangedDataSchema>;

/** Data of the member events: the member after the change (MemberRemoved: as it was when removed). */
export const MemberChangedDataSchema = z.object({ member: MemberSchema });
export type MemberChangedData = z.infer<typeof MemberChangedDataSchema>;

/** What an audit entry is about. */
export const AUDIT_OBJECT_TYPES = ['policy', 'kill_switch', 'agent', 'mcp_server', 'mcp_tool', 'key', 'member'] as const;
export type AuditObjectType = (typeof AUDIT_OBJECT_TYPES)[number];

/**
 * Each recorded event type: the entry's `type` and the type of object it changes. The audit log projects exactly
 * these event types.
 */
export const AUDIT_EVENT_TYPES = {
  [PolicyEvents.Created]: { type: 'policy.created', object: 'policy' },
  [PolicyEvents.Updated]: { type: 'policy.updated', object: 'policy' },
  [PolicyEvents.Enabled]: { type: 'policy.enabled', object: 'policy' },
  [PolicyEvents.Disabled]: { type: 'policy.disabled', object: 'policy' },
  [KillSwitchEvents.Engaged]: { type: 'kill_switch.engaged', object: 'kill_switch' },
  [KillSwitchEvents.Released]: { type: 'kill_switch.released', object: 'kill_switch' },
  [AgentEvents.Registered]: { type: 'agent.registered', object: 'agent' },
  [AgentEvents.Updated]: { type: 'agent.updated', object: 'agent' },
  [McpServerEvents.Registered]: { type: 'mcp_server.registered', object: 'mcp_server' },
  [McpServerEvents.Updated]: { type: 'mcp_server.updated', object: 'mcp_server' },
  [McpServerEvents.Deleted]: { type: 'mcp_server.deleted', object: 'mcp_server' },
  [McpServerPinEvents.ToolAccepted]: { type: 'mcp_tool.accepted', object: 'mcp_tool' },
  [AuthEvents.KeyCreated]: { type: 'key.created', object: 'key' },
  [AuthEvents.KeyRevoked]: { type: 'key.revoked', object: 'key' },
  [AuthEvents.MemberInvited]: { type: 'member.invited', object: 'member' },
  [AuthEvents.MemberJoined]: { type: 'member.joined', object: 'member' },
  [AuthEvents.MemberRoleChanged]: { type: 'member.role_changed', object: 'member' },
  [AuthEvents.MemberRemoved]: { type: 'member.removed', object: 'member' },
} as const satisfies Record<string, { type: string; object: AuditObjectType }>;

/** The entry types, e.g. `policy.updated`, `key.created`, `member.role_changed`. */
export const AUDIT_ENTRY_TYPES = Object.values(AUDIT_EVENT_TYPES).map((t) => t.type) as [AuditEntryType, ...AuditEntryType[]];
export type AuditEntryType = (typeof AUDIT_EVENT_TYPES)[keyof typeof AUDIT_EVENT_TYPES]['type'];

/** Formats of `GET /api/v1/audit-log`: one JSON page (default), or the whole filtered range as CSV or JSON Lines. */
export const AUDIT_FORMATS = ['json', 'csv', 'jsonl'] as const;

/** Who made a change: a signed-in person (`user`), an API key (`key`), or the platform itself (`system`). */
export const AuditActorSchema = z.object({
  type: z.enum(['user', 'key', 'system']).describe('user: a signed-in person; key: an API key; system: the platform (start-up, an agent registering through ingest has its key)'),
  id: z.string().nullable().describe('The user id or key id; null for system'),
  name: z.string().nullable().describe("The key's name or the person's e-mail at the time of the change; null when none"),
});
export type AuditActor = z.infer<typeof AuditActorSchema>;

/** One administrative change. Times are ISO 8601 UTC. */
export const AuditEntrySchema = z.object({
  id: z.string().describe('Entry id (the id of the event it records)'),
  organization_id: z.string(),
  at: z.string().describe('When the change was recorded (ISO 8601 UTC)'),
  actor: AuditActorSchema,
  object: z.object({
    type: z.enum(AUDIT_OBJECT_TYPES),
    id: z.string().describe('policy: its id; kill_switch: `organization` or `agents/<agent_id>`; agent: agent_id; mcp_server: name; mcp_tool: `<server name>/<tool name>`; key: key id; member: member id'),
  }),
  type: z.enum(AUDIT_ENTRY_TYPES).describe('What happened, e.g. policy.updated, kill_switch.engaged, key.created, member.role_changed'),
  before: z.record(z.string(), z.unknown()).nullable().describe('The object before the change; null when it did not exist. Secrets are never shown'),
  after: z.record(z.string(), z.unknown()).nullable().describe('The object after the change; null when it was deleted. Secrets are never shown'),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** The largest `limit` of one page of the audit log (and the page size of an export). */
export const AUDIT_PAGE_MAX = 500;

/**
 * Query of `GET /api/v1/audit-log`. Filters compose (AND): `actor` (`key:<id>`, `user:<id>` or `system`),
 * `object_type` and `type` (one or more, repeated or comma-separated), `object_id`, `from` / `to` (ISO 8601 date or
 * date-time; a date-only `to` includes that day). Newest first, keyset pages (`cursor`) or `skip`. `format`: `json`
 * (one page, the default), `csv` or `jsonl` (the whole filtered range, streamed; `cursor`, `skip`, `limit` ignored).
 */
export const AuditLogQuerySchema = z
  .strictObject({
    actor: z
      .string()
      .regex(/^(?:(?:key|user):[^\s]{1,256}|system)$/, 'expected key:<key id>, user:<user id> or system')
      .optional()
      .describe('Only changes by this actor: `key:<key id>`, `user:<user id>` or `system`'),
    object_type: enumFilter(AUDIT_OBJECT_TYPES).optional().describe(`One or more of ${AUDIT_OBJECT_TYPES.join(', ')} (repeat or comma-separate)`),
    object_id: z.string().min(1).max(300).optional().describe('Only changes of this object (with object_type when ids of several types could match)'),
    type: enumFilter(AUDIT_ENTRY_TYPES).optional().describe('One or more entry types, e.g. policy.updated,key.created (repeat or comma-separate)'),
    from: DateFilterSchema.optional().describe('ISO 8601 date or date-time; inclusive'),
    to: DateFilterSchema.optional().describe('ISO 8601 date (inclusive of that day) or date-time (inclusive)'),
    format: z.enum(AUDIT_FORMATS).optional().describe('json: one page (default); csv or jsonl: the whole filtered range as a download'),
    ...keysetPaginationShape(50, AUDIT_PAGE_MAX),
  })
  .superRefine((q, ctx) => {
    if (q.from && q.to && q.from.date >= endExclusive(q.to)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
  });
export type AuditLogQuery = z.infer<typeof AuditLogQuerySchema>;

/** A page of the audit log, newest first. */
export const AuditLogPageSchema = z.object({
  entries: z.array(AuditEntrySchema),
  total: z.number().int().describe('Entries matching the filters'),
  skip: z.number().int(),
  limit: z.number().int(),
  next_cursor: NextCursorSchema,
});
export type AuditLogPage = z.infer<typeof AuditLogPageSchema>;

/** CSV columns of the audit log export, in order (before and after as JSON text). */
export const AUDIT_CSV_COLUMNS = ['id', 'at', 'organization_id', 'actor_type', 'actor_id', 'actor_name', 'object_type', 'object_id', 'type', 'before', 'after'] as const;

/**
 * People who sign in through OpenID Connect: users (from the provider's `sub`), their memberships (organisation, role),
 * server-side sessions (an opaque random cookie id, only its SHA-256 stored; idle and absolute lifetimes) and the
 * pending sign-ins (state, PKCE verifier, nonce; each taken once). All in the platform database (PostgreSQL or PGlite),
 * beside the key store's organisations.
 * Source: docs/auth.md (Sessions, Roles); docs/decisions.md (People sign in through OpenID Connect).
 */
import { randomBytes } from 'node:crypto';
import { AuthEvents, memberStream, type Member, type Role } from '@agp/contracts';
import { EVENT_SCHEMA_VERSION, migrateSchema, type AppendRequest, type Sql, type SqlExecutor } from '@agp/eventstore';
import { ConflictError, NotFoundError, iso, newId } from '@agp/runtime';
import { changeMetadata, hashKey, recordChange, type ChangeRecorder, type ChangedBy } from './key-store.js';

export const PEOPLE_DDL = `
CREATE TABLE IF NOT EXISTS agp_users (
  id text PRIMARY KEY,
  issuer text NOT NULL,
  subject text NOT NULL,
  email text,
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz,
  UNIQUE (issuer, subject)
);
CREATE TABLE IF NOT EXISTS agp_memberships (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES agp_organizations(id),
  email text NOT NULL,
  user_id text REFERENCES agp_users(id),
  role text NOT NULL CHECK (role IN ('viewer', 'approver', 'policy_admin', 'admin')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, email)
);
CREATE INDEX IF NOT EXISTS agp_memberships_user ON agp_memberships (user_id);
CREATE TABLE IF NOT EXISTS agp_sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  user_id text NOT NULL REFERENCES agp_users(id),
  organization_id text NOT NULL REFERENCES agp_organizations(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE TABLE IF NOT EXISTS agp_oidc_logins (
  state_hash text PRIMARY KEY,
  code_verifier text NOT NULL,
  nonce text NOT NULL,
  return_to text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
)
`;

/** How long a started sign-in may take (login → callback), in seconds; an older state is refused. */
export const LOGIN_TTL_S = 600;

/** A session's last use is written at most once per this many seconds, so resolving a session stays a read nearly always. */
export const SESSION_TOUCH_S = 60;

/** The claims of a verified ID token (or userinfo) that a sign-in uses. */
export interface SignInClaims {
  issuer: string;
  sub: string;
  email: string | null;
  name: string | null;
}

/** A person as stored. */
export interface User {
  id: string;
  email: string | null;
  name: string | null;
}

/** One membership of a person. */
export interface Membership {
  organization_id: string;
  role: Role;
}

/** What a valid session resolves to: the person, the organisation they act in, their role there, and their memberships. */
export interface SessionPrincipal {
  session_id: string;
  user: User;
  organization_id: string;
  role: Role;
  memberships: Membership[];
  /** When the session ends at the latest (ISO 8601 UTC). */
  expires_at: string;
}

/** A pending sign-in, as saved at `/auth/login` and taken (once) at `/auth/callback`. */
export interface PendingLogin {
  codeVerifier: string;
  nonce: string;
  returnTo: string;
}

/** Lifetimes of a session, in ms. */
export interface SessionLifetimes {
  /** Ended after this long without a request (AGP_SESSION_IDLE_MINUTES). */
  idleMs: number;
  /** Ended this long after sign-in, used or not (AGP_SESSION_MAX_HOURS). */
  maxMs: number;
}

interface MemberRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  user_id: string | null;
  name: string | null;
  created_at: Date | string;
}

const MEMBER_SELECT = `SELECT m.id, m.organization_id, m.email, m.role, m.user_id, u.name, m.created_at FROM agp_memberships m LEFT JOIN agp_users u ON u.id = m.user_id`;

function member(r: MemberRow): Member {
  return { id: r.id, organization_id: r.organization_id, email: r.email, role: r.role, user_id: r.user_id, name: r.user_id ? r.name : null, status: r.user_id ? 'active' : 'invited', created_at: iso(r.created_at) };
}

/**
 * Users, memberships, sessions and pending sign-ins in the platform database. Call {@link migrate} once (after the
 * key store's, whose organisations it references).
 */
export class PeopleStore {
  /**
   * @param sql the platform database.
   * @param recorder where membership changes are recorded as events (MemberInvited, MemberJoined, MemberRoleChanged,
   *   MemberRemoved; stream `member-<member id>`, data: the member), in the transaction of the change. Sessions and
   *   pending sign-ins are not administrative changes and are never recorded.
   */
  constructor(
    private readonly sql: Sql,
    private readonly recorder?: ChangeRecorder,
  ) {}

  /** Create the tables when missing. Idempotent and safe when several processes start at once. */
  async migrate(): Promise<void> {
    await migrateSchema(this.sql, PEOPLE_DDL);
  }

  /** Save a started sign-in under the SHA-256 of its `state`, and drop sign-ins older than {@link LOGIN_TTL_S}. */
  async saveLogin(state: string, login: PendingLogin): Promise<void> {
    await this.sql.query(`DELETE FROM agp_oidc_logins WHERE created_at < now() - make_interval(secs => ${LOGIN_TTL_S})`);
    await this.sql.query('INSERT INTO agp_oidc_logins (state_hash, code_verifier, nonce, return_to) VALUES ($1, $2, $3, $4)', [hashKey(state), login.codeVerifier, login.nonce, login.returnTo]);
  }

  /** Take the sign-in `state` names (deleted in the same statement, so a replayed state finds nothing); null when unknown, used or older than {@link LOGIN_TTL_S}. */
  async takeLogin(state: string): Promise<PendingLogin | null> {
    const { rows } = await this.sql.query<{ code_verifier: string; nonce: string; return_to: string; fresh: boolean }>(
      `DELETE FROM agp_oidc_logins WHERE state_hash = $1 RETURNING code_verifier, nonce, return_to, created_at > now() - make_interval(secs => ${LOGIN_TTL_S}) AS fresh`,
      [hashKey(state)],
    );
    const r = rows[0];
    return r && r.fresh ? { codeVerifier: r.code_verifier, nonce: r.nonce, returnTo: r.return_to } : null;
  }

  /**
   * Record a sign-in: the person is found by (issuer, `sub`) or created, their e-mail and name updated; memberships
   * invited for their e-mail (not yet taken) become theirs; an e-mail in `adminEmails` becomes admin of
   * `initialOrg` (created when missing) unless it is a member there already. Returns the person and their memberships,
   * oldest first.
   */
  async signIn(claims: SignInClaims, opts: { adminEmails: readonly string[]; initialOrg: string }): Promise<{ user: User; memberships: Membership[] }> {
    const email = claims.email?.toLowerCase() ?? null;
    const user = await recordChange(this.sql, this.recorder, async (tx) => {
      const { rows } = await tx.query<User>(
        `INSERT INTO agp_users (id, issuer, subject, email, name, last_sign_in_at) VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT (issuer, subject) DO UPDATE SET email = EXCLUDED.email, name = EXCLUDED.name, last_sign_in_at = now()
         RETURNING id, email, name`,
        [newId(), claims.issuer, claims.sub, email, claims.name],
      );
      const user = rows[0];
      const events: AppendRequest[] = [];
      if (email) {
        // What the person does at sign-in is theirs: the invitations they take up, recorded with them as the actor.
        const by: ChangedBy = { actor: `user:${user.id}`, actor_name: email, organization_id: '', schema_version: EVENT_SCHEMA_VERSION };
        const { rows: taken } = await tx.query<{ id: string; organization_id: string }>('UPDATE agp_memberships SET user_id = $1 WHERE email = $2 AND user_id IS NULL RETURNING id, organization_id', [user.id, email]);
        for (const t of taken) events.push(memberEvent(AuthEvents.MemberJoined, await this.getMember(t.organization_id, t.id, tx), by));
        if (opts.adminEmails.map((e) => e.toLowerCase()).includes(email)) {
          await tx.query('INSERT INTO agp_organizations (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING', [opts.initialOrg]);
          const { rows: made } = await tx.query<{ id: string }>(
            `INSERT INTO agp_memberships (id, organization_id, email, user_id, role) VALUES ($1, $2, $3, $4, 'admin') ON CONFLICT (organization_id, email) DO NOTHING RETURNING id`,
            [newId(), opts.initialOrg, email, user.id],
          );
          // Made by the platform's configuration (AGP_ADMIN_EMAILS), not by the person.
          if (made[0]) events.push(memberEvent(AuthEvents.MemberJoined, await this.getMember(opts.initialOrg, made[0].id, tx)));
        }
      }
      return { value: user, events };
    });
    return { user, memberships: await this.membershipsOf(user.id) };
  }

  /**
   * The person the provider knows as (`issuer`, `sub`), with their memberships (oldest first), or null when they have
   * never signed in here. Reads only: an OAuth access token's subject is looked up this way on every request.
   */
  async personOfSubject(issuer: string, sub: string): Promise<{ user: User; memberships: Membership[] } | null> {
    const { rows } = await this.sql.query<User>('SELECT id, email, name FROM agp_users WHERE issuer = $1 AND subject = $2', [issuer, sub]);
    const user = rows[0];
    return user ? { user, memberships: await this.membershipsOf(user.id) } : null;
  }

  /** A person's memberships, oldest first. */
  async membershipsOf(userId: string): Promise<Membership[]> {
    const { rows } = await this.sql.query<Membership>('SELECT organization_id, role FROM agp_memberships WHERE user_id = $1 ORDER BY created_at, id', [userId]);
    return rows;
  }

  /**
   * Open a session of `userId` in `organizationId`: a random 256-bit token (the cookie's value, answered once; only its
   * SHA-256 is stored) that ends after `lifetimes.maxMs` at the latest.
   */
  async createSession(userId: string, organizationId: string, lifetimes: SessionLifetimes): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + lifetimes.maxMs);
    await this.sql.query('INSERT INTO agp_sessions (id, token_hash, user_id, organization_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [newId(), hashKey(token), userId, organizationId, expiresAt.toISOString()]);
    return { token, expiresAt };
  }

  /**
   * The principal of a session token, or null when it is unknown, revoked, past its absolute end, idle longer than
   * `lifetimes.idleMs`, or its person is no longer a member of its organisation. Notes the use (`last_seen_at`) at most
   * once per {@link SESSION_TOUCH_S} seconds, in the same statement.
   */
  async resolveSession(token: string, lifetimes: Pick<SessionLifetimes, 'idleMs'>): Promise<SessionPrincipal | null> {
    const { rows } = await this.sql.query<{ id: string; user_id: string; email: string | null; name: string | null; organization_id: string; role: Role; expires_at: Date | string }>(
      `WITH s AS (
         SELECT id, user_id, organization_id, expires_at, last_seen_at FROM agp_sessions
          WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now() AND last_seen_at > now() - make_interval(secs => $2::double precision)
       ), touched AS (
         UPDATE agp_sessions a SET last_seen_at = now() FROM s WHERE a.id = s.id AND s.last_seen_at < now() - make_interval(secs => ${SESSION_TOUCH_S})
       )
       SELECT s.id, s.user_id, u.email, u.name, s.organization_id, m.role, s.expires_at
         FROM s JOIN agp_users u ON u.id = s.user_id JOIN agp_memberships m ON m.user_id = s.user_id AND m.organization_id = s.organization_id`,
      [hashKey(token), lifetimes.idleMs / 1000],
    );
    const r = rows[0];
    if (!r) return null;
    return { session_id: r.id, user: { id: r.user_id, email: r.email, name: r.name }, organization_id: r.organization_id, role: r.role, memberships: await this.membershipsOf(r.user_id), expires_at: iso(r.expires_at) };
  }

  /**
   * Move the session of `token` to `organizationId`, where its person must be a member. Returns false (and changes
   * nothing) when the session is not live or its person is not a member there.
   */
  async switchOrganization(token: string, organizationId: string): Promise<boolean> {
    const { rows } = await this.sql.query<{ id: string }>(
      `UPDATE agp_sessions s SET organization_id = $2
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
          AND EXISTS (SELECT 1 FROM agp_memberships m WHERE m.user_id = s.user_id AND m.organization_id = $2)
        RETURNING s.id`,
      [hashKey(token), organizationId],
    );
    return rows.length === 1;
  }

  /** Revoke the session of a token (idempotent; an unknown token changes nothing). */
  async revokeSession(token: string): Promise<void> {
    await this.sql.query('UPDATE agp_sessions SET revoked_at = COALESCE(revoked_at, now()) WHERE token_hash = $1', [hashKey(token)]);
  }

  /** The organisation's members (people and invited e-mails), oldest first. */
  async listMembers(organizationId: string): Promise<Member[]> {
    const { rows } = await this.sql.query<MemberRow>(`${MEMBER_SELECT} WHERE m.organization_id = $1 ORDER BY m.created_at, m.id`, [organizationId]);
    return rows.map(member);
  }

  /**
   * Invite `email` to the organisation with `role`; a person who signed in with that e-mail before takes it up at once.
   * @throws ConflictError (409) when the e-mail is a member already.
   */
  async addMember(organizationId: string, email: string, role: Role, by?: ChangedBy): Promise<Member> {
    const e = email.toLowerCase();
    return recordChange(this.sql, this.recorder, async (tx) => {
      const { rows: user } = await tx.query<{ id: string }>('SELECT id FROM agp_users WHERE email = $1 ORDER BY created_at LIMIT 1', [e]);
      const { rows } = await tx.query<{ id: string }>(
        'INSERT INTO agp_memberships (id, organization_id, email, user_id, role) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (organization_id, email) DO NOTHING RETURNING id',
        [newId(), organizationId, e, user[0]?.id ?? null, role],
      );
      if (!rows[0]) throw new ConflictError(`${e} is a member of organisation ${organizationId} already`);
      const added = await this.getMember(organizationId, rows[0].id, tx);
      return { value: added, events: [memberEvent(AuthEvents.MemberInvited, added, by)] };
    });
  }

  /** One member of the organisation. @throws NotFoundError (404) for an unknown id or another organisation's. */
  async getMember(organizationId: string, id: string, db: SqlExecutor = this.sql): Promise<Member> {
    const { rows } = await db.query<MemberRow>(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND m.id = $2`, [organizationId, id]);
    if (!rows[0]) throw new NotFoundError(`member ${id} not found`);
    return member(rows[0]);
  }

  /**
   * Change a member's role; applies to their next request. Recorded as MemberRoleChanged by `by` (else `system`); the
   * same role again records nothing.
   * @throws NotFoundError (404) for an unknown id; ConflictError (409) when it would leave the organisation without an admin.
   */
  async updateMember(organizationId: string, id: string, role: Role, by?: ChangedBy): Promise<Member> {
    return recordChange(this.sql, this.recorder, async (tx) => {
      const current = await this.getMember(organizationId, id, tx);
      if (current.role === role) return { value: current, events: [] };
      if (current.role === 'admin') await this.keepAnAdmin(organizationId, id, tx);
      await tx.query('UPDATE agp_memberships SET role = $3 WHERE organization_id = $1 AND id = $2', [organizationId, id, role]);
      const changed = { ...current, role };
      return { value: changed, events: [memberEvent(AuthEvents.MemberRoleChanged, changed, by)] };
    });
  }

  /**
   * Remove a member; their sessions in the organisation are revoked. Recorded as MemberRemoved by `by` (else `system`).
   * @throws NotFoundError (404) for an unknown id; ConflictError (409) for the organisation's last admin.
   */
  async removeMember(organizationId: string, id: string, by?: ChangedBy): Promise<Member> {
    return recordChange(this.sql, this.recorder, async (tx) => {
      const current = await this.getMember(organizationId, id, tx);
      if (current.role === 'admin') await this.keepAnAdmin(organizationId, id, tx);
      await tx.query('DELETE FROM agp_memberships WHERE organization_id = $1 AND id = $2', [organizationId, id]);
      if (current.user_id) await tx.query('UPDATE agp_sessions SET revoked_at = COALESCE(revoked_at, now()) WHERE user_id = $1 AND organization_id = $2', [current.user_id, organizationId]);
      return { value: current, events: [memberEvent(AuthEvents.MemberRemoved, current, by)] };
    });
  }

  /**
   * @throws ConflictError (409) when member `id` is the organisation's only admin. Takes the organisation's admin rows'
   * locks, so two concurrent demotions of its last two admins cannot both pass.
   */
  private async keepAnAdmin(organizationId: string, id: string, db: SqlExecutor): Promise<void> {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM agp_memberships WHERE organization_id = $1 AND role = 'admin' AND id <> $2 FOR UPDATE`, [organizationId, id]);
    if (rows.length === 0) throw new ConflictError('the last admin of the organisation cannot lose the admin role; make another member admin first');
  }

  /** The organisation a first admin is made in when none is configured: the oldest one, or null when there is none. */
  async oldestOrganization(): Promise<string | null> {
    const { rows } = await this.sql.query<{ id: string }>('SELECT id FROM agp_organizations ORDER BY created_at, id LIMIT 1');
    return rows[0]?.id ?? null;
  }
}

/** The append of one member event: the member after the change (as it was, for a removal), in its organisation. */
function memberEvent(type: string, m: Member, by?: ChangedBy): AppendRequest {
  return { stream_id: memberStream(m.id), events: [{ event_id: newId(), type, data: { member: m }, metadata: changeMetadata(m.organization_id, by) }] };
}

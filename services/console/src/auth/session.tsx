/**
 * The signed-in session, of one of two kinds:
 * - an API key, kept in `sessionStorage` (it lives as long as the tab and is never written to disk by the console),
 *   with what `GET /api/v1/auth/key` says of it (its name and scope: read, write or admin);
 * - a person signed in through the organisation's OpenID provider: the platform's `HttpOnly` session cookie
 *   authenticates (the console never sees it), and `GET /api/v1/auth/me` names the person, their role and
 *   organisations. A person in several organisations switches between them here (`PUT /api/v1/auth/session`).
 * Also the API client bound to it, and sign-in / sign-out. Any 401 from the API signs out and shows why on the sign-in
 * page. Source: the console's sign-in (docs/decisions.md); docs/auth.md; architecture §4 (Auth).
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { createApiClient, fetchCallerKey, fetchSignedInPerson, fetchSignInConfig, ProblemError, type ApiClient } from '../api/client.js';
import type { AuthConfig, AuthMe, CallerKey } from '../api/types.js';

/** sessionStorage keys of the session: the key itself, and what the API said of it at sign-in (JSON). */
const KEY_ITEM = 'agp.console.key';
const INFO_ITEM = 'agp.console.key-info';

/** A key's scope (a person's role, mapped onto it): a read scope sees every page; write actions need write or admin. */
export type Scope = CallerKey['scope'];

/** A person's role. */
export type Role = AuthMe['role'];

/** The scope a person's role acts with in the console's write controls: a viewer reads; an approver and up may act (the API checks each role). */
const ROLE_SCOPE: Record<Role, Scope> = { viewer: 'read', approver: 'write', policy_admin: 'write', admin: 'admin' };

/** What {@link useSession} gives a page. */
export interface Session {
  /** The API client of the session (a client without credentials before sign-in; pages only render after it). */
  api: ApiClient;
  /** Whether a key or a person is signed in. */
  signedIn: boolean;
  /** True while the console asks how sign-in works here and whether a session cookie signs a person in (at start). */
  checking: boolean;
  /** How people sign in here (`GET /auth/config`); null until known. */
  signInConfig: AuthConfig | null;
  /** The signed-in key itself (null for a person or before sign-in), for the rare page that must show it on request (the MCP client config). */
  key: string | null;
  /** The signed-in person (null for a key): who, their role here, their organisations. */
  person: AuthMe | null;
  /** The key's scope, or the person's role mapped onto it (`read` until known). */
  scope: Scope;
  /** The key's name (null for a key made without one, a person, or before sign-in). */
  keyName: string | null;
  /** Why a write action is disabled for this session, or null when it may write. */
  readOnlyReason: string | null;
  /** Why an admin-only action (Slack connection, audit erasure and retention) is disabled, or null for an admin key or role. */
  notAdminReason: string | null;
  /** Why the last session ended (a 401), shown on the sign-in page; null otherwise. */
  endedBecause: string | null;
  /**
   * Check `key` against the API (`GET /api/v1/auth/key`: its name and scope) and keep it.
   * @throws ProblemError when the key is refused (401: wrong, revoked or expired) or the platform does not answer.
   */
  signIn(key: string): Promise<void>;
  /** Forget the key, or sign the person out (`POST /auth/logout`), and every cached answer. */
  signOut(): void;
  /** Act in another of the person's organisations. @throws ProblemError (403 when not a member there). */
  switchOrganization(organizationId: string): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

/** The text a disabled write control shows (title and accessible description). */
export const READ_ONLY_REASON = 'Signed in with a read key: this action changes data and needs a write key. Sign out and sign in with a write key to use it.';
/** The same for a person whose role is viewer. */
export const VIEWER_REASON = 'You are a viewer in this organisation: this action changes data. Ask an admin for the approver or policy admin role.';
/** The text a disabled admin-only control shows for a read or write key. */
export const NOT_ADMIN_KEY_REASON = 'This needs an admin key: sign out and sign in with an admin key to use it.';
/** The same for a person whose role is not admin. */
export const NOT_ADMIN_ROLE_REASON = 'This needs the admin role in this organisation: ask an admin.';

function stored(item: string): string | null {
  try {
    return sessionStorage.getItem(item);
  } catch {
    return null;
  }
}

/** What sign-in stored of the key, or null (none, or unreadable). */
function storedInfo(): Pick<CallerKey, 'name' | 'scope'> | null {
  try {
    const info = JSON.parse(stored(INFO_ITEM) ?? 'null') as Partial<CallerKey> | null;
    return info && (info.scope === 'read' || info.scope === 'write' || info.scope === 'admin') ? { name: typeof info.name === 'string' ? info.name : null, scope: info.scope } : null;
  } catch {
    return null;
  }
}

/** Provides the {@link Session} to the app. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [key, setKey] = useState<string | null>(() => stored(KEY_ITEM));
  const [info, setInfo] = useState<Pick<CallerKey, 'name' | 'scope'>>(() => storedInfo() ?? { name: null, scope: 'read' });
  const [person, setPerson] = useState<AuthMe | null>(null);
  const [checking, setChecking] = useState(true);
  const [endedBecause, setEndedBecause] = useState<string | null>(null);
  const personRef = useRef(person);
  personRef.current = person;

  const [config, setConfig] = useState<AuthConfig | null>(null);
  // What sign-in offers (an older platform or a failed request: keys, which always work); then, without a key and with
  // people's sign-in on, whether a session cookie already signs a person in (back from the provider, or a reload).
  useEffect(() => {
    let live = true;
    fetchSignInConfig()
      .catch((): AuthConfig => ({ mode: 'keys', sign_in_url: null, provider: null }))
      .then(async (c) => {
        if (!live) return;
        setConfig(c);
        // A key kept in this tab decides who is signed in; only without one may a cookie sign a person in.
        if (stored(KEY_ITEM) === null && c.mode !== 'keys') {
          const me = await fetchSignedInPerson().catch(() => null);
          if (live) setPerson(me);
        }
      })
      .finally(() => live && setChecking(false));
    return () => {
      live = false;
    };
    // Once, at start.
  }, []);

  const signOut = useCallback(
    (because: string | null = null) => {
      sessionStorage.removeItem(KEY_ITEM);
      sessionStorage.removeItem(INFO_ITEM);
      setKey(null);
      setInfo({ name: null, scope: 'read' });
      // The person's session is revoked at the platform; after a 401 it is gone already.
      if (personRef.current && because === null) void createApiClient({ key: null }).post('/auth/logout').catch(() => undefined);
      setPerson(null);
      setEndedBecause(because);
      queryClient.clear();
    },
    [queryClient],
  );

  const api = useMemo(
    () =>
      createApiClient({
        key,
        onUnauthorized: (p: ProblemError) => signOut(`Your session ended: the API answered ${p.status} ${p.title}${p.detail ? ` (${p.detail})` : ''}. Sign in again.`),
      }),
    [key, signOut],
  );

  const signIn = useCallback(
    async (candidate: string) => {
      const me = await fetchCallerKey(createApiClient({ key: candidate }));
      const next = { name: me.name, scope: me.scope };
      sessionStorage.setItem(KEY_ITEM, candidate);
      sessionStorage.setItem(INFO_ITEM, JSON.stringify(next));
      queryClient.clear();
      setEndedBecause(null);
      setPerson(null);
      setInfo(next);
      setKey(candidate);
    },
    [queryClient],
  );

  const switchOrganization = useCallback(
    async (organizationId: string) => {
      const me = await api.put<AuthMe>('/api/v1/auth/session', { organization_id: organizationId });
      queryClient.clear();
      setPerson(me);
    },
    [api, queryClient],
  );

  const value = useMemo<Session>(() => {
    const scope = person ? ROLE_SCOPE[person.role] : info.scope;
    const readOnlyReason = scope !== 'read' ? null : person ? VIEWER_REASON : READ_ONLY_REASON;
    const notAdminReason = scope === 'admin' ? null : person ? NOT_ADMIN_ROLE_REASON : NOT_ADMIN_KEY_REASON;
    return {
      api,
      signedIn: key !== null || person !== null,
      checking,
      signInConfig: config,
      key,
      person,
      scope,
      keyName: person ? null : info.name,
      readOnlyReason,
      notAdminReason,
      endedBecause,
      signIn,
      signOut: () => signOut(null),
      switchOrganization,
    };
  }, [api, key, person, checking, config, info, endedBecause, signIn, signOut, switchOrganization]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The current {@link Session}. @throws Error outside {@link SessionProvider}. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

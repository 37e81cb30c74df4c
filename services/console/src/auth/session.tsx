/**
 * The signed-in session: the API key (kept in `sessionStorage`, so it lives as long as the tab and is never written to
 * disk by the console), what `GET /api/v1/auth/key` says of it (its name and scope: read, write or admin), the API
 * client bound to it, and sign-in / sign-out. Any 401 from the API signs out and shows why on the sign-in page.
 * Source: the console's sign-in (docs/decisions.md); architecture §4 (Auth).
 */
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { createApiClient, fetchCallerKey, ProblemError, type ApiClient } from '../api/client.js';
import type { CallerKey } from '../api/types.js';

/** sessionStorage keys of the session: the key itself, and what the API said of it at sign-in (JSON). */
const KEY_ITEM = 'agp.console.key';
const INFO_ITEM = 'agp.console.key-info';

/** A key's scope: a read key sees every page; write actions need a write (or admin) key. */
export type Scope = CallerKey['scope'];

/** What {@link useSession} gives a page. */
export interface Session {
  /** The API client with the signed-in key (a client without a key before sign-in; pages only render after it). */
  api: ApiClient;
  /** Whether a key is signed in. */
  signedIn: boolean;
  /** The signed-in key itself (null before sign-in), for the rare page that must show it on request (the MCP client config). */
  key: string | null;
  /** The key's scope (`read` until known). */
  scope: Scope;
  /** The key's name (null for a key made without one, or before sign-in). */
  keyName: string | null;
  /** Why a write action is disabled for this key, or null when the key may write. */
  readOnlyReason: string | null;
  /** Why the last session ended (a 401), shown on the sign-in page; null otherwise. */
  endedBecause: string | null;
  /**
   * Check `key` against the API (`GET /api/v1/auth/key`: its name and scope) and keep it.
   * @throws ProblemError when the key is refused (401: wrong, revoked or expired) or the platform does not answer.
   */
  signIn(key: string): Promise<void>;
  /** Forget the key (and every cached answer). */
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

/** The text a disabled write control shows (title and accessible description). */
export const READ_ONLY_REASON = 'Signed in with a read key: this action changes data and needs a write key. Sign out and sign in with a write key to use it.';

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
  const [endedBecause, setEndedBecause] = useState<string | null>(null);

  const signOut = useCallback(
    (because: string | null = null) => {
      sessionStorage.removeItem(KEY_ITEM);
      sessionStorage.removeItem(INFO_ITEM);
      setKey(null);
      setInfo({ name: null, scope: 'read' });
      setEndedBecause(because);
      queryClient.clear();
    },
    [queryClient],
  );

  const api = useMemo(
    () =>
      createApiClient({
        key: key ?? '',
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
      setInfo(next);
      setKey(candidate);
    },
    [queryClient],
  );

  const value = useMemo<Session>(
    () => ({ api, signedIn: key !== null, key, scope: info.scope, keyName: info.name, readOnlyReason: info.scope === 'read' ? READ_ONLY_REASON : null, endedBecause, signIn, signOut: () => signOut(null) }),
    [api, key, info, endedBecause, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The current {@link Session}. @throws Error outside {@link SessionProvider}. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

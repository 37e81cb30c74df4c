/**
 * The signed-in session: the API key (kept in `sessionStorage`, so it lives as long as the tab and is never written to
 * disk by the console), the scope the key has (read or write), the API client bound to it, and sign-in / sign-out.
 * Any 401 from the API signs out and shows why on the sign-in page. Source: issue #15 point 2.
 */
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { createApiClient, probeScope, ProblemError, type ApiClient } from '../api/client.js';

/** sessionStorage keys of the session. */
const KEY_ITEM = 'agp.console.key';
const SCOPE_ITEM = 'agp.console.scope';

/** A key's scope: a read key sees every page; write actions need a write key. */
export type Scope = 'read' | 'write';

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
  /** Why a write action is disabled for this key, or null when the key may write. */
  readOnlyReason: string | null;
  /** Why the last session ended (a 401), shown on the sign-in page; null otherwise. */
  endedBecause: string | null;
  /**
   * Check `key` against the API (a cheap authenticated read, then the scope probe) and keep it.
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

/** Provides the {@link Session} to the app. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [key, setKey] = useState<string | null>(() => stored(KEY_ITEM));
  const [scope, setScope] = useState<Scope>(() => (stored(SCOPE_ITEM) === 'write' ? 'write' : 'read'));
  const [endedBecause, setEndedBecause] = useState<string | null>(null);

  const signOut = useCallback(
    (because: string | null = null) => {
      sessionStorage.removeItem(KEY_ITEM);
      sessionStorage.removeItem(SCOPE_ITEM);
      setKey(null);
      setScope('read');
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
      const trial = createApiClient({ key: candidate });
      await trial.get('/api/v1/approvals', { limit: 1 });
      const s = await probeScope(trial);
      sessionStorage.setItem(KEY_ITEM, candidate);
      sessionStorage.setItem(SCOPE_ITEM, s);
      queryClient.clear();
      setEndedBecause(null);
      setScope(s);
      setKey(candidate);
    },
    [queryClient],
  );

  const value = useMemo<Session>(
    () => ({ api, signedIn: key !== null, key, scope, readOnlyReason: scope === 'write' ? null : READ_ONLY_REASON, endedBecause, signIn, signOut: () => signOut(null) }),
    [api, key, scope, endedBecause, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The current {@link Session}. @throws Error outside {@link SessionProvider}. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

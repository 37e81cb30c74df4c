/**
 * The shell around every page: the header (product name, the key's name and scope, sign out), the navigation to the nine
 * pages, and the main region. Also renders, once, the hidden text that disabled write controls point at.
 */
import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useSession, type Scope } from '../auth/session.js';
import { READ_ONLY_REASON_ID } from '../components/WriteButton.js';
import { ROUTES } from './routes.js';

/** The badge text of each scope. */
const SCOPE_LABEL: Record<Scope, string> = { read: 'read-only key', write: 'write key', admin: 'admin key' };
/** The badge's title of each scope (a read key's is the read-only reason). */
const SCOPE_TITLE: Partial<Record<Scope, string>> = { write: 'This key may change data', admin: 'This key may change data and manage API keys' };

/** The page frame: header (the key's name and scope), navigation, main content. */
export function Layout({ children }: { children: ReactNode }) {
  const { scope, keyName, readOnlyReason, signOut } = useSession();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">AGP console</span>
        <span className="key-name" title="The name of the signed-in API key">
          {keyName ?? 'unnamed key'}
        </span>
        <span className={`scope-badge scope-${scope}`} title={SCOPE_TITLE[scope] ?? readOnlyReason ?? undefined}>
          {SCOPE_LABEL[scope]}
        </span>
        <button type="button" className="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav className="sidenav" aria-label="Console">
        <ul>
          {ROUTES.filter((r) => r.nav).map((r) => (
            <li key={r.path}>
              <NavLink to={r.path} end={r.path === '/' || r.path === '/evals'}>
                {r.nav}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
      <span id={READ_ONLY_REASON_ID} className="visually-hidden">
        {readOnlyReason ?? ''}
      </span>
    </div>
  );
}

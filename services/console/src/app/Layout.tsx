/**
 * The shell around every page: the header (product name, the key's name and scope or the person, their organisation
 * (a switcher when they have several) and role, sign out), the navigation to the pages, and the main region. Also
 * renders, once, the hidden texts that disabled write and admin-only controls point at.
 */
import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useSession, type Role, type Scope } from '../auth/session.js';
import { NOT_ADMIN_REASON_ID, READ_ONLY_REASON_ID } from '../components/WriteButton.js';
import { ROUTES } from './routes.js';

/** The badge text of each scope. */
const SCOPE_LABEL: Record<Scope, string> = { read: 'read-only key', write: 'write key', admin: 'admin key' };
/** The badge's title of each scope (a read key's is the read-only reason). */
const SCOPE_TITLE: Partial<Record<Scope, string>> = { write: 'This key may change data', admin: 'This key may change data and manage API keys' };

/** The badge text of each role of a signed-in person. */
const ROLE_LABEL: Record<Role, string> = { viewer: 'viewer', approver: 'approver', policy_admin: 'policy admin', admin: 'admin' };

/** The page frame: header (the key's name and scope), navigation, main content. */
export function Layout({ children }: { children: ReactNode }) {
  const { scope, keyName, person, readOnlyReason, notAdminReason, signOut, switchOrganization } = useSession();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">AGP console</span>
        {person ? (
          <>
            <span className="key-name" title="The signed-in person">
              {person.user?.email ?? person.user?.name ?? 'signed in'}
            </span>
            {person.memberships.length > 1 ? (
              <select aria-label="Organisation" className="org-switch" value={person.organization_id} onChange={(e) => void switchOrganization(e.target.value).catch(() => undefined)}>
                {person.memberships.map((m) => (
                  <option key={m.organization_id} value={m.organization_id}>
                    {m.organization_id}
                  </option>
                ))}
              </select>
            ) : (
              <span className="org-name" title="The organisation you act in">
                {person.organization_id}
              </span>
            )}
            <span className={`scope-badge scope-${scope}`} title={readOnlyReason ?? `Your role in ${person.organization_id}`}>
              {ROLE_LABEL[person.role]}
            </span>
          </>
        ) : (
          <>
            <span className="key-name" title="The name of the signed-in API key">
              {keyName ?? 'unnamed key'}
            </span>
            <span className={`scope-badge scope-${scope}`} title={SCOPE_TITLE[scope] ?? readOnlyReason ?? undefined}>
              {SCOPE_LABEL[scope]}
            </span>
          </>
        )}
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
      <span id={NOT_ADMIN_REASON_ID} className="visually-hidden">
        {notAdminReason ?? ''}
      </span>
    </div>
  );
}

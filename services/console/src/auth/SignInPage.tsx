/**
 * Sign-in, as the platform offers it (`GET /auth/config`): through the organisation's OpenID provider (a link to
 * `/auth/login`, back to the page the person was on), by pasting an API key, or both. A key is checked against the API
 * before it is kept; a refused key shows the problem's title and detail ("Unauthorized: unknown, revoked or expired API
 * key"). After a 401 the page says why the session ended.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { ProblemMessage } from '../components/States.js';
import { useSession } from './session.js';

/** The sign-in page. */
export function SignInPage() {
  const { signIn, endedBecause, checking, signInConfig: config } = useSession();
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = 'Sign in · AGP console';
  }, []);

  if (checking || !config) {
    return (
      <main className="sign-in" id="main">
        <h1>Sign in to the AGP console</h1>
        <p role="status">Checking your session…</p>
      </main>
    );
  }
  const returnTo = `${window.location.pathname}${window.location.search}`;
  const provider = config.sign_in_url ? (
    <p>
      <a className="sso" href={`${config.sign_in_url}?return_to=${encodeURIComponent(returnTo)}`}>
        Sign in with your organisation’s account
      </a>{' '}
      <span className="muted">({config.provider})</span>
    </p>
  ) : null;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const k = key.trim();
    if (!k) {
      setError(new Error('Paste an API key (it starts with agp_).'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await signIn(k);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  if (config.mode === 'oidc') {
    return (
      <main className="sign-in" id="main">
        <h1>Sign in to the AGP console</h1>
        {endedBecause ? (
          <p className="notice" role="status">
            {endedBecause}
          </p>
        ) : null}
        {provider}
        <p className="muted">Programs (agents, CI) use API keys; people sign in with the organisation’s identity provider.</p>
      </main>
    );
  }

  return (
    <main className="sign-in" id="main">
      <h1>Sign in to the AGP console</h1>
      {provider}
      <p>
        Paste an API key. On first start the platform prints a write key, a read key and an admin key (also saved to <code>first-run-keys.json</code>{' '}
        in its data folder); an admin key makes more (<code>POST /api/v1/keys</code>). A read key sees every page; changing anything needs a write key.
      </p>
      {endedBecause ? (
        <p className="notice" role="status">
          {endedBecause}
        </p>
      ) : null}
      <form onSubmit={submit} className="sign-in-form">
        <label htmlFor="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" spellCheck={false} value={key} onChange={(e) => setKey(e.target.value)} placeholder="agp_…" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      {error ? (
        <div className="sign-in-error">
          <p>That key was not accepted.</p>
          <ProblemMessage error={error} />
        </div>
      ) : null}
      <p className="muted">The key is kept in this tab's session storage only, and sent to this platform's API as a bearer token.</p>
    </main>
  );
}

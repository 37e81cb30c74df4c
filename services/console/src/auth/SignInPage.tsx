/**
 * Sign-in: paste an API key. It is checked against the API before it is kept; a refused key shows the problem's title
 * and detail ("Unauthorized: unknown, revoked or expired API key"). After a 401 the page says why the session ended.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { ProblemMessage } from '../components/States.js';
import { useSession } from './session.js';

/** The sign-in form. */
export function SignInPage() {
  const { signIn, endedBecause } = useSession();
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = 'Sign in · AGP console';
  }, []);

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

  return (
    <main className="sign-in" id="main">
      <h1>Sign in to the AGP console</h1>
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

import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post } from '../api';
import { navigate } from '../router';
import { type Session, signedIn } from '../session';
import { Button, ErrorNote, Field } from '../ui';

/** A path of this console to go to after signing in: `next` when it stays on this origin, else Home. */
export function ownPath(next: string | null): string {
  if (!next?.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  try {
    const url = new URL(next, location.origin);
    return url.origin === location.origin ? `${url.pathname}${url.search}${url.hash}` : '/';
  } catch {
    return '/';
  }
}

/**
 * Email and password (and the authenticator's code when the second factor is on), or the account's OpenID provider.
 * `?step=code`: the provider signed the person in and their own second factor is still asked for.
 */
export function SignIn() {
  const query = new URLSearchParams(location.search);
  const next = ownPath(query.get('next'));
  const codeStep = query.get('step') === 'code';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<string | null>(null);

  useEffect(() => {
    const account = query.get('account');
    get<{ oidc: { startUrl: string } | null }>(`/v1/auth/sign-in/options${account ? `?account=${encodeURIComponent(account)}` : ''}`)
      .then((o) => setOidc(o.oidc?.startUrl ?? null))
      .catch(() => setOidc(null));
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = codeStep
        ? await post<Session>('/v1/auth/sign-in/second-factor', { code })
        : await post<Session>('/v1/auth/sign-in', { email, password, ...(needsCode ? { code } : {}) });
      signedIn(session);
      navigate(next, true);
    } catch (err) {
      if (!codeStep && err instanceof ApiError && err.attributes.reason === 'second-factor' && !needsCode) {
        setNeedsCode(true);
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  }

  const safeNext = next;
  if (codeStep) {
    return (
      <main id="content" class="signin">
        <h1>One more step</h1>
        <form onSubmit={submit} class="card" aria-describedby="signin-error">
          <p>Your organisation's provider signed you in. Your own second factor is on: enter the code your authenticator app shows.</p>
          <Field
            label="Authenticator code"
            hint="The 6 digits your app shows, or a recovery code"
            error={error instanceof ApiError ? error.fields.code : undefined}
          >
            <input
              name="code"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              // biome-ignore lint/a11y/noAutofocus: the field appears because the person asked for it: the next thing they type
              autoFocus
              value={code}
              onInput={(e) => setCode((e.target as HTMLInputElement).value)}
            />
          </Field>
          <div id="signin-error">
            <ErrorNote error={error} />
          </div>
          <Button kind="primary" type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </Button>
        </form>
        <p>
          <a
            href="/sign-in"
            onClick={(e) => {
              e.preventDefault();
              navigate('/sign-in');
            }}
          >
            Start again
          </a>
        </p>
      </main>
    );
  }
  return (
    <main id="content" class="signin">
      <h1>Sign in</h1>
      <form onSubmit={submit} class="card" aria-describedby="signin-error">
        <Field label="Email">
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Password">
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </Field>
        {needsCode && (
          <Field
            label="Authenticator code"
            hint="The 6 digits your app shows, or a recovery code"
            error={error instanceof ApiError ? error.fields.code : undefined}
          >
            <input
              name="code"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              // biome-ignore lint/a11y/noAutofocus: the field appears because the person asked for it: the next thing they type
              autoFocus
              value={code}
              onInput={(e) => setCode((e.target as HTMLInputElement).value)}
            />
          </Field>
        )}
        <div id="signin-error">
          <ErrorNote error={error} />
        </div>
        <Button kind="primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
      {oidc && (
        <>
          <p class="or">or</p>
          <a class="btn btn-secondary" href={`${oidc}?redirect=${encodeURIComponent(safeNext)}`}>
            Sign in with your organisation's provider
          </a>
        </>
      )}
      <p>
        <a
          href="/reset-password"
          onClick={(e) => {
            e.preventDefault();
            navigate('/reset-password');
          }}
        >
          Forgot your password?
        </a>
      </p>
    </main>
  );
}

import { useState } from 'preact/hooks';
import { ApiError, post } from '../api';
import { time } from '../format';
import { valueLabel } from '../forms/words';
import { Link, navigate } from '../router';
import { loadSession } from '../session';
import { Button, ErrorNote, Field, useData } from '../ui';

/** Pages a mail links to, reached without a session: accepting an invitation, setting a new password. */
interface InvitationPreview {
  accountName: string;
  inviter: string;
  email: string;
  role: string;
  expiresAt: string;
}

export function AcceptInvitation() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const preview = useData(
    () => (token ? post<InvitationPreview>('/v1/invitations/preview', { token }) : Promise.reject(new Error('This link has no invitation in it.'))),
    [token],
  );
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fieldError = (k: string) => (error instanceof ApiError ? error.fields[k] : undefined);
  return (
    <main id="content" class="signin">
      <h1>{preview.data ? `Join ${preview.data.accountName}` : 'Join the account'}</h1>
      {preview.data && (
        <p>
          {preview.data.inviter} invites you ({preview.data.email}) to {preview.data.accountName} as {valueLabel(preview.data.role)}. The link works once, until{' '}
          {time(preview.data.expiresAt)}.
        </p>
      )}
      <ErrorNote error={preview.error} />
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          post('/v1/invitations/accept', { token, ...(name ? { name } : {}), ...(password ? { password } : {}) })
            .then(async () => {
              await loadSession();
              navigate('/', true);
            }, setError)
            .finally(() => setBusy(false));
        }}
      >
        <p>Choose your name and a password (if you already have one here, give it).</p>
        <Field label="Your name">
          <input autoComplete="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Password" hint="At least 10 characters, not a common one" error={fieldError('password')}>
          <input type="password" autoComplete="new-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </Field>
        <ErrorNote error={error} />
        <Button kind="primary" type="submit" disabled={busy || !token || Boolean(preview.error)}>
          Join
        </Button>
      </form>
      <p>
        <Link href="/sign-in">Sign in instead</Link>
      </p>
    </main>
  );
}

export function ResetPassword() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const fieldError = (k: string) => (error instanceof ApiError ? error.fields[k] : undefined);
  if (!token) {
    return (
      <main id="content" class="signin">
        <h1>Reset your password</h1>
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            setError(null);
            post('/v1/auth/password-reset', { email }).then(
              () => setDone('If a person here has this address, a link to set a new password is on its way (valid one hour).'),
              setError,
            );
          }}
        >
          <Field label="Email">
            <input type="email" autoComplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          </Field>
          <ErrorNote error={error} />
          {done && <p role="status">{done}</p>}
          <Button kind="primary" type="submit">
            Send the link
          </Button>
        </form>
        <p>
          <Link href="/sign-in">Back to sign-in</Link>
        </p>
      </main>
    );
  }
  return (
    <main id="content" class="signin">
      <h1>Set a new password</h1>
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          post('/v1/auth/password-reset/confirm', { token, password }).then(
            () => setDone('Your password is set, and every session of yours was signed out. Sign in with it.'),
            setError,
          );
        }}
      >
        <Field label="New password" hint="At least 10 characters, not a common one" error={fieldError('password')}>
          <input type="password" autoComplete="new-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </Field>
        <ErrorNote error={error} />
        {done ? (
          <p role="status">
            {done} <Link href="/sign-in">Sign in</Link>
          </p>
        ) : (
          <Button kind="primary" type="submit">
            Set password
          </Button>
        )}
      </form>
    </main>
  );
}

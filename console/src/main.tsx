import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { type ComponentChildren, render } from 'preact';
import { useEffect, useErrorBoundary } from 'preact/hooks';
import { onUnauthorized } from './api';
import { valueLabel } from './forms/words';
import { Link, match, navigate, useLocation } from './router';
import { SCREENS } from './screens';
import { loadSession, signOut, switchAccount, useSession } from './session';
import { applyTheme, ThemeToggle } from './theme';
import { Loading } from './ui';

/** A screen that fails to draw says so (with the reason) instead of leaving a blank page. */
function Guard({ children, path }: { children: ComponentChildren; path: string }) {
  const [error, reset] = useErrorBoundary();
  useEffect(() => reset(), [path]);
  if (error)
    return (
      <p class="error" role="alert">
        This screen failed to draw: {String((error as Error).message ?? error)}. <a href={path}>Reload it</a>.
      </p>
    );
  return <>{children}</>;
}

/** The frame: who is signed in and for which account, the screens, and the screen the address names. */
function App() {
  const session = useSession();
  const { path } = useLocation();

  useEffect(() => onUnauthorized(() => void loadSession().then((s) => !s && toSignIn())), []);
  const route = SCREENS.find((s) => match(s.path, path));
  useEffect(() => {
    if (session === null && !route?.public) toSignIn();
  }, [session, path]);

  if (route?.public) {
    const Public = route.component;
    return <Public params={{}} />;
  }
  if (session === undefined)
    return (
      <main>
        <Loading what="Signing in" />
      </main>
    );
  if (!session) {
    const SignIn = SCREENS.find((s) => s.path === '/sign-in')!.component;
    return <SignIn params={{}} />;
  }
  const params = route ? match(route.path, path)! : {};
  const Screen = route?.component;
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="topbar">
        <Link class="brand" href="/">
          Monitoring
        </Link>
        {session.accounts.length > 1 && (
          <label>
            <span class="skip">Account</span>
            <select
              aria-label="Account"
              value={session.account?.id}
              onChange={(e) => void switchAccount((e.target as HTMLSelectElement).value).then(() => navigate('/'))}
            >
              {session.accounts.map((a) => (
                <option value={a.id}>{a.name}</option>
              ))}
            </select>
          </label>
        )}
        {session.accounts.length <= 1 && <span class="muted">{session.account?.name}</span>}
        <span class="spacer" />
        <ThemeToggle />
        <Link href="/settings/profile" title={session.user.email}>
          {session.user.name || session.user.email}
        </Link>
        <span class="muted hide-narrow">{session.account ? valueLabel(session.account.role) : ''}</span>
        <button class="btn" type="button" onClick={() => void signOut().then(() => navigate('/sign-in'))}>
          Sign out
        </button>
      </header>
      <nav class="main" aria-label="Main">
        {SCREENS.filter((s) => s.nav).map((s) => (
          <Link
            href={s.nav!.href}
            aria-current={(s.nav!.href === '/' ? path === '/' || path.startsWith('/checks') : path.startsWith(s.nav!.href)) ? 'page' : undefined}
          >
            {s.nav!.label}
          </Link>
        ))}
      </nav>
      <main id="content" tabIndex={-1}>
        {session.secondFactorRequired && path !== '/settings/profile' ? (
          <p class="error" role="alert">
            This account requires a second factor. <Link href="/settings/profile">Turn yours on</Link> to use it.
          </p>
        ) : Screen ? (
          <Guard path={path}>
            <Screen params={params} />
          </Guard>
        ) : (
          <>
            <h1>Not found</h1>
            <p>
              Nothing lives at {path}. <Link href="/">Go to the checks</Link>.
            </p>
          </>
        )}
      </main>
    </>
  );
}

function toSignIn() {
  const here = location.pathname + location.search;
  // On the sign-in page already (its ?step=code after a provider, its ?next): it stays as it is.
  if (location.pathname === '/sign-in') return;
  navigate(here === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, true);
}

applyTheme();
void loadSession().finally(() => render(<App />, document.getElementById('app')!));

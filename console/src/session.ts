import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, setSession } from './api';

export type Role = 'OWNER' | 'ADMIN' | 'READ_WRITE' | 'READ_RUN' | 'READ_ONLY';

export interface Session {
  user: { id: string; email: string; name: string; twoFactorEnabled: boolean };
  account: { id: string; name: string; role: Role; may: { run: boolean; write: boolean; admin: boolean } } | null;
  accounts: { id: string; name: string }[];
  csrfToken: string | null;
  secondFactorRequired: boolean;
  /** Signed in through this account's provider: the session acts for it only. */
  onlyAccountId?: string;
}

/** The signed-in member (or null), shared by every screen; the account they act for is remembered per browser. */
let current: Session | null | undefined;
const listeners = new Set<() => void>();
const ACCOUNT_KEY = 'console.account';

function publish(s: Session | null) {
  current = s;
  setSession(s?.csrfToken ?? null, s?.account?.id ?? null);
  if (s?.account) localStorage.setItem(ACCOUNT_KEY, s.account.id);
  listeners.forEach((fn) => fn());
}

/** Loads who is signed in (for the remembered account, when they are still a member of it). */
export async function loadSession(): Promise<Session | null> {
  const remembered = localStorage.getItem(ACCOUNT_KEY);
  try {
    setSession(null, remembered);
    publish(await get<Session>('/v1/auth/session'));
  } catch (err) {
    if (err instanceof ApiError && err.status === 403 && remembered) {
      localStorage.removeItem(ACCOUNT_KEY);
      return loadSession();
    }
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) publish(null);
    else throw err;
  }
  return current ?? null;
}

export function signedIn(s: Session): void {
  publish(s);
}

export async function switchAccount(id: string): Promise<void> {
  localStorage.setItem(ACCOUNT_KEY, id);
  await loadSession();
}

export async function signOut(): Promise<void> {
  await post('/v1/auth/sign-out').catch(() => undefined);
  publish(null);
}

export function useSession(): Session | null | undefined {
  const [, set] = useState(0);
  useEffect(() => {
    const fn = () => set((n) => n + 1);
    listeners.add(fn);
    return () => void listeners.delete(fn);
  }, []);
  return current;
}

/** What the member's role may do here, as the session says (the API refuses anyway; the console hides what it would refuse). */
export const can = (s: Session | null | undefined, what: 'run' | 'write' | 'admin' | 'owner') =>
  what === 'owner' ? s?.account?.role === 'OWNER' : !!s?.account?.may[what];

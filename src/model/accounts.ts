import type { Role } from './secrets.js';

/** The anchor's five roles of a person (and of a key, by its own role's nearest one), most rights first. */
export const ACCOUNT_ROLES = ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/** What a service key's role (read-only, read-write, admin) may do, as one of the five. */
export const KEY_ROLE_AS: Record<Role, AccountRole> = { 'read-only': 'READ_ONLY', 'read-write': 'READ_WRITE', admin: 'ADMIN' };

/**
 * What a route needs: read (everyone), run (start runs: check sessions, test sessions, `checkly test`), write
 * (change resources), admin (keys, members, invitations, account settings, the audit log). The role table of
 * docs/people.md is this.
 */
export type AccessLevel = 'read' | 'run' | 'write' | 'admin';
export const ROLES_FOR: Record<AccessLevel, readonly AccountRole[]> = {
  read: ACCOUNT_ROLES,
  run: ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN'],
  write: ['OWNER', 'ADMIN', 'READ_WRITE'],
  admin: ['OWNER', 'ADMIN'],
};
export const may = (role: AccountRole, access: AccessLevel) => ROLES_FOR[access].includes(role);

/** An account as every feature sees it. */
export interface Account {
  id: string;
  name: string;
  isDefault: boolean;
  rateLimitPoints: number | null;
  rateLimitWindowSeconds: number | null;
  /** Runtime of checks that name none. */
  runtimeId: string;
  /** What a check with useGlobalAlertSettings alerts by. */
  alertSettings: Record<string, unknown>;
  browserCheckLimit: number | null;
  /** Whether the account's check and group badges are served (off by default). */
  badgesEnabled: boolean;
  /** Members must have a second factor (TOTP) to act for the account. */
  requireTwoFactor: boolean;
}

/** Who acts in a request: a key (a service key, or a user's key acting with the user's role) or a signed-in user. */
export interface Principal {
  account: Account;
  /** The role it acts with in `account`. */
  role: AccountRole;
  /** The key it came with; null for a browser session. */
  keyId: string | null;
  /** The person: a session's user, or a user key's owner; null for a service key. */
  userId: string | null;
  /** The browser session, when it came with one. */
  sessionId: string | null;
  /** How the audit log names it. */
  actor: { type: 'key' | 'user'; id: string; name: string };
  /**
   * A session of a person the account requires a second factor of, who has not turned one on: it reaches only
   * the person's own settings (routes marked `personal`), where they turn it on.
   */
  secondFactorMissing?: boolean;
  /**
   * The session was made by this account's OpenID provider (or the key was made with such a session): it acts for
   * this account only, and cannot change how the person signs in elsewhere (docs/people.md).
   */
  onlyAccountId?: string;
}

/**
 * Resolves a raw key (and the account a request names) to its principal: undefined for no such key, 'forbidden'
 * for a key that is not a member of the named account. The HTTP layer and the live broker are handed one at
 * wiring (accounts/repository.ts `resolvePrincipal`), so they know nothing of how keys are stored.
 */
export type PrincipalResolver = (rawKey: string, requestedAccountId: string | undefined) => Promise<Principal | 'forbidden' | undefined>;

/** Resolves a session cookie's token the same way (undefined: no such live session). */
export type SessionResolver = (token: string, requestedAccountId: string | undefined) => Promise<(Principal & { csrfToken: string }) | 'forbidden' | undefined>;

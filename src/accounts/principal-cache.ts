import type { Principal } from '../model/accounts.js';
import { hashSecret } from '../model/secrets.js';
import type { Logger } from '../platform/logger.js';
import { Announcements } from '../storage/announcements.js';
import type { Sql } from '../storage/postgres.js';
import { type FoundSession, lookupSession, type SessionSettings } from './browser-sessions.js';
import { resolveKey } from './repository.js';

/** The channel migration 0018's triggers announce a committed change of keys, members, accounts or users on. */
const CHANNEL = 'auth_changed';
/** Past this many kept keys the cache starts again empty (each entry is one key and account asked for). */
const MAX_ENTRIES = 10_000;

interface Entry {
  principal: Principal | 'forbidden';
  until: number;
}
type SessionPrincipal = FoundSession['principal'];

/**
 * What API keys resolve to, kept a few seconds in this process (KEY_CACHE_SECONDS): an API read then costs no
 * Postgres round trip for its key. What a key resolves to changes only when a row it is made of changes (the key,
 * its memberships, its account, its person), and every such commit is announced on `auth_changed` (migration
 * 0018): every process forgets everything it kept when one arrives. This process also forgets at once when it
 * answers a write of the accounts feature (a revoke, a role change: `changesAccess` routes), so its own next
 * request never sees the old answer; a resolution under way when something changed is not kept; a key's expiry
 * bounds its entry. Until the process listens nothing is kept, and every 15 s it checks that it still hears (its
 * own probe, announced and heard back within 3 s); while it does not, it keeps nothing. Between a connection's
 * silent death and the next failed probe (at most 18 s), what it keeps is at most KEY_CACHE_SECONDS old. Unknown
 * keys are never kept: a flood of made-up keys costs the queries it always did and no memory.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly sessions = new Map<string, { principal: SessionPrincipal; until: number }>();
  private generation = 0;
  /** Heard announcements of changes (storage/announcements.ts); undefined when nothing is kept (a TTL of 0). */
  private readonly announcements: Announcements | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
    logger: Logger,
  ) {
    this.announcements =
      ttlMs > 0 ? new Announcements({ sql, channel: CHANNEL, logger, what: 'API keys and sessions', changed: () => this.forget() }) : undefined;
  }

  /** Forgets every kept answer; resolutions under way when this runs are not kept either. */
  forget(): void {
    this.entries.clear();
    this.sessions.clear();
    this.generation++;
  }

  /**
   * What a browser session's cookie resolves to, kept as keys are (KEY_CACHE_SECONDS, forgotten on every announcement:
   * a sign-out, a password change that ends sessions, a role or membership change; migration 0025 announces the
   * sessions' own changes), and never past the session's idle or absolute end as last read, so the idle timer still
   * ends it on time. A session's last-seen stamp is written when it is read from Postgres, at most a minute apart.
   */
  async resolveSession(token: string, account: string | undefined, settings: SessionSettings): Promise<SessionPrincipal | undefined> {
    return this.cached(this.sessions, token, account, async () => {
      const found = await lookupSession(this.sql, token, account, settings);
      return found && { principal: found.principal, endsAt: found.endsAt };
    });
  }

  async resolve(rawKey: string, account: string | undefined): Promise<Principal | 'forbidden' | undefined> {
    return this.cached(this.entries, rawKey, account, async () => {
      const found = await resolveKey(this.sql, rawKey, account);
      return found && { principal: found.principal, endsAt: found.expiresAt?.getTime() ?? Infinity };
    });
  }

  /**
   * One secret's answer (a key's or a session's) from `map`, else from `load`, kept until KEY_CACHE_SECONDS or its
   * own end, whichever is first; only while announcements are heard, and not when something changed during the load.
   */
  private async cached<P>(
    map: Map<string, { principal: P; until: number }>,
    secret: string,
    account: string | undefined,
    load: () => Promise<{ principal: P; endsAt: number } | undefined>,
  ): Promise<P | undefined> {
    if (this.ttlMs <= 0) return (await load())?.principal;
    const id = `${hashSecret(secret).toString('base64')}|${account ?? ''}`;
    const kept = map.get(id);
    if (kept && kept.until > Date.now()) return kept.principal;
    if (kept) map.delete(id);
    const generation = this.generation;
    const found = await load();
    if (found && this.announcements?.heard && generation === this.generation) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(id, { principal: found.principal, until: Math.min(Date.now() + this.ttlMs, found.endsAt) });
    }
    return found?.principal;
  }

  /** Stops the probe of the listening connection (the connection itself closes with the pool). */
  stop(): void {
    this.announcements?.stop();
  }
}

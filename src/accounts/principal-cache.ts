import { randomUUID } from 'node:crypto';
import type { Principal } from '../model/accounts.js';
import { hashSecret } from '../model/secrets.js';
import type { Logger } from '../platform/logger.js';
import type { Sql } from '../storage/postgres.js';
import { type FoundSession, lookupSession, type SessionSettings } from './browser-sessions.js';
import { resolveKey } from './repository.js';

/** The channel migration 0018's triggers announce a committed change of keys, members, accounts or users on. */
const CHANNEL = 'auth_changed';
/** How often the process checks it still hears announcements, and how long it waits for its own. */
const PROBE_EVERY_MS = 15_000;
const PROBE_WAIT_MS = 3_000;
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
  private listening = false;
  private readonly probeId = randomUUID();
  private probes = 0;
  private probeAwaited: string | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probeDeadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {
    if (ttlMs > 0) this.listen();
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
    if (found && this.listening && generation === this.generation) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(id, { principal: found.principal, until: Math.min(Date.now() + this.ttlMs, found.endsAt) });
    }
    return found?.principal;
  }

  /** Stops the probe of the listening connection (the connection itself closes with the pool). */
  stop(): void {
    clearInterval(this.probeTimer);
    clearTimeout(this.probeDeadline);
  }

  private listen(): void {
    // postgres.js keeps one connection for LISTEN and listens again after it reconnects: each (re)start of
    // listening forgets what was kept, since announcements may have been missed while it was down.
    this.sql
      .listen(
        CHANNEL,
        (payload) => {
          if (payload.startsWith('probe:')) {
            if (payload === this.probeAwaited) this.heard();
            return;
          }
          this.forget();
        },
        () => {
          // (Re)listening: announcements made while the connection was down were missed.
          this.forget();
          this.heard();
        },
      )
      .then(
        () => {
          this.probeTimer = setInterval(() => this.probe(), PROBE_EVERY_MS);
          this.probeTimer.unref();
        },
        (err: Error) => {
          this.listening = false;
          this.logger.warn({ err: err.message }, 'API keys are resolved without a cache: listening for their changes failed');
        },
      );
  }

  /** Listening works (again): what was kept meanwhile may have missed an announcement, so it goes. */
  private heard(): void {
    clearTimeout(this.probeDeadline);
    this.probeAwaited = undefined;
    if (!this.listening) this.forget();
    this.listening = true;
  }

  /**
   * A connection can die without either side noticing for minutes, or a pooler can accept LISTEN and deliver
   * nothing: every PROBE_EVERY_MS this process announces a probe of its own, and until it hears it back (within
   * PROBE_WAIT_MS) it keeps nothing and forgets what it kept.
   */
  private probe(): void {
    if (this.probeAwaited) return;
    const payload = `probe:${this.probeId}:${++this.probes}`;
    this.probeAwaited = payload;
    this.probeDeadline = setTimeout(() => {
      if (this.probeAwaited !== payload) return;
      this.probeAwaited = undefined;
      if (this.listening) this.logger.warn('API keys are resolved without a cache until announcements of their changes are heard again');
      this.listening = false;
      this.forget();
    }, PROBE_WAIT_MS);
    this.probeDeadline.unref();
    this.sql`select pg_notify(${CHANNEL}, ${payload})`.catch(() => undefined);
  }
}

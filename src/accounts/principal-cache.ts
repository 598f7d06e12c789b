import type { Logger } from '../platform/logger.js';
import { hashSecret } from '../model/secrets.js';
import type { Principal } from '../model/accounts.js';
import type { Sql } from '../storage/postgres.js';
import { resolveKey } from './repository.js';

/** The channel migration 0018's triggers announce a committed change of keys, members, accounts or users on. */
const CHANNEL = 'auth_changed';
/** Past this many kept keys the cache starts again empty (each entry is one key and account asked for). */
const MAX_ENTRIES = 10_000;

interface Entry {
  principal: Principal | 'forbidden';
  until: number;
}

/**
 * What API keys resolve to, kept a few seconds in this process (KEY_CACHE_SECONDS): an API read then costs no
 * Postgres round trip for its key. What a key resolves to changes only when a row it is made of changes (the key,
 * its memberships, its account, its person), and every such commit is announced on `auth_changed` (migration
 * 0018): every process forgets everything it kept when one arrives. This process also forgets at once when it
 * answers any write (a revoke, a role change), so its own next request never sees the old answer, and a
 * resolution that was under way when something changed is not kept. A key's expiry bounds its entry. Until the
 * process listens nothing is kept; if its listening connection drops, what it keeps meanwhile is at most
 * KEY_CACHE_SECONDS old, and it forgets everything when it listens again. Unknown keys are never kept: a flood of made-up keys costs the queries
 * it always did and no memory.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private listening = false;

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
    this.generation++;
  }

  async resolve(rawKey: string, account: string | undefined): Promise<Principal | 'forbidden' | undefined> {
    if (this.ttlMs <= 0) return (await resolveKey(this.sql, rawKey, account))?.principal;
    const id = `${hashSecret(rawKey).toString('base64')}|${account ?? ''}`;
    const now = Date.now();
    const kept = this.entries.get(id);
    if (kept && kept.until > now) return kept.principal;
    if (kept) this.entries.delete(id);
    const generation = this.generation;
    const found = await resolveKey(this.sql, rawKey, account);
    if (found && this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      const until = Math.min(Date.now() + this.ttlMs, found.expiresAt?.getTime() ?? Infinity);
      this.entries.set(id, { principal: found.principal, until });
    }
    return found?.principal;
  }

  private listen(): void {
    // postgres.js keeps one connection for LISTEN and listens again after it reconnects: each (re)start of
    // listening forgets what was kept, since announcements may have been missed while it was down.
    this.sql
      .listen(
        CHANNEL,
        () => this.forget(),
        () => {
          this.forget();
          this.listening = true;
        },
      )
      .catch((err: Error) => {
        this.listening = false;
        this.logger.warn({ err: err.message }, 'API keys are resolved without a cache: listening for their changes failed');
      });
  }
}

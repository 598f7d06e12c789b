import { estimate } from '../model/results.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { RunnableCheck } from '../run-kernel/index.js';
import { Announcements, ForgetClock } from '../storage/announcements.js';
import type { Sql } from '../storage/postgres.js';
import { loadRunnable } from './definitions.js';

/** The channel migration 0027's triggers announce a committed change of a check, group, variable or snippet on (payload: the account's id). */
const CHANNEL = 'definitions_changed';
/** A kept definition is read again after this long even when no change was announced (a bound, not the mechanism). */
const KEEP_MS = 10 * 60_000;

export interface DefinitionCacheOptions {
  sql: Sql;
  logger: Logger;
  /**
   * At most this much is kept, as estimated from the definitions' JSON size (a simple API check about 2 KB, which
   * takes 2–3 times that of the heap; a check carries its account's variables opened, so many large variables make
   * every one larger); once full, the other checks are read at each run. 0 keeps none.
   */
  maxBytes: number;
  metrics?: Metrics;
}

/**
 * The definitions of the checks this process runs on schedule, kept between their runs (DEFINITION_CACHE_MB): a
 * scheduled run then costs no Postgres read of its check, its group, its account's variables (and their decryption)
 * or its snippets. What a definition is made of changes only by a commit that migration 0027 announces with the
 * account's id, and the process forgets what it kept of that account when the announcement arrives, a few
 * milliseconds after the commit: a scheduled run starting in between runs the definition it would have read had it
 * started a moment earlier. Runs someone waits for (check sessions, `checkly test`, on-demand runs) never use it.
 * A read under way when its account's definitions changed is not kept; while announcements are not heard
 * (storage/announcements.ts) nothing is kept; and nothing is kept longer than 10 minutes. Kept definitions are
 * frozen: the runs that share one cannot change it.
 */
export class DefinitionCache {
  private readonly accounts = new Map<string, Map<string, { check: RunnableCheck; until: number; bytes: number }>>();
  /** Kept definitions, and their estimated bytes. */
  private size = 0;
  private bytes = 0;
  /** Which reads under way may still be kept (none begun before their account was forgotten). */
  private readonly clock = new ForgetClock();
  private readonly announcements: Announcements | undefined;
  private hits = 0;
  private reads = 0;

  constructor(private readonly opts: DefinitionCacheOptions) {
    this.announcements =
      opts.maxBytes > 0
        ? new Announcements({
            sql: opts.sql,
            channel: CHANNEL,
            logger: opts.logger,
            what: 'check definitions',
            changed: (account) => (account ? this.forget(account) : this.forget()),
          })
        : undefined;
  }

  /** Forgets what was kept of one account, or of all; reads under way for it are not kept. */
  forget(accountId?: string): void {
    const everything = this.clock.forget(accountId);
    if (everything || accountId === undefined) {
      this.accounts.clear();
      this.size = 0;
      this.bytes = 0;
      return;
    }
    const kept = this.accounts.get(accountId);
    if (!kept) return;
    this.size -= kept.size;
    for (const entry of kept.values()) this.bytes -= entry.bytes;
    this.accounts.delete(accountId);
  }

  /** The account's checks of `ids` as they run (kept ones as kept, the rest read and kept); missing ids are absent. */
  async runnable(accountId: string, ids: readonly string[], now = Date.now()): Promise<Map<string, RunnableCheck>> {
    const out = new Map<string, RunnableCheck>();
    const kept = this.accounts.get(accountId);
    const missing: string[] = [];
    for (const id of ids) {
      const entry = kept?.get(id);
      if (entry && entry.until > now) out.set(id, entry.check);
      else missing.push(id);
    }
    this.hits += out.size;
    this.reads += missing.length;
    if (out.size) this.opts.metrics?.runDefinitions.inc({ from: 'kept' }, out.size);
    if (missing.length) this.opts.metrics?.runDefinitions.inc({ from: 'read' }, missing.length);
    if (!missing.length) return out;
    const before = this.clock.mark();
    const read = await loadRunnable(this.opts.sql, accountId, missing);
    const keep = Boolean(this.announcements?.heard) && this.clock.keeps(accountId, before);
    for (const [id, check] of read) {
      const frozen = keep ? freeze(check) : check;
      out.set(id, frozen);
      if (keep) this.keep(accountId, id, frozen, now + KEEP_MS);
    }
    return out;
  }

  /** Definitions taken from the cache and read from Postgres since the start (for /metrics and tests). */
  stats(): { hits: number; reads: number; kept: number; keptBytes: number; heard: boolean } {
    return { hits: this.hits, reads: this.reads, kept: this.size, keptBytes: this.bytes, heard: Boolean(this.announcements?.heard) };
  }

  stop(): void {
    this.announcements?.stop();
  }

  private keep(accountId: string, id: string, check: RunnableCheck, until: number): void {
    let kept = this.accounts.get(accountId);
    const before = kept?.get(id);
    // Already full: a check not kept is not measured (at every read) only to be turned away.
    if (!before && this.bytes >= this.opts.maxBytes) return;
    const bytes = estimate(check, this.opts.maxBytes);
    // Full: what is kept stays (and is renewed in place); the other checks are read at each run, as without a cache.
    if (this.bytes - (before?.bytes ?? 0) + bytes > this.opts.maxBytes) return;
    if (!kept) {
      kept = new Map();
      this.accounts.set(accountId, kept);
    }
    if (!before) this.size++;
    this.bytes += bytes - (before?.bytes ?? 0);
    kept.set(id, { check, until, bytes });
  }
}

/** A definition shared by runs: it and what it holds directly (data, variables, secrets, snippets) are frozen. */
function freeze(check: RunnableCheck): RunnableCheck {
  Object.freeze(check.data);
  Object.freeze(check.variables);
  Object.freeze(check.secrets);
  Object.freeze(check.tags);
  Object.freeze(check.locations);
  if (check.snippets) Object.freeze(check.snippets);
  return Object.freeze(check);
}

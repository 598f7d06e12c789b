import type { CheckType } from '../model/checks.js';
import type { Logger } from '../platform/logger.js';
import { Announcements, ForgetClock } from '../storage/announcements.js';
import type { Sql } from '../storage/postgres.js';
import { checkTypesOf } from './repository.js';

/** The channel migration 0027's triggers announce a committed change of a check (among others) on, with its account's id. */
const CHANNEL = 'definitions_changed';
/** At most this many checks' types are kept (about 100 bytes each); beyond it, the others are read at each batch. */
const MAX_KEPT = 200_000;
/** Accounts whose last forgetting is remembered (so a read under way when it came is not kept). */
const MAX_FORGOTTEN = 10_000;

/**
 * The types of an account's checks, kept between the batches of results ingest validates (each names up to a
 * thousand checks, whose types were one Postgres read a batch: bench/README.md, "Ingest: where the main thread's
 * time goes"). Every committed change of a check (created, changed, deleted) is announced with its account's id
 * (migration 0027), on which the process forgets what it kept of that account, a few milliseconds after the commit:
 * a batch validated in between is judged as it would have been a moment earlier.
 * Ids that name no check are never kept. While announcements are not heard (storage/announcements.ts) nothing is
 * kept and every batch reads.
 */
export class CheckTypeCache {
  private readonly accounts = new Map<string, Map<string, CheckType>>();
  private kept = 0;
  /** Which reads under way may still be kept (none begun before their account was forgotten). */
  private readonly clock = new ForgetClock(MAX_FORGOTTEN);
  private readonly announcements: Announcements;

  constructor(
    private readonly sql: Sql,
    logger: Logger,
  ) {
    this.announcements = new Announcements({
      sql,
      channel: CHANNEL,
      logger,
      what: 'check types',
      changed: (account) => this.forget(account || undefined),
    });
  }

  /** The types of the account's checks among `ids` (ids of no check of the account are absent). */
  async typesOf(accountId: string, ids: readonly string[]): Promise<Map<string, CheckType>> {
    const kept = this.accounts.get(accountId);
    const out = new Map<string, CheckType>();
    const missing: string[] = [];
    for (const id of ids) {
      const type = kept?.get(id);
      if (type === undefined) missing.push(id);
      else out.set(id, type);
    }
    if (!missing.length) return out;
    const before = this.clock.mark();
    const read = await checkTypesOf(this.sql, accountId, missing);
    const keep = this.announcements.heard && this.clock.keeps(accountId, before);
    let into = this.accounts.get(accountId);
    for (const [id, type] of read) {
      out.set(id, type);
      if (!keep || this.kept >= MAX_KEPT) continue;
      if (!into) {
        into = new Map();
        this.accounts.set(accountId, into);
      }
      if (!into.has(id)) this.kept++;
      into.set(id, type);
    }
    return out;
  }

  /** Forgets what was kept of one account, or of all; reads under way for it are not kept. */
  forget(accountId?: string): void {
    // One forgotten account remembered per account ever announced: past a bound, everything is forgotten.
    const everything = this.clock.forget(accountId);
    if (everything || accountId === undefined) {
      this.accounts.clear();
      this.kept = 0;
      return;
    }
    this.kept -= this.accounts.get(accountId)?.size ?? 0;
    this.accounts.delete(accountId);
  }

  /** Checks whose types are kept, and whether announcements are heard (for tests). */
  stats(): { kept: number; heard: boolean } {
    return { kept: this.kept, heard: this.announcements.heard };
  }

  stop(): void {
    this.announcements.stop();
  }
}

import type { Logger } from '../platform/logger.js';
import { KeptByAccount } from '../storage/announcements.js';
import type { Sql } from '../storage/postgres.js';
import { type AccountContext, accountContext, type CheckBasis, readBases } from './apply.js';

/**
 * What check state judges a check's runs by (its name, type, flags, tags, group and own alert settings: `CheckBasis`),
 * kept between the batches ingest applies: each state transaction read up to a thousand checks' definitions with
 * their groups, most of what Postgres answered a batch (bench/README.md, "Ingest"). A basis is made of its check's
 * row and its group's, whose every committed change migration 0027 announces on `definitions_changed` with the
 * account's id; on it the process forgets what it kept of that account, a few milliseconds after the commit (a batch
 * applied in between is judged as it would have been a moment earlier). The checks' statuses and their locks are read
 * with each batch, as before; the account's alert settings and maintenance windows are kept beside (AccountContextCache). (A read's mark is taken inside the transaction: under
 * Postgres's default READ COMMITTED each statement sees what was committed when it began.) While announcements are not heard
 * (storage/announcements.ts) nothing is kept and every batch reads. At most 200,000 checks' bases (a few hundred
 * bytes each) are kept.
 */
export class CheckBasisCache extends KeptByAccount<CheckBasis> {
  constructor(sql: Sql, logger: Logger) {
    super({ sql, logger, channel: 'definitions_changed', what: 'check bases for state', maxKept: 200_000, maxForgotten: 10_000 });
  }

  /** The bases of the account's checks among `ids`: kept ones as kept, the rest read in `db`'s transaction and kept. */
  readonly basesOf = (db: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, CheckBasis>> =>
    // Shared by every batch that judges the check from now on: none may change it.
    this.get(accountId, ids, (missing) => readBases(db, accountId, missing), deepFreeze);
}

/**
 * The account's alert settings and maintenance windows, kept between batches as the checks' bases are: ingest read them
 * for every batch, twice (the runs a window pauses, then the state transaction), three queries a batch whatever its size
 * (bench/README.md, "Ingest: what a batch costs"). Migration 0028 announces their committed changes on
 * `definitions_changed` with the account's id. At most 100,000 accounts' are kept.
 */
export class AccountContextCache extends KeptByAccount<AccountContext> {
  constructor(sql: Sql, logger: Logger) {
    super({
      sql,
      logger,
      channel: 'definitions_changed',
      what: "accounts' alert settings and maintenance windows for state",
      maxKept: 100_000,
      maxForgotten: 10_000,
    });
  }

  /** The account's settings and windows: as kept, or read in `db` (a transaction's, when asked in one) and kept. */
  readonly contextOf = async (db: Sql, accountId: string): Promise<AccountContext> => {
    const kept = await this.get(accountId, [ACCOUNT], async () => new Map([[ACCOUNT, await accountContext(db, accountId)]]), deepFreeze);
    return kept.get(ACCOUNT)!;
  };
}

/** The one value an account has in AccountContextCache. */
const ACCOUNT = 'account';

/** Freezes `value` and every object it holds (a basis is a few small objects from a check's JSON). */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}

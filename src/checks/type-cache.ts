import type { CheckType } from '../model/checks.js';
import type { Logger } from '../platform/logger.js';
import { KeptByAccount } from '../storage/announcements.js';
import type { Sql } from '../storage/postgres.js';
import { checkTypesOf } from './repository.js';

/**
 * The types of an account's checks, kept between the batches of results ingest validates (each names up to a
 * thousand checks, whose types were one Postgres read a batch: bench/README.md, "Ingest: where the main thread's
 * time goes"). Every committed change of a check (created, changed, deleted) is announced with its account's id
 * (migration 0027's `definitions_changed`), on which the process forgets what it kept of that account, a few
 * milliseconds after the commit: a batch validated in between is judged as it would have been a moment earlier.
 * Ids that name no check are never kept. While announcements are not heard (storage/announcements.ts) nothing is
 * kept and every batch reads. At most 200,000 checks' types (about 100 bytes each) are kept.
 */
export class CheckTypeCache extends KeptByAccount<CheckType> {
  constructor(
    private readonly sql: Sql,
    logger: Logger,
  ) {
    super({ sql, logger, channel: 'definitions_changed', what: 'check types', maxKept: 200_000, maxForgotten: 10_000 });
  }

  /** The types of the account's checks among `ids` (ids of no check of the account are absent). */
  typesOf(accountId: string, ids: readonly string[]): Promise<Map<string, CheckType>> {
    return this.get(accountId, ids, (missing) => checkTypesOf(this.sql, accountId, missing));
  }
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestEnv } from '../../test/support/service.js';
import { ambientSql, connectPostgres, dropDatabase, ensureDatabase, isPostgresBusy, PoolBusyError, type Sql } from './postgres.js';

/**
 * The pool's acquire timeout (PG_ACQUIRE_TIMEOUT_MS): a query or transaction that finds every connection taken
 * fails after the timeout instead of hanging, and what it asked for never runs, not even once a connection frees.
 */
describe('Postgres pool acquire timeout', () => {
  const url = newTestEnv().DATABASE_URL;
  let pool: Sql;
  let sql: Sql;
  beforeAll(async () => {
    await ensureDatabase(url);
    pool = connectPostgres(url, 1);
    sql = ambientSql(pool, 300);
    await sql`create table marks (what text)`;
  });
  afterAll(async () => {
    await pool?.end();
    await dropDatabase(url);
  });

  it('a query and a transaction waiting for the only connection fail, and neither runs later', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The one connection, held by a transaction until released.
    const holder = sql.begin(async (tx) => {
      await tx`select 1`;
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));

    const query = sql`insert into marks values ('query')`.then(
      () => 'ran',
      (err: unknown) => err,
    );
    const transaction = sql
      .begin(async (tx) => tx`insert into marks values ('transaction')`)
      .then(
        () => 'ran',
        (err: unknown) => err,
      );
    const [queryOutcome, transactionOutcome] = await Promise.all([query, transaction]);
    expect(isPostgresBusy(queryOutcome)).toBe(true);
    expect(transactionOutcome).toBeInstanceOf(PoolBusyError);

    release();
    await holder;
    // The connection is free again: neither insert ran when it freed, and the pool serves.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await sql`select what from marks`).toEqual([]);
    await sql`insert into marks values ('after')`;
    expect((await sql`select what from marks`).map((r) => r.what)).toEqual(['after']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestEnv } from '../../test/support/service.js';
import { migrate, readMigrations } from './migrator.js';
import { connectPostgres, dropDatabase, ensureDatabase, type Sql } from './postgres.js';

describe('Postgres migrations', () => {
  const url = newTestEnv().DATABASE_URL;
  let a: Sql;
  let b: Sql;
  beforeAll(async () => {
    await ensureDatabase(url);
    a = connectPostgres(url, 2);
    b = connectPostgres(url, 2);
  });
  afterAll(async () => {
    await a?.end();
    await b?.end();
    await dropDatabase(url);
  });

  async function schemaSnapshot(sql: Sql) {
    const rows = await sql`select table_name, column_name, data_type from information_schema.columns
      where table_schema = 'public' order by table_name, column_name`;
    return rows.map((r) => `${r.table_name}.${r.column_name}:${r.data_type}`);
  }

  it('applies every migration once even when two migrators start together', async () => {
    const all = await readMigrations();
    expect(all.length).toBeGreaterThan(0);
    const [first, second] = await Promise.all([migrate(a), migrate(b)]);
    // One of them applied everything, the other found nothing to do.
    expect([...first, ...second].sort((x, y) => x - y)).toEqual(all.map((m) => m.version));
    expect(first.length === 0 || second.length === 0).toBe(true);
    const recorded = await a`select version from schema_migrations order by version`;
    expect(recorded.map((r) => r.version)).toEqual(all.map((m) => m.version));
  });

  it('changes nothing when applied again', async () => {
    const before = await schemaSnapshot(a);
    expect(await migrate(a)).toEqual([]);
    expect(await schemaSnapshot(a)).toEqual(before);
    const [{ n }] = await a`select count(*)::int as n from schema_migrations`;
    expect(n).toBe((await readMigrations()).length);
  });

  it('creates a missing database, and tolerates it already existing', async () => {
    const other = newTestEnv().DATABASE_URL;
    await Promise.all([ensureDatabase(other), ensureDatabase(other)]);
    const sql = connectPostgres(other, 1);
    try {
      expect((await sql`select 1 as one`)[0].one).toBe(1);
    } finally {
      await sql.end();
      await dropDatabase(other);
    }
  });
});

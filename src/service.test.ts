import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { newTestEnv } from '../test/support/service.js';
import { loadConfig } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { openDependencies } from './service.js';
import { UnreachableError } from './storage/postgres.js';

async function databaseExists(url: string): Promise<boolean> {
  const name = new URL(url).pathname.slice(1);
  const admin = postgres('postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });
  try {
    return (await admin`select 1 from pg_database where datname = ${name}`).length > 0;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

describe('opening the dependencies', () => {
  const logger = createLogger('silent');

  it('checks Redis before it creates or migrates the database', async () => {
    const env = newTestEnv({ REDIS_URL: 'redis://127.0.0.1:1' });
    const err = await openDependencies(loadConfig(env), logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toContain('(REDIS_URL)');
    expect(await databaseExists(env.DATABASE_URL)).toBe(false);
  });

  it('names DATABASE_URL and the user when Postgres refuses the credentials', async () => {
    const env = newTestEnv();
    const url = new URL(env.DATABASE_URL);
    url.username = 'no_such_role_here';
    const err = await openDependencies(loadConfig({ ...env, DATABASE_URL: url.toString() }), logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toMatch(/^Postgres at 127\.0\.0\.1:5432\/monitoring_test_\w+ \(DATABASE_URL\) refused no_such_role_here: /);
    expect((err as Error).message).toContain('no_such_role_here');
    expect(await databaseExists(env.DATABASE_URL)).toBe(false);
  });
});

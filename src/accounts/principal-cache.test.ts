import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createSession } from './browser-sessions.js';
import { addMember } from './members.js';
import { createApiKey } from './repository.js';
import { ensureUser } from './users.js';

/**
 * What a key resolves to is kept a few seconds per process (KEY_CACHE_SECONDS, 5 by default): a revoke, a role
 * change or an expiry must still take effect at once, whether it comes through this process's API or from elsewhere
 * (another process, an operator's SQL), which the tests here play with a connection of their own.
 */
describe('keys resolved from the cache', () => {
  let svc: TestService;
  let elsewhere: postgres.Sql;

  beforeAll(async () => {
    // Kept a minute here: within these tests only an announcement can make a change show.
    svc = await startTestService({ KEY_CACHE_SECONDS: '60', SESSION_IDLE_MINUTES: '1' });
    elsewhere = postgres(svc.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await elsewhere?.end();
    await svc?.stop();
  });

  const read = async (key: string) => (await svc.call('GET', '/v1/checks', { key })).status;

  it('refuses a key revoked through the API at its very next request', async () => {
    const key = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    expect(await read(key.key)).toBe(200);
    expect(await read(key.key)).toBe(200);
    expect((await svc.call('DELETE', `/v1/api-keys/${key.id}`)).status).toBe(204);
    expect(await read(key.key)).toBe(401);
  });

  it('hears of a revoke and a membership removed elsewhere within moments, long before the keys would leave the cache', async () => {
    const revoked = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    const removed = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-write' });
    // Reads only from here on (a write would make this process forget by itself): both keys are kept.
    expect(await read(revoked.key)).toBe(200);
    expect(await read(removed.key)).toBe(200);
    await elsewhere`update api_keys set revoked_at = now() where id = ${revoked.id}`;
    await elsewhere`delete from memberships where api_key_id = ${removed.id}`;
    // Well under KEY_CACHE_SECONDS: only the announcement can make these pass in time.
    await expect.poll(() => read(revoked.key), { timeout: 1500, interval: 50 }).toBe(401);
    await expect.poll(() => read(removed.key), { timeout: 1500, interval: 50 }).toBe(403);
  });

  it("stamps a kept key's last use without making every process forget what it kept", async () => {
    const key = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    const announcements: number[] = [];
    const listening = await elsewhere.listen('auth_changed', () => announcements.push(Date.now()));
    expect(await read(key.key)).toBe(200); // resolved afresh: its last use is stamped
    await expect
      .poll(async () => (await svc.deps.sql<{ last_used_at: Date | null }[]>`select last_used_at from api_keys where id = ${key.id}`)[0]!.last_used_at)
      .not.toBeNull();
    await new Promise((r) => setTimeout(r, 200));
    expect(announcements).toEqual([]);
    await elsewhere`update api_keys set name = 'renamed' where id = ${key.id}`;
    await expect.poll(() => announcements.length).toBe(1);
    await listening.unlisten();
  });

  it('listens again when its listening connection is cut, and hears changes made after', async () => {
    const listeners = () => elsewhere<{ pid: number }[]>`select pid from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`;
    const before = (await listeners()).map((r) => r.pid);
    expect(before.length).toBeGreaterThan(0);
    await elsewhere`select pg_terminate_backend(pid) from pg_stat_activity where pid = any(${before}::int[])`;
    await expect.poll(async () => (await listeners()).filter((r) => !before.includes(r.pid)).length, { timeout: 10_000, interval: 200 }).toBeGreaterThan(0);
    const key = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    await expect.poll(() => read(key.key)).toBe(200);
    expect(await read(key.key)).toBe(200);
    await elsewhere`update api_keys set revoked_at = now() where id = ${key.id}`;
    await expect.poll(() => read(key.key), { timeout: 1500, interval: 50 }).toBe(401);
  });

  it('keeps a key no longer than it is valid', async () => {
    const key = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    await svc.deps.sql`update api_keys set expires_at = now() + interval '1500 milliseconds' where id = ${key.id}`;
    svc.forgetKeys();
    expect(await read(key.key)).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    expect(await read(key.key)).toBe(401);
  });

  describe('browser sessions, kept as keys are', () => {
    const settings = { idleMs: 60_000, absoluteMs: 3_600_000 };
    const session = async (email: string) => {
      const user = await ensureUser(svc.deps.sql, email, email);
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, 'READ_ONLY');
      return { ...(await createSession(svc.deps.sql, user.id, settings, {})), userId: user.id };
    };
    const readAs = async (token: string) => (await svc.call('GET', '/v1/checks', { key: null, headers: { cookie: `monitoring_session=${token}` } })).status;

    it('ends a session ended elsewhere (a sign-out or a password change in another process) within moments', async () => {
      const s = await session('kept@shop.test');
      expect(await readAs(s.token)).toBe(200);
      expect(await readAs(s.token)).toBe(200);
      await elsewhere`update user_sessions set ended_at = now() where id = ${s.id}`;
      await expect.poll(() => readAs(s.token), { timeout: 1500, interval: 50 }).toBe(401);
    });

    it('hears of a membership removed elsewhere', async () => {
      const s = await session('removed@shop.test');
      expect(await readAs(s.token)).toBe(200);
      await elsewhere`delete from account_members where user_id = ${s.userId}`;
      await expect.poll(() => readAs(s.token), { timeout: 1500, interval: 50 }).toBe(403);
    });

    it('keeps a session no longer than its idle end: the idle timer ends it on time', async () => {
      const s = await session('idle@shop.test');
      // Last seen 56 s ago, written as the session's own stamp is (no announcement): it ends, idle, in 4 s.
      await elsewhere`update user_sessions set last_seen_at = now() - interval '56 seconds' where id = ${s.id}`;
      expect(await readAs(s.token)).toBe(200);
      await new Promise((r) => setTimeout(r, 4500));
      expect(await readAs(s.token)).toBe(401);
    });
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/support/service.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

describe('CLI', () => {
  let svc: TestService;
  const cli = (...args: string[]) => run(TSX, ['src/cli.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_URL: svc.env.DATABASE_URL } });

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('creates an account and a key that authenticates for it, and caps browser checks', async () => {
    const { stdout: accountId } = await cli('create-account', '--name', 'from-cli');
    expect(accountId.trim()).toMatch(/^[0-9a-f-]{36}$/);
    const { stdout: key } = await cli('create-key', '--account', accountId.trim(), '--role', 'read-write');
    const res = await svc.call('GET', '/v1/account', { key: key.trim() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: accountId.trim(), name: 'from-cli', role: 'READ_WRITE' });

    await cli('set-browser-limit', '--account', accountId.trim(), '--max', '0');
    const limited = await svc.call('POST', '/v1/checks/browser', { key: key.trim(), body: { name: 'x', script: null } });
    expect(limited.status).toBe(402);
    await cli('set-browser-limit', '--account', accountId.trim(), '--unlimited');
    expect((await svc.call('POST', '/v1/checks/browser', { key: key.trim(), body: { name: 'x', script: null } })).status).toBe(201);
  }, 60_000);

  it('create-user makes the first Owner and prints a one-time sign-in link', async () => {
    const { stdout } = await cli('create-user', '--email', 'first@owner.test', '--name', 'First Owner');
    expect(stdout).toContain('first@owner.test is OWNER of the account');
    const link = /(http\S+\/v1\/auth\/sign-in\/link\?token=\S+)/.exec(stdout)![1]!;
    // PUBLIC_URL is not set for the CLI here: the link names the default port; the path and token are what count.
    const url = new URL(link);
    const res = await fetch(`${svc.url}${url.pathname}${url.search}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
    const session = await svc.call('GET', '/v1/auth/session', { key: null, headers: { cookie } });
    expect(session.body).toMatchObject({ user: { email: 'first@owner.test', name: 'First Owner' }, account: { id: svc.defaultAccountId, role: 'OWNER' } });
    expect((await fetch(`${svc.url}${url.pathname}${url.search}`, { redirect: 'manual' })).status).toBe(401);
    await expect(cli('create-user', '--email', 'x@y.test', '--role', 'boss')).rejects.toMatchObject({
      stderr: expect.stringContaining('--role must be one of'),
    });
  }, 60_000);

  it('explains bad usage with a non-zero exit', async () => {
    await expect(cli('create-key', '--account', 'nope')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('No account with id nope') });
    await expect(cli('create-key', '--account', '00000000-0000-0000-0000-000000000000', '--role', 'owner')).rejects.toMatchObject({
      stderr: expect.stringContaining('--role must be one of'),
    });
    await expect(cli('frobnicate')).rejects.toMatchObject({ stderr: expect.stringContaining('Unknown command: frobnicate') });
  }, 60_000);
});

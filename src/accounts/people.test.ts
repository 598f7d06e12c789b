import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../test/support/receivers.js';
import { type ApiResponse, expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { addMember } from './members.js';
import { hashPassword } from './passwords.js';
import { createAccount } from './repository.js';
import { ensureUser, setPassword, tokenHash } from './users.js';

const PASSWORD = 'correct horse battery staple';

/** A browser: the session cookie it was given, and the CSRF token the session answered with. */
interface Browser {
  cookie: string;
  csrf: string;
  userId: string;
}

function sessionCookie(res: ApiResponse): string | undefined {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('monitoring_session='));
  return set ? set.split(';')[0]!.slice('monitoring_session='.length) || undefined : undefined;
}

describe('people: sign-in, sessions, second factor, password resets', () => {
  let svc: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    svc = await startTestService({ SMTP_URL: smtp.url, STATE_SWEEP_INTERVAL_MS: '200', SIGN_IN_FAILURES: '3' });
  });
  afterAll(async () => {
    await svc?.stop();
    await smtp?.close();
  });

  async function person(email: string, role: Parameters<typeof addMember>[3], accountId = svc.defaultAccountId, password = PASSWORD) {
    const user = await ensureUser(svc.deps.sql, email, email.split('@')[0]);
    await setPassword(svc.deps.sql, user.id, await hashPassword(password));
    await addMember(svc.deps.sql, accountId, user.id, role);
    return user;
  }

  async function signIn(email: string, password = PASSWORD, code?: string): Promise<Browser> {
    const res = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email, password, ...(code ? { code } : {}) } });
    expect(res.status, res.text).toBe(200);
    return { cookie: sessionCookie(res)!, csrf: res.body.csrfToken, userId: res.body.user.id };
  }

  const as = (b: Browser, method: string, path: string, opts: { body?: unknown; csrf?: boolean; headers?: Record<string, string> } = {}) =>
    svc.call(method, path, {
      key: null,
      body: opts.body,
      headers: { cookie: `monitoring_session=${b.cookie}`, ...(opts.csrf === false ? {} : { 'x-csrf-token': b.csrf }), ...opts.headers },
    });

  it('signs a person in with a cookie that is HTTP-only and SameSite=Lax, and the same routes answer the session as a key', async () => {
    const user = await person('ada@example.test', 'READ_WRITE');
    const res = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'Ada@Example.test', password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user: { id: user.id, email: 'ada@example.test', twoFactorEnabled: false },
      account: { id: svc.defaultAccountId, role: 'READ_WRITE' },
      secondFactorRequired: false,
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('monitoring_session='))!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Lax/i);
    expect(set).not.toMatch(/Secure/i); // plain HTTP here; behind TLS it is Secure
    const token = sessionCookie(res)!;
    // Only the token's hash is stored.
    const [row] = await svc.deps.sql`select * from user_sessions where user_id = ${user.id}`;
    expect(JSON.stringify(row)).not.toContain(token);

    const browser = { cookie: token, csrf: res.body.csrfToken, userId: user.id };
    expect((await as(browser, 'GET', '/v1/checks')).status).toBe(200);
    const created = await as(browser, 'POST', '/v1/checks/api', { body: { name: 'by ada', request: { url: 'http://127.0.0.1:9/', method: 'GET' } } });
    expect(created.status, created.text).toBe(201);
    // The audit log names the person who wrote.
    const audit = await svc.call('GET', `/v1/audit-logs?resourceId=${created.body.id}&operation=createApiCheck`);
    expect(audit.status).toBe(200);
    expect(audit.body.entries[0]).toMatchObject({ actor: { type: 'user', id: user.id, name: 'ada@example.test' }, operation: 'createApiCheck', status: 201 });
    expect(audit.body.entries[0].fields).toEqual(expect.arrayContaining(['name', 'request']));
    // A read-and-write member is no admin.
    expect((await as(browser, 'POST', '/v1/api-keys', { body: { name: 'nope' } })).status).toBe(403);
  });

  it('refuses a wrong password and an unknown email alike, and throttles failures per email before checking any password', async () => {
    await person('grace@example.test', 'READ_ONLY');
    const wrong = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'grace@example.test', password: 'not the password' } });
    const unknown = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'nobody@example.test', password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.message).toBe(unknown.body.message);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    for (let i = 0; i < 2; i++)
      expect((await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'grace@example.test', password: 'still wrong' } })).status).toBe(401);
    // Three failures: even the right password waits now.
    const throttled = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'grace@example.test', password: PASSWORD } });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    const failed = await svc.call('GET', '/v1/audit-logs?operation=signInFailed&limit=100');
    expect(failed.body.entries.filter((e: { actor: { name: string } }) => e.actor.name === 'grace@example.test')).toHaveLength(3);
  });

  it('gives a new session (a new cookie) at every sign-in and ends it at sign-out', async () => {
    await person('linus@example.test', 'READ_ONLY');
    const first = await signIn('linus@example.test');
    const second = await signIn('linus@example.test');
    expect(second.cookie).not.toBe(first.cookie);
    // A cookie a browser had before signing in (fixation) is no session.
    expect((await as({ ...first, cookie: 'x'.repeat(43) }, 'GET', '/v1/auth/session')).status).toBe(401);

    const out = await as(first, 'POST', '/v1/auth/sign-out');
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().join()).toMatch(/monitoring_session=;/);
    expect((await as(first, 'GET', '/v1/auth/session')).status).toBe(401);
    expect((await as(second, 'GET', '/v1/auth/session')).status).toBe(200);
  });

  it("refuses a write made with the cookie but without the CSRF token or this service's Origin", async () => {
    await person('margaret@example.test', 'ADMIN');
    const b = await signIn('margaret@example.test');
    const before = await svc.deps.sql`select count(*)::int as n from checks`;
    const forged = await as(b, 'POST', '/v1/checks/api', {
      csrf: false,
      headers: { origin: 'http://evil.example' },
      body: { name: 'forged', request: { url: 'http://127.0.0.1:9/', method: 'GET' } },
    });
    expect(forged.status).toBe(403);
    expect(
      (await as(b, 'POST', '/v1/checks/api', { csrf: false, body: { name: 'forged', request: { url: 'http://127.0.0.1:9/', method: 'GET' } } })).status,
    ).toBe(403);
    expect((await as(b, 'POST', '/v1/auth/sign-out', { csrf: false, headers: { origin: 'http://evil.example' } })).status).toBe(403);
    expect(await svc.deps.sql`select count(*)::int as n from checks`).toEqual(before);
    // The service's own Origin is enough (a same-site form); reads need neither.
    const own = await as(b, 'POST', '/v1/checks/api', {
      csrf: false,
      headers: { origin: svc.url },
      body: { name: 'own origin', request: { url: 'http://127.0.0.1:9/', method: 'GET' } },
    });
    expect(own.status, own.text).toBe(201);
    expect((await as(b, 'GET', '/v1/checks', { csrf: false })).status).toBe(200);
  });

  it('ends a session idle too long or past its end', async () => {
    await person('barbara@example.test', 'READ_ONLY');
    const idle = await signIn('barbara@example.test');
    const old = await signIn('barbara@example.test');
    // SESSION_IDLE_MINUTES is 480 by default: unused for 9 hours, a session is over.
    await svc.deps.sql`update user_sessions set last_seen_at = now() - interval '9 hours' where token_hash = ${tokenHash(idle.cookie)}`;
    expect((await as(idle, 'GET', '/v1/auth/session')).status).toBe(401);
    expect((await as(old, 'GET', '/v1/auth/session')).status).toBe(200);
    // Used or not, it ends SESSION_MAX_HOURS after sign-in.
    // Ended behind the API's back while kept: Postgres announces it and the service forgets the session within
    // moments (the announcement arrives on another connection, so not necessarily before the next request).
    await svc.deps.sql`update user_sessions set expires_at = now() - interval '1 second' where token_hash = ${tokenHash(old.cookie)}`;
    await expect.poll(async () => (await as(old, 'GET', '/v1/auth/session')).status, { timeout: 2000 }).toBe(401);
  });

  it('ends every other session when the password changes, and keeps the policy', async () => {
    await person('alan@example.test', 'READ_ONLY');
    const here = await signIn('alan@example.test');
    const elsewhere = await signIn('alan@example.test');
    const short = await as(here, 'POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'short' } });
    expectFieldError(short, 'body.newPassword', 'password');
    const common = await as(here, 'POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'password1234' } });
    expect(common.status).toBe(400);
    expect(common.body.message).toMatch(/common/);
    expect((await as(here, 'POST', '/v1/auth/password', { body: { currentPassword: 'wrong wrong', newPassword: 'a much better one 42' } })).status).toBe(401);
    expect((await as(here, 'POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'a much better one 42' } })).status).toBe(204);
    expect((await as(here, 'GET', '/v1/auth/session')).status).toBe(200);
    expect((await as(elsewhere, 'GET', '/v1/auth/session')).status).toBe(401);
    expect((await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'alan@example.test', password: PASSWORD } })).status).toBe(401);
    await signIn('alan@example.test', 'a much better one 42');
  });

  it('resets a password by a mailed single-use link, the same answer for an unknown address', async () => {
    const user = await person('hedy@example.test', 'READ_ONLY');
    const before = await signIn('hedy@example.test');
    expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'nobody-here@example.test' } })).status).toBe(202);
    expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'hedy@example.test' } })).status).toBe(202);
    const [mail] = await waitFor(
      async () => smtp.mails.filter((m) => m.to && JSON.stringify(m.to).includes('hedy@example.test')),
      (m) => m.length >= 1,
    );
    expect(smtp.mails.filter((m) => JSON.stringify(m.to).includes('nobody-here'))).toHaveLength(0);
    const token = /\n([\w-]{40,})\n/.exec(mail!.text!)![1]!;
    // Once sent, the mail's body (and its token) is not kept.
    await waitFor(
      async () => svc.deps.sql`select body from account_mails where to_address = 'hedy@example.test' and sent_at is not null`,
      (r) => r.length === 1,
    );
    expect((await svc.deps.sql`select body from account_mails where to_address = 'hedy@example.test'`)[0]!.body).toBe('');

    expect((await svc.call('POST', '/v1/auth/password-reset/confirm', { key: null, body: { token, password: 'abc' } })).status).toBe(400);
    expect(
      (await svc.call('POST', '/v1/auth/password-reset/confirm', { key: null, body: { token, password: 'frequency hopping spread spectrum' } })).status,
    ).toBe(204);
    expect(
      (await svc.call('POST', '/v1/auth/password-reset/confirm', { key: null, body: { token, password: 'frequency hopping spread spectrum 2' } })).status,
    ).toBe(401);
    expect((await as(before, 'GET', '/v1/auth/session')).status).toBe(401);
    const after = await signIn('hedy@example.test', 'frequency hopping spread spectrum');
    expect(after.userId).toBe(user.id);
  });

  it('turns a TOTP second factor on with recovery codes; sign-in then needs a code, and a recovery code works once', async () => {
    await person('radia@example.test', 'READ_WRITE');
    const b = await signIn('radia@example.test');
    const setup = await as(b, 'POST', '/v1/auth/two-factor/setup');
    expect(setup.status).toBe(200);
    expect(setup.body.uri).toMatch(/^otpauth:\/\/totp\//);
    const totp = OTPAuth.URI.parse(setup.body.uri) as OTPAuth.TOTP;
    expectFieldError(await as(b, 'POST', '/v1/auth/two-factor/enable', { body: { code: totp.generate() === '000000' ? '111111' : '000000' } }), 'body.code');
    const enabled = await as(b, 'POST', '/v1/auth/two-factor/enable', { body: { code: totp.generate() } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.recoveryCodes).toHaveLength(10);

    const noCode = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'radia@example.test', password: PASSWORD } });
    expect(noCode.status).toBe(401);
    expect(noCode.body.attributes).toEqual({ reason: 'second-factor' });
    // The code that turned it on was taken: it does not sign in (RFC 6238 section 5.2), the next step's code does, once.
    const enabling = totp.generate();
    expect((await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'radia@example.test', password: PASSWORD, code: enabling } })).status).toBe(
      401,
    );
    const next = totp.generate({ timestamp: Date.now() + 30_000 });
    await signIn('radia@example.test', PASSWORD, next);
    const replay = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'radia@example.test', password: PASSWORD, code: next } });
    expect(replay.status).toBe(401);
    // A code given and refused is a wrong code, said at its field (no code at all only asked for it, above).
    expect(replay.body.attributes).toMatchObject({ reason: 'second-factor', errors: [expect.objectContaining({ field: 'body.code' })] });
    const recovery = enabled.body.recoveryCodes[0];
    await signIn('radia@example.test', PASSWORD, recovery);
    expect((await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'radia@example.test', password: PASSWORD, code: recovery } })).status).toBe(
      401,
    );
    const members = await svc.call('GET', '/v1/accounts/me/members?search=radia');
    expect(members.body.members[0]).toMatchObject({ email: 'radia@example.test', mfaEnabled: true });
  });

  it('lets an Owner require a second factor: members without one reach only their own settings until they turn it on', async () => {
    const account = await createAccount(svc.deps.sql, 'strict');
    await person('owner-strict@example.test', 'OWNER', account.id);
    await person('member-strict@example.test', 'ADMIN', account.id);
    const owner = await signIn('owner-strict@example.test');
    const member = await signIn('member-strict@example.test');
    const header = { 'x-checkly-account': account.id };
    // An Admin may not decide it; the Owner may.
    expect((await as(member, 'PATCH', '/v1/account', { headers: header, body: { requireTwoFactor: true } })).status).toBe(403);
    const set = await as(owner, 'PATCH', '/v1/account', { headers: header, body: { requireTwoFactor: true } });
    expect(set.status).toBe(200);
    expect(set.body.requireTwoFactor).toBe(true);

    const refused = await as(member, 'GET', '/v1/checks', { headers: header });
    expect(refused.status).toBe(403);
    expect(refused.body.attributes).toEqual({ reason: 'second-factor-required' });
    const session = await as(member, 'GET', '/v1/auth/session', { headers: header });
    expect(session.body.secondFactorRequired).toBe(true);
    const setup = await as(member, 'POST', '/v1/auth/two-factor/setup', { headers: header });
    expect(setup.status).toBe(200);
    const totp = OTPAuth.URI.parse(setup.body.uri) as OTPAuth.TOTP;
    expect((await as(member, 'POST', '/v1/auth/two-factor/enable', { headers: header, body: { code: totp.generate() } })).status).toBe(200);
    expect((await as(member, 'GET', '/v1/checks', { headers: header })).status).toBe(200);
    // While the account requires it, it stays on.
    expect((await as(member, 'POST', '/v1/auth/two-factor/disable', { headers: header, body: { password: PASSWORD } })).status).toBe(409);
  });

  it('records in the audit log what is done without a key: sign-out, resets asked and done, and a write refused for want of its CSRF token', async () => {
    const user = await person('audited@example.test', 'READ_WRITE');
    const b = await signIn('audited@example.test');
    expect((await as(b, 'POST', '/v1/checks/api', { csrf: false, body: { name: 'forged', request: { url: 'http://127.0.0.1:9/' } } })).status).toBe(403);
    expect((await as(b, 'POST', '/v1/auth/sign-out')).status).toBe(204);
    expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'audited@example.test' } })).status).toBe(202);
    const token = /\n([\w-]{40,})\n/.exec(
      (
        await waitFor(
          async () => smtp.mails.filter((m) => JSON.stringify(m.to).includes('audited@example.test')),
          (m) => m.length === 1,
        )
      )[0]!.text!,
    )![1]!;
    expect(
      (await svc.call('POST', '/v1/auth/password-reset/confirm', { key: null, body: { token, password: 'frequency hopping spread spectrum' } })).status,
    ).toBe(204);
    const log = await svc.call('GET', `/v1/audit-logs?actorId=${user.id}&limit=100`);
    const seen = log.body.entries.map((e: { operation: string; status: number; path: string }) => `${e.operation} ${e.status} ${e.path}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        'createApiCheck 403 /v1/checks/api',
        'signOut 204 /v1/auth/sign-out',
        'requestPasswordReset 202 /v1/auth/password-reset',
        'resetPassword 204 /v1/auth/password-reset/confirm',
      ]),
    );
  });

  it('signs in once with the link create-user prints', async () => {
    const { signInLink } = await import('./auth-routes.js');
    const user = await person('first-owner@example.test', 'OWNER');
    const link = await signInLink(svc.deps.sql, svc.url, user.id);
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const cookie = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('monitoring_session='))!
      .split(';')[0]!
      .split('=')[1]!;
    expect((await as({ cookie, csrf: '', userId: user.id }, 'GET', '/v1/auth/session')).body.account.role).toBe('OWNER');
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieBrowser, startOidcProvider } from '../../test/support/oidc-provider.js';
import { startTestService, type TestService } from '../../test/support/service.js';
import { addMember } from './members.js';
import { hashPassword } from './passwords.js';
import { createAccount, createApiKey } from './repository.js';
import { ensureUser, setPassword } from './users.js';

const PASSWORD = 'correct horse battery staple';

/** OpenID Connect sign-in against a real provider (oidc-provider) the suite starts on 127.0.0.1. */
describe('OpenID Connect sign-in with just-in-time membership', () => {
  let svc: TestService;
  let idp: Awaited<ReturnType<typeof startOidcProvider>>;
  const client = { clientId: 'monitoring', clientSecret: 'a-client-secret-for-the-suite' };

  beforeAll(async () => {
    svc = await startTestService();
    idp = await startOidcProvider({ ...client, redirectUri: `${svc.url}/v1/auth/oidc/callback` });
    idp.people.set('alice', { sub: 'alice', email: 'alice@idp.test', name: 'Alice', groups: ['everyone', 'sre'] });
    idp.people.set('bob', { sub: 'bob', email: 'bob@idp.test', groups: ['everyone'] });
    idp.people.set('carol', { sub: 'carol', email: 'carol@idp.test', groups: ['platform-admins'] });
    const set = await svc.call('PUT', '/v1/account/oidc', {
      body: {
        issuer: idp.issuer,
        ...client,
        roleClaim: 'groups',
        roleMap: [
          { value: 'platform-admins', role: 'ADMIN' },
          { value: 'sre', role: 'READ_RUN' },
        ],
      },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.text).not.toContain(client.clientSecret);
  });
  afterAll(async () => {
    await svc?.stop();
    await idp?.close();
  });

  const host = () => new URL(svc.url).host;
  /** Starts at the service, signs `sub` in at the provider, and stops where the service sends the browser after its callback. */
  async function signInAs(sub: string, tamper?: (claims: Record<string, unknown>) => Record<string, unknown>) {
    const browser = new CookieBrowser();
    idp.signInNext(sub);
    if (tamper) idp.tamperNext(tamper);
    const { res, url } = await browser.follow(
      `${svc.url}/v1/auth/oidc/${svc.defaultAccountId}/start?redirect=/checks`,
      (next) => next.host === host() && !next.pathname.startsWith('/v1/'),
    );
    return {
      res,
      url,
      session: browser.cookie(host(), 'monitoring_session'),
      body: res.status >= 400 ? ((await res.json()) as { message: string }) : undefined,
    };
  }
  const memberships = (email: string) => svc.deps.sql`select m.role from account_members m join users u on u.id = m.user_id where u.email = ${email}`;

  it('signs a person in and makes them a member with the role their group maps to', async () => {
    const { res, url, session } = await signInAs('alice');
    expect(res.status).toBe(303);
    expect(url.pathname).toBe('/checks');
    expect(session).toBeDefined();
    const me = await svc.call('GET', '/v1/auth/session', { key: null, headers: { cookie: `monitoring_session=${session}` } });
    expect(me.body).toMatchObject({ user: { email: 'alice@idp.test', name: 'Alice' }, account: { id: svc.defaultAccountId, role: 'READ_RUN' } });
    // The first matching entry of the map wins.
    const carol = await signInAs('carol');
    const carolMe = await svc.call('GET', '/v1/auth/session', { key: null, headers: { cookie: `monitoring_session=${carol.session}` } });
    expect(carolMe.body.account.role).toBe('ADMIN');
    const log = await svc.call('GET', '/v1/audit-logs?operation=signInWithOidc');
    expect(log.body.entries.map((e: { actor: { name: string } }) => e.actor.name).sort()).toEqual(['alice@idp.test', 'carol@idp.test']);
  });

  it('refuses a person whose groups map to no role (no default): a 403 and no membership', async () => {
    const { res, session, body } = await signInAs('bob');
    expect(res.status).toBe(403);
    expect(body!.message).toMatch(/no role/);
    expect(session).toBeUndefined();
    expect(await memberships('bob@idp.test')).toEqual([]);
  });

  it.each([
    ['a wrong issuer', (c: Record<string, unknown>) => ({ ...c, iss: 'http://127.0.0.1:1/other' })],
    ['a wrong audience', (c: Record<string, unknown>) => ({ ...c, aud: 'another-client' })],
    ['a wrong nonce', (c: Record<string, unknown>) => ({ ...c, nonce: 'not-the-one-sent' })],
    ['an expired token', (c: Record<string, unknown>) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })],
  ])('refuses an ID token with %s, though signed by the provider', async (_what, tamper) => {
    idp.people.set('mallory', { sub: 'mallory', email: 'mallory@idp.test', groups: ['platform-admins'] });
    const { res, session, body } = await signInAs('mallory', tamper);
    expect(res.status).toBe(401);
    expect(body!.message).toMatch(/did not hold/);
    expect(session).toBeUndefined();
    expect(await memberships('mallory@idp.test')).toEqual([]);
  });

  it('refuses a callback that did not start here (no state cookie)', async () => {
    const res = await fetch(`${svc.url}/v1/auth/oidc/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { attributes: unknown }).attributes).toEqual({ reason: 'state' });
  });

  it('keeps the client secret to itself and refuses an issuer the outbound policy blocks', async () => {
    const shown = await svc.call('GET', '/v1/account/oidc');
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ issuer: idp.issuer, clientId: client.clientId, startUrl: `${svc.url}/v1/auth/oidc/${svc.defaultAccountId}/start` });
    expect(shown.text).not.toContain(client.clientSecret);
    const blocked = await svc.call('PUT', '/v1/account/oidc', { body: { issuer: 'http://10.1.2.3/', ...client } });
    expect(blocked.status).toBe(400);
    expect(blocked.body.message).toMatch(/outbound policy/);
    // Readers may not see or change it.
    const { createApiKey } = await import('./repository.js');
    const { key } = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-write' });
    expect((await svc.call('GET', '/v1/account/oidc', { key })).status).toBe(403);
  });

  describe("identity bound to its account: another tenant's provider signs nobody in", () => {
    /** Account B, whose Admin runs the suite's provider as their own (a hostile one: it asserts whatever email the test says). */
    let b: { id: string; adminKey: string };
    beforeAll(async () => {
      const account = await createAccount(svc.deps.sql, 'tenant b');
      b = { id: account.id, adminKey: (await createApiKey(svc.deps.sql, { accountId: account.id, role: 'admin' })).key };
      const set = await svc.call('PUT', '/v1/account/oidc', {
        key: b.adminKey,
        body: { issuer: idp.issuer, ...client, roleMap: [{ value: 'platform-admins', role: 'ADMIN' }] },
      });
      expect(set.status, set.text).toBe(200);
    });

    async function person(email: string, role: 'OWNER' | 'ADMIN' | 'READ_WRITE', accountId: string) {
      const user = await ensureUser(svc.deps.sql, email, email.split('@')[0]);
      await setPassword(svc.deps.sql, user.id, await hashPassword(PASSWORD));
      await addMember(svc.deps.sql, accountId, user.id, role);
      return user;
    }
    async function passwordSession(email: string, code?: string) {
      const res = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email, password: PASSWORD, ...(code ? { code } : {}) } });
      expect(res.status, res.text).toBe(200);
      const cookie = res.headers
        .getSetCookie()
        .find((c) => c.startsWith('monitoring_session='))!
        .split(';')[0]!
        .split('=')[1]!;
      return { cookie, csrf: res.body.csrfToken as string };
    }
    const withSession = (session: string, headers: Record<string, string> = {}) => ({
      key: null,
      headers: { cookie: `monitoring_session=${session}`, ...headers },
    });
    /** Signs `sub` in at the provider, starting at account `accountId`'s start URL, in `browser`. */
    async function through(accountId: string, sub: string, browser = new CookieBrowser(), redirect = '/checks') {
      idp.signInNext(sub);
      const { res, url } = await browser.follow(
        `${svc.url}/v1/auth/oidc/${accountId}/start?redirect=${encodeURIComponent(redirect)}`,
        (next) => next.host === host() && !next.pathname.startsWith('/v1/'),
      );
      return {
        res,
        url,
        browser,
        session: browser.cookie(host(), 'monitoring_session'),
        body: res.status >= 400 ? ((await res.json()) as { message: string; attributes?: { reason: string } }) : undefined,
      };
    }
    const sessionsOf = async (userId: string) => (await svc.deps.sql`select count(*)::int as n from user_sessions where user_id = ${userId}`)[0]!.n as number;

    it('refuses to sign an existing person in through a provider they did not link, whatever email it asserts (any letter case)', async () => {
      const owner = await person('owner-a@victim.test', 'OWNER', svc.defaultAccountId);
      const before = await sessionsOf(owner.id);
      idp.people.set('evil', { sub: 'evil', email: 'OWNER-A@Victim.TEST', groups: ['platform-admins'] });
      const { res, session, body } = await through(b.id, 'evil');
      expect(res.status).toBe(409);
      expect(body!.attributes).toEqual({ reason: 'not-linked' });
      expect(session).toBeUndefined();
      // Nothing changed: no session, no membership of B, nothing bound, nothing in A's audit log by the victim.
      expect(await sessionsOf(owner.id)).toBe(before);
      expect(await svc.deps.sql`select 1 from account_members where user_id = ${owner.id} and account_id = ${b.id}`).toHaveLength(0);
      expect(await svc.deps.sql`select 1 from user_identities where user_id = ${owner.id}`).toHaveLength(0);
      const log = await svc.call('GET', `/v1/audit-logs?actorId=${owner.id}`);
      expect(log.body.entries).toEqual([]);
      // B's log has the refusal, naming the email that was asserted and no person.
      const refused = await svc.call('GET', '/v1/audit-logs?operation=signInFailed', { key: b.adminKey });
      expect(refused.body.entries[0]).toMatchObject({ actor: { type: 'user', id: null, name: 'OWNER-A@Victim.TEST' }, status: 409 });
    });

    it('makes a new person through the provider, bound to it, with a session that acts for that account only', async () => {
      idp.people.set('newbie', { sub: 'newbie', email: 'newbie@tenant-b.test', groups: ['platform-admins'] });
      const first = await through(b.id, 'newbie');
      expect(first.res.status).toBe(303);
      const me = await svc.call('GET', '/v1/auth/session', withSession(first.session!));
      expect(me.body, me.text).toMatchObject({ account: { id: b.id, role: 'ADMIN' }, accounts: [{ id: b.id }], onlyAccountId: b.id });
      const [identity] = await svc.deps.sql`select issuer, subject from user_identities where user_id = ${me.body.user.id}`;
      expect(identity).toEqual({ issuer: idp.issuer, subject: 'newbie' });

      // Later a member of the default account too (an invitation): the provider's session still acts for B only.
      await addMember(svc.deps.sql, svc.defaultAccountId, me.body.user.id, 'READ_WRITE');
      const again = await through(b.id, 'newbie');
      const elsewhere = await svc.call('GET', '/v1/checks', withSession(again.session!, { 'x-checkly-account': svc.defaultAccountId }));
      expect(elsewhere.status).toBe(403);
      expect((await svc.call('GET', '/v1/auth/session', withSession(again.session!))).body.accounts).toEqual([{ id: b.id, name: 'tenant b' }]);
      // A key it makes is kept to B; it sets no first password, and sets up no second factor for a person who has a password.
      const csrf = (await svc.call('GET', '/v1/auth/session', withSession(again.session!))).body.csrfToken;
      const made = await svc.call('POST', '/v1/users/me/api-keys', { ...withSession(again.session!, { 'x-csrf-token': csrf }), body: { name: 'from sso' } });
      expect(made.status, made.text).toBe(201);
      expect((await svc.call('GET', '/v1/checks', { key: made.body.key })).status).toBe(200);
      expect((await svc.call('GET', '/v1/checks', { key: made.body.key, headers: { 'x-checkly-account': svc.defaultAccountId } })).status).toBe(403);
      const password = await svc.call('POST', '/v1/auth/password', {
        ...withSession(again.session!, { 'x-csrf-token': csrf }),
        body: { newPassword: 'a brand new passphrase 9' },
      });
      expect(password.status).toBe(403);
      expect(password.body.attributes).toEqual({ reason: 'provider-session' });
      expect((await svc.deps.sql`select password_hash from users where id = ${me.body.user.id}`)[0]!.password_hash).toBeNull();
    });

    it('links an identity only for the signed-in person who asks; then the provider signs them in to that account', async () => {
      const linker = await person('linker@tenant-b.test', 'READ_WRITE', b.id);
      const own = await passwordSession('linker@tenant-b.test');
      idp.people.set('linker-at-idp', { sub: 'linker-at-idp', email: 'someone-else@corp.test', groups: ['platform-admins'] });
      // A key cannot link, nor a session without its CSRF token.
      expect((await svc.call('POST', '/v1/account/oidc/link', { key: b.adminKey, body: {} })).status).toBe(403);
      expect((await svc.call('POST', '/v1/account/oidc/link', { ...withSession(own.cookie, { 'x-checkly-account': b.id }), body: {} })).status).toBe(403);
      const asked = await svc.call('POST', '/v1/account/oidc/link', {
        ...withSession(own.cookie, { 'x-checkly-account': b.id, 'x-csrf-token': own.csrf }),
        body: { redirect: '/settings' },
      });
      expect(asked.status, asked.text).toBe(200);
      const browser = new CookieBrowser();
      browser.setCookie(host(), 'monitoring_session', own.cookie);
      browser.setCookie(
        host(),
        'monitoring_oidc',
        asked.headers
          .getSetCookie()
          .find((c) => c.startsWith('monitoring_oidc='))!
          .split(';')[0]!
          .split('=')[1]!,
      );
      idp.signInNext('linker-at-idp');
      const done = await browser.follow(asked.body.url, (next) => next.host === host() && !next.pathname.startsWith('/v1/'));
      expect(done.res.status).toBe(303);
      expect(done.url.pathname).toBe('/settings');
      const listed = await svc.call('GET', '/v1/users/me/identities', withSession(own.cookie));
      expect(listed.body).toEqual([
        expect.objectContaining({ accountId: b.id, issuer: idp.issuer, subject: 'linker-at-idp', email: 'someone-else@corp.test' }),
      ]);
      // Now the provider signs them in, their role from its groups (just-in-time, as anyone it signs in).
      const signed = await through(b.id, 'linker-at-idp');
      expect(signed.res.status, JSON.stringify(signed.body)).toBe(303);
      const me = await svc.call('GET', '/v1/auth/session', withSession(signed.session!));
      expect(me.body).toMatchObject({ user: { id: linker.id }, account: { id: b.id, role: 'ADMIN' } });
      // Unlinked, it does not: the provider's identity is someone new to this service (its own email), never the linker.
      const unlinked = await svc.call('DELETE', `/v1/users/me/identities/${listed.body[0].id}`, withSession(own.cookie, { 'x-csrf-token': own.csrf }));
      expect(unlinked.status).toBe(204);
      const after = await through(b.id, 'linker-at-idp');
      expect((await svc.call('GET', '/v1/auth/session', withSession(after.session!))).body.user).toMatchObject({ email: 'someone-else@corp.test' });
      expect((await svc.call('GET', '/v1/auth/session', withSession(after.session!))).body.user.id).not.toBe(linker.id);
    });

    it("asks for the person's own second factor after the provider, once per code, unless the account says its provider's MFA stands in", async () => {
      const user = await person('two-step@tenant-b.test', 'READ_WRITE', b.id);
      const own = await passwordSession('two-step@tenant-b.test');
      const headers = { 'x-csrf-token': own.csrf };
      const setup = await svc.call('POST', '/v1/auth/two-factor/setup', withSession(own.cookie, headers));
      const totp = OTPAuth.URI.parse(setup.body.uri) as OTPAuth.TOTP;
      expect((await svc.call('POST', '/v1/auth/two-factor/enable', { ...withSession(own.cookie, headers), body: { code: totp.generate() } })).status).toBe(200);
      await svc.deps
        .sql`insert into user_identities (account_id, issuer, subject, user_id, email) values (${b.id}, ${idp.issuer}, 'two-step', ${user.id}, 'two-step@tenant-b.test')`;
      idp.people.set('two-step', { sub: 'two-step', email: 'two-step@tenant-b.test', groups: ['platform-admins'] });

      const started = await through(b.id, 'two-step', new CookieBrowser(), '/checks');
      expect(started.res.status).toBe(303);
      expect(`${started.url.pathname}${started.url.search}`).toBe('/sign-in?step=code&next=%2Fchecks');
      expect(started.session).toBeUndefined();
      const pending = started.browser.cookie(host(), 'monitoring_pending')!;
      const finish = (code: string) =>
        svc.call('POST', '/v1/auth/sign-in/second-factor', { key: null, headers: { cookie: `monitoring_pending=${pending}` }, body: { code } });
      expect((await finish('000000')).status).toBe(401);
      const code = totp.generate({ timestamp: Date.now() + 30_000 });
      const finished = await finish(code);
      expect(finished.status, finished.text).toBe(200);
      expect(finished.body).toMatchObject({ user: { id: user.id }, accounts: [{ id: b.id }], onlyAccountId: b.id });
      expect((await finish(code)).status).toBe(401);

      const trusted = await svc.call('PUT', '/v1/account/oidc', {
        key: b.adminKey,
        body: { issuer: idp.issuer, ...client, roleMap: [{ value: 'platform-admins', role: 'ADMIN' }], trustProviderMfa: true },
      });
      expect(trusted.body.trustProviderMfa).toBe(true);
      const direct = await through(b.id, 'two-step');
      expect(direct.url.pathname).toBe('/checks');
      expect(direct.session).toBeDefined();
      await svc.call('PUT', '/v1/account/oidc', {
        key: b.adminKey,
        body: { issuer: idp.issuer, ...client, roleMap: [{ value: 'platform-admins', role: 'ADMIN' }] },
      });
    });

    it('binds a person who signed in through the provider before identities existed, once, to the identity they come with', async () => {
      const legacy = await person('legacy@tenant-b.test', 'READ_WRITE', b.id);
      await svc.deps.sql`insert into user_identities_unbound (account_id, user_id) values (${b.id}, ${legacy.id})`;
      idp.people.set('legacy-1', { sub: 'legacy-1', email: 'legacy@tenant-b.test', groups: ['platform-admins'] });
      idp.people.set('legacy-2', { sub: 'legacy-2', email: 'Legacy@tenant-b.test', groups: ['platform-admins'] });
      expect((await through(b.id, 'legacy-1')).res.status).toBe(303);
      // Another identity asserting the same email afterwards is refused.
      expect((await through(b.id, 'legacy-2')).res.status).toBe(409);
    });

    it('refuses a provider that does not say the email is verified', async () => {
      idp.people.set('unsure', { sub: 'unsure', email: 'unsure@tenant-b.test', groups: ['platform-admins'], emailVerified: null });
      const { res, session, body } = await through(b.id, 'unsure');
      expect(res.status).toBe(401);
      expect(body!.message).toMatch(/verified/);
      expect(session).toBeUndefined();
    });

    // As they arrive in the query string: a backslash, a tab, two slashes, CR/LF, another origin, no leading slash.
    it.each([['/%5Cevil.test'], ['/\\evil.test'], ['/%09/evil.test'], ['%2F%2Fevil.test'], ['/ok%0D%0ASet-Cookie:%20x=1'], ['https://evil.test/'], ['evil']])(
      'refuses to send the browser anywhere but a path of its own afterwards: %s',
      async (redirect) => {
        const res = await fetch(`${svc.url}/v1/auth/oidc/${b.id}/start?redirect=${redirect}`, { redirect: 'manual' });
        expect(res.status).toBe(400);
      },
    );

    it('reads at most 1 MiB of what a provider answers, and checks the provider when the settings are saved', async () => {
      let served = 0;
      const huge = http.createServer((_req, res) => {
        served++;
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const more = () => {
          while (sent < 300 && res.write(chunk)) sent++;
          if (sent < 300) res.once('drain', more);
          else res.end('{}');
        };
        res.write('{"issuer":"x",');
        more();
      });
      await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
      const issuer = `http://127.0.0.1:${(huge.address() as AddressInfo).port}`;
      try {
        const set = await svc.call('PUT', '/v1/account/oidc', { key: b.adminKey, body: { issuer, ...client } });
        expect(set.status).toBe(400);
        expect(set.body.message, set.text).toMatch(/larger than 1048576 bytes/);
        const unreachable = await svc.call('PUT', '/v1/account/oidc', { key: b.adminKey, body: { issuer: 'http://127.0.0.1:9/', ...client } });
        expect(unreachable.status).toBe(400);
        // B's settings did not change.
        expect((await svc.call('GET', '/v1/account/oidc', { key: b.adminKey })).body.issuer).toBe(idp.issuer);
        expect(served).toBe(1);
      } finally {
        huge.closeAllConnections();
        await new Promise((resolve) => huge.close(resolve));
      }
    });
  });
});

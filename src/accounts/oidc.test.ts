import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieBrowser, startOidcProvider } from '../../test/support/oidc-provider.js';
import { startTestService, type TestService } from '../../test/support/service.js';

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
      body: { issuer: idp.issuer, ...client, roleClaim: 'groups', roleMap: [{ value: 'platform-admins', role: 'ADMIN' }, { value: 'sre', role: 'READ_RUN' }] },
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
    const { res, url } = await browser.follow(`${svc.url}/v1/auth/oidc/${svc.defaultAccountId}/start?redirect=/checks`, (next) => next.host === host() && !next.pathname.startsWith('/v1/'));
    return { res, url, session: browser.cookie(host(), 'monitoring_session'), body: res.status >= 400 ? ((await res.json()) as { message: string }) : undefined };
  }
  const memberships = (email: string) => svc.deps.sql`select m.role from account_members m join users u on u.id = m.user_id where u.email = ${email}`;

  it("signs a person in and makes them a member with the role their group maps to", async () => {
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
});

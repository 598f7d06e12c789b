import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startDnsTarget, startHttpTarget } from '../../test/support/targets.js';
import { addMember } from './members.js';
import { hashesStarted, hashPassword } from './passwords.js';
import { createUserToken, ensureUser, setPassword } from './users.js';

const PASSWORD = 'correct horse battery staple';

/**
 * Sign-in that cannot starve the service: attempts are counted before any hashing, hashes run on threads of their
 * own (capped, a fast 503 past the cap), check targets resolve with c-ares; and the limits are keyed so that nobody
 * locks another person out. The service trusts one proxy hop, so each test is its own client address.
 */
describe('sign-in limits', () => {
  let svc: TestService;
  let http: HttpTarget;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;

  beforeAll(async () => {
    [http, dns] = await Promise.all([startHttpTarget(), startDnsTarget({ 'shop.test': '127.0.0.1' })]);
    svc = await startTestService({
      RUNNER: 'on',
      RUNNER_LOCATIONS: 'eu-west-1',
      // Check targets by name: `*.test` from the suite's own name server, never the machine's.
      OUTBOUND_ALLOW: '127.0.0.0/8,*.test',
      DNS_SERVERS: `127.0.0.1:${dns.udpPort}`,
      TRUST_PROXY: 'true',
      SIGN_IN_FAILURES: '10',
      PASSWORD_HASH_QUEUE: '4',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([http?.close(), dns?.close()]);
  });

  async function person(email: string) {
    const user = await ensureUser(svc.deps.sql, email, email.split('@')[0]);
    await setPassword(svc.deps.sql, user.id, await hashPassword(PASSWORD));
    await addMember(svc.deps.sql, svc.defaultAccountId, user.id, 'READ_WRITE');
    return user;
  }
  const from = (address: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': address, ...extra });
  const signIn = (email: string, password: string, headers: Record<string, string>) =>
    svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email, password }, headers });
  const cookieOf = (res: ApiResponse, name: string) =>
    res.headers
      .getSetCookie()
      .find((c) => c.startsWith(`${name}=`))
      ?.split(';')[0];

  it('refuses a burst before hashing it, while a check to a host name passes and /ready stays 200', async () => {
    await person('burst@example.test');
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: {
        name: 'by name',
        locations: ['eu-west-1'],
        frequency: 60,
        retryStrategy: null,
        request: { method: 'GET', url: `${http.url.replace('127.0.0.1', 'shop.test')}/ok` },
      },
    });
    expect(check.status, check.text).toBe(201);
    const hashedBefore = hashesStarted();

    // 300 at once: 120 from one address (its limit is 50), 30 for one email from many addresses (its limit is 10), the rest spread.
    const burst = Promise.all(
      Array.from({ length: 300 }, (_, i) => {
        const [email, address] =
          i < 120 ? [`nobody-${i}@example.test`, '10.1.0.1'] : i < 150 ? ['burst@example.test', `10.2.0.${i}`] : [`other-${i}@example.test`, `10.3.${i}.1`];
        return signIn(email, 'not the password', from(address)).then((r) => ({ i, status: r.status, retry: r.headers.get('retry-after') }));
      }),
    );
    const ready: number[] = [];
    const watching = (async () => {
      for (let n = 0; n < 10; n++) ready.push((await fetch(`${svc.url}/ready`)).status);
    })();
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.body.id] } } });
    expect(trigger.status).toBe(201);
    const [answers] = await Promise.all([burst, watching]);
    const done = await waitFor(
      () => svc.call('GET', `/v2/check-sessions/${trigger.body.sessions[0].checkSessionId}/completion?maxWaitSeconds=5`),
      (r) => r.status !== 408,
      30_000,
    );
    const result = await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.body.id}/${done.body.results[0].checkResultId}`),
      (r) => r.status === 200,
    );

    const tally = answers.reduce<Record<number, number>>((t, a) => ((t[a.status] = (t[a.status] ?? 0) + 1), t), {});
    console.log(
      `sign-in burst: 300 at once -> ${JSON.stringify(tally)}, ${hashesStarted() - hashedBefore} hashed; /ready ${JSON.stringify(ready)}; check by name ${result.body.responseTime} ms`,
    );
    expect(result.body.hasFailures, JSON.stringify(result.body.apiCheckResult?.requestError ?? result.body)).toBe(false);
    expect(ready.every((s) => s === 200)).toBe(true);
    const oneAddress = answers.filter((a) => a.i < 120);
    const oneEmail = answers.filter((a) => a.i >= 120 && a.i < 150);
    // Past a limit, refused (429) or, past the hashes that may run and wait, told to come back (503): never hashed.
    expect(oneAddress.filter((a) => a.status === 401).length).toBeLessThanOrEqual(50);
    expect(oneEmail.filter((a) => a.status === 401).length).toBeLessThanOrEqual(10);
    expect(answers.every((a) => [401, 429, 503].includes(a.status))).toBe(true);
    expect(answers.filter((a) => a.status === 429 || a.status === 503).every((a) => Number(a.retry) > 0)).toBe(true);
    // Each 401 is one hash, and the decoy an unknown email is checked against is made once a process.
    expect(hashesStarted() - hashedBefore).toBeLessThanOrEqual(answers.filter((a) => a.status === 401).length + 1);
    expect(hashesStarted() - hashedBefore).toBeLessThan(300);
  });

  it('does not let others lock a person out: a browser they signed in with before keeps its own count', async () => {
    await person('victim@example.test');
    const earlier = await signIn('victim@example.test', PASSWORD, from('10.4.0.1'));
    expect(earlier.status).toBe(200);
    const device = cookieOf(earlier, 'monitoring_device')!;
    expect(device).toBeDefined();
    // Someone else spends the email's limit from many addresses.
    for (let i = 0; i < 10; i++) expect((await signIn('victim@example.test', `wrong guess ${i}`, from(`10.5.0.${i}`))).status).toBe(401);
    expect((await signIn('victim@example.test', PASSWORD, from('10.5.1.1'))).status).toBe(429);
    // The person's own browser still signs in; a cookie made for another email does not help.
    expect((await signIn('victim@example.test', PASSWORD, from('10.4.0.1', { cookie: device }))).status).toBe(200);
    await person('someone@example.test');
    const theirs = cookieOf(await signIn('someone@example.test', PASSWORD, from('10.4.0.2')), 'monitoring_device')!;
    expect((await signIn('victim@example.test', PASSWORD, from('10.4.0.2', { cookie: theirs }))).status).toBe(429);
    // The device has a count of its own: guessing from it stops too.
    for (let i = 0; i < 10; i++) await signIn('victim@example.test', `wrong ${i}`, from('10.4.0.3', { cookie: device }));
    expect((await signIn('victim@example.test', PASSWORD, from('10.4.0.3', { cookie: device }))).status).toBe(429);
  });

  it("keys the limits of public routes by client address (the leftmost X-Forwarded-For is the client's own claim), and resets by email too", async () => {
    for (let i = 0; i < 10; i++) {
      const res = await svc.call('POST', '/v1/auth/password-reset', {
        key: null,
        body: { email: `anyone-${i}@example.test` },
        headers: from(`203.0.113.9, 10.6.0.1`),
      });
      expect(res.status).toBe(202);
    }
    // The same proxy hop, whatever the client wrote before it: the same address, limited.
    expect(
      (await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'x@example.test' }, headers: from('198.51.100.7, 10.6.0.1') })).status,
    ).toBe(429);
    // Another address is not.
    expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'x@example.test' }, headers: from('10.6.0.2') })).status).toBe(202);
    // One email: three resets in 15 minutes, whoever asks.
    for (let i = 0; i < 2; i++)
      expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'X@example.test' }, headers: from(`10.6.1.${i}`) })).status).toBe(
        202,
      );
    expect((await svc.call('POST', '/v1/auth/password-reset', { key: null, body: { email: 'x@example.test' }, headers: from('10.6.2.1') })).status).toBe(429);
  });

  it("limits a session's guesses of its person's password, and a reset ends the person's keys", async () => {
    const user = await person('guesser@example.test');
    const signed = await signIn('guesser@example.test', PASSWORD, from('10.7.0.1'));
    const session = { key: null, headers: { cookie: cookieOf(signed, 'monitoring_session')!, 'x-csrf-token': signed.body.csrfToken } };
    const key = await svc.call('POST', '/v1/users/me/api-keys', { ...session, body: { name: 'mine' } });
    expect(key.status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push(
        (await svc.call('POST', '/v1/auth/password', { ...session, body: { currentPassword: `guess ${i}`, newPassword: 'a fresh long passphrase' } })).status,
      );
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect((await svc.call('POST', '/v1/auth/two-factor/disable', { ...session, body: { password: PASSWORD } })).status).toBe(429);

    // A reset by mail: every key of the person stops.
    const token = await createUserToken(svc.deps.sql, user.id, 'password-reset', 60_000);
    expect(
      (await svc.call('POST', '/v1/auth/password-reset/confirm', { key: null, body: { token, password: 'frequency hopping spread spectrum' } })).status,
    ).toBe(204);
    expect((await svc.call('GET', '/v1/checks', { key: key.body.key })).status).toBe(401);
  });
});

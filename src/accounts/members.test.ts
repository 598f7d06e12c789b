import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../test/support/receivers.js';
import { type ApiResponse, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import type { AccountRole } from '../model/accounts.js';
import { sealSecret } from '../storage/secret-box.js';
import { addMember } from './members.js';
import { hashPassword } from './passwords.js';
import { createAccount } from './repository.js';
import { ensureUser, setPassword } from './users.js';

const PASSWORD = 'members and their roles';

describe("members (the anchor's shapes), invitations, people's own keys and the audit log", () => {
  let svc: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    smtp = await startSmtpSink();
    svc = await startTestService({ SMTP_URL: smtp.url, STATE_SWEEP_INTERVAL_MS: '200' });
    // One person of each role, each with a key of their own.
    for (const role of ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as AccountRole[]) {
      const email = `${role.toLowerCase().replace('_', '-')}@team.test`;
      const user = await ensureUser(svc.deps.sql, email, `${role} person`);
      await setPassword(svc.deps.sql, user.id, await hashPassword(PASSWORD));
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, role);
      ids[role] = user.id;
      const signIn = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email, password: PASSWORD } });
      const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
      const key = await svc.call('POST', '/v1/users/me/api-keys', {
        key: null,
        headers: { cookie, 'x-csrf-token': signIn.body.csrfToken },
        body: { name: `${role} laptop` },
      });
      expect(key.status, key.text).toBe(201);
      keys[role] = key.body.key;
    }
  });
  afterAll(async () => {
    await svc?.stop();
    await smtp?.close();
  });

  const members = (query = '', key = keys.READ_ONLY) => svc.call('GET', `/v1/accounts/me/members${query}`, { key });

  it("lists members with the anchor's fields, searches, filters and pages with an opaque cursor", async () => {
    const all = await members();
    expect(all.status).toBe(200);
    expect(all.body.length).toBe(5);
    expect(all.body.nextId).toBeNull();
    const owner = all.body.members.find((m: { role: string }) => m.role === 'OWNER');
    expect(owner).toEqual({
      type: 'member',
      accountId: svc.defaultAccountId,
      userId: ids.OWNER,
      name: 'OWNER person',
      email: 'owner@team.test',
      role: 'OWNER',
      status: 'ACTIVE',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      isSupportMembership: false,
      ssoEnabled: false,
      mfaEnabled: false,
    });
    expect((await members('?search=READ-R')).body.members.map((m: { email: string }) => m.email)).toEqual(['read-run@team.test']);
    expect((await members('?role=ADMIN')).body.members).toHaveLength(1);
    expect((await members('?type=invite')).body.members).toEqual([]);

    const first = await members('?limit=2');
    expect(first.body).toMatchObject({ length: 2, nextId: expect.any(String) });
    const second = await members(`?limit=2&nextId=${first.body.nextId}`);
    const third = await members(`?limit=2&nextId=${second.body.nextId}`);
    expect(third.body.nextId).toBeNull();
    const paged = [...first.body.members, ...second.body.members, ...third.body.members].map((m: { userId: string }) => m.userId);
    expect(new Set(paged).size).toBe(5);
    // A cursor belongs to its query; without limit it means nothing.
    expect((await members(`?limit=2&role=ADMIN&nextId=${first.body.nextId}`)).status).toBe(400);
    expect((await members(`?nextId=${first.body.nextId}`)).status).toBe(400);
    expect((await svc.call('GET', `/v1/accounts/${svc.defaultAccountId}/members?role=OWNER`, { key: keys.READ_ONLY })).body.members[0].userId).toBe(ids.OWNER);
  });

  it('keeps at least one Owner, and only an Owner changes or removes an Owner', async () => {
    const demoteLast = await svc.call('PATCH', `/v1/accounts/me/members/${ids.OWNER}`, { key: keys.OWNER, body: { role: 'ADMIN' } });
    expect(demoteLast.status).toBe(409);
    expect(demoteLast.body.message).toMatch(/at least one Owner/);
    expect((await svc.call('DELETE', `/v1/accounts/me/members/${ids.OWNER}`, { key: keys.OWNER })).status).toBe(409);
    expect((await svc.call('PATCH', `/v1/accounts/me/members/${ids.OWNER}`, { key: keys.ADMIN, body: { role: 'READ_ONLY' } })).status).toBe(403);
    // OWNER is no role to set through the API (the anchor's rule).
    expect((await svc.call('PATCH', `/v1/accounts/me/members/${ids.ADMIN}`, { key: keys.OWNER, body: { role: 'OWNER' } })).status).toBe(400);
    // Writers are no admins.
    expect((await svc.call('PATCH', `/v1/accounts/me/members/${ids.READ_ONLY}`, { key: keys.READ_WRITE, body: { role: 'ADMIN' } })).status).toBe(403);
    expect((await members()).body.members.find((m: { userId: string }) => m.userId === ids.OWNER).role).toBe('OWNER');
  });

  it("stops a person's key when they are demoted or removed, and their session with it", async () => {
    const temp = await ensureUser(svc.deps.sql, 'temp@team.test', 'Temp');
    await setPassword(svc.deps.sql, temp.id, await hashPassword(PASSWORD));
    await addMember(svc.deps.sql, svc.defaultAccountId, temp.id, 'READ_WRITE');
    const signIn = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'temp@team.test', password: PASSWORD } });
    const browser = { cookie: signIn.headers.getSetCookie()[0]!.split(';')[0]!, 'x-csrf-token': signIn.body.csrfToken };
    const key = (await svc.call('POST', '/v1/users/me/api-keys', { key: null, headers: browser, body: { name: 'ci', expiresInDays: 30 } })).body.key as string;
    const check = { name: 'temp check', request: { url: 'http://127.0.0.1:9/', method: 'GET' } };
    expect((await svc.call('POST', '/v1/checks/api', { key, body: check })).status).toBe(201);

    const demoted = await svc.call('PATCH', `/v1/accounts/me/members/${temp.id}`, { key: keys.ADMIN, body: { role: 'READ_ONLY' } });
    expect(demoted.status).toBe(200);
    expect(demoted.body).toMatchObject({ userId: temp.id, role: 'READ_ONLY', status: 'ACTIVE' });
    expect((await svc.call('POST', '/v1/checks/api', { key, body: check })).status).toBe(403);
    expect((await svc.call('GET', '/v1/checks', { key })).status).toBe(200);

    const removed = await svc.call('DELETE', `/v1/accounts/me/members/${temp.id}`, { key: keys.ADMIN });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await svc.call('GET', '/v1/checks', { key })).status).toBe(403);
    expect((await svc.call('GET', '/v1/checks', { key: null, headers: browser })).status).toBe(403);
    expect((await svc.call('DELETE', `/v1/accounts/me/members/${temp.id}`, { key: keys.ADMIN })).status).toBe(404);
  });

  it('shows who made a key, when it was last used and when it expires; an expired key no longer works', async () => {
    // A key's last use is stamped off the request's path, so the first listing may not show it yet.
    await expect.poll(async () => (await svc.call('GET', '/v1/users/me/api-keys', { key: keys.READ_RUN })).body[0]?.lastUsedAt).toEqual(expect.any(String));
    const own = await svc.call('GET', '/v1/users/me/api-keys', { key: keys.READ_RUN });
    expect(own.status).toBe(200);
    expect(own.body).toEqual([
      expect.objectContaining({ name: 'READ_RUN laptop', maskedKey: `mk_****${keys.READ_RUN!.slice(-4)}`, lastUsedAt: expect.any(String), expiresAt: null }),
    ]);
    expect(own.text).not.toContain(keys.READ_RUN);
    // A service key is no person.
    expect((await svc.call('GET', '/v1/users/me/api-keys')).status).toBe(403);
    // An Admin's service key names the person who made it.
    const signIn = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email: 'admin@team.test', password: PASSWORD } });
    const made = await svc.call('POST', '/v1/api-keys', {
      key: null,
      headers: { cookie: signIn.headers.getSetCookie()[0]!.split(';')[0]!, 'x-csrf-token': signIn.body.csrfToken },
      body: { name: 'deploys', role: 'read-write' },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ createdBy: 'admin@team.test', lastUsedAt: null, expiresAt: null });

    // Expired behind the API's back (the key was just resolved and is kept): Postgres announces the change and the
    // service forgets the key within moments, not after KEY_CACHE_SECONDS.
    expect((await svc.call('GET', '/v1/checks', { key: keys.READ_RUN })).status).toBe(200);
    await svc.deps.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${own.body[0].id}`;
    await expect.poll(async () => (await svc.call('GET', '/v1/checks', { key: keys.READ_RUN })).status, { timeout: 2000 }).toBe(401);
    await svc.deps.sql`update api_keys set expires_at = null where id = ${own.body[0].id}`;
  });

  it('invites by mail with a single-use link that expires, is revoked, or is for another address', async () => {
    const invite = await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.ADMIN, body: { email: 'newcomer@team.test', role: 'READ_RUN' } });
    expect(invite.status, invite.text).toBe(201);
    expect(invite.body).toMatchObject({ type: 'invite', email: 'newcomer@team.test', role: 'READ_RUN', status: 'PENDING', inviterEmail: 'admin@team.test' });
    expect((await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.ADMIN, body: { email: 'newcomer@team.test', role: 'READ_ONLY' } })).status).toBe(
      409,
    );
    expect((await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.ADMIN, body: { email: 'owner@team.test', role: 'READ_ONLY' } })).status).toBe(
      409,
    );
    expect((await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.READ_WRITE, body: { email: 'x@team.test', role: 'READ_ONLY' } })).status).toBe(
      403,
    );
    expect((await members('?type=invite&status=PENDING')).body.members.map((m: { email: string }) => m.email)).toEqual(['newcomer@team.test']);

    const [mail] = await waitFor(
      async () => smtp.mails.filter((m) => JSON.stringify(m.to).includes('newcomer@team.test')),
      (m) => m.length === 1,
    );
    expect(mail!.subject).toBe('You are invited to default');
    const token = /\n([\w-]{40,})\n/.exec(mail!.text!)![1]!;
    // A new person sets a password that keeps the policy.
    expect((await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token, password: 'short' } })).status).toBe(400);
    const accepted = await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token, name: 'New Comer', password: 'a fresh team password' } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ accountId: svc.defaultAccountId, role: 'READ_RUN' });
    const cookie = accepted.headers.getSetCookie()[0]!.split(';')[0]!;
    expect((await svc.call('GET', '/v1/auth/session', { key: null, headers: { cookie } })).body.account.role).toBe('READ_RUN');
    // Replayed: gone.
    expect((await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token, password: 'a fresh team password' } })).status).toBe(410);

    // Signed in as someone else, another address's invitation is refused and stays usable.
    const other = await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.OWNER, body: { email: 'second@team.test', role: 'READ_ONLY' } });
    const [otherMail] = await waitFor(
      async () => smtp.mails.filter((m) => JSON.stringify(m.to).includes('second@team.test')),
      (m) => m.length === 1,
    );
    const otherToken = /\n([\w-]{40,})\n/.exec(otherMail!.text!)![1]!;
    const wrongPerson = await svc.call('POST', '/v1/invitations/accept', { key: null, headers: { cookie }, body: { token: otherToken } });
    expect(wrongPerson.status).toBe(409);
    // Revoked: gone.
    expect((await svc.call('DELETE', `/v1/accounts/me/invitations/${other.body.id}`, { key: keys.ADMIN })).status).toBe(204);
    expect((await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token: otherToken, password: 'a second password' } })).status).toBe(410);

    // Expired: gone, and listed as EXPIRED.
    const late = await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.ADMIN, body: { email: 'late@team.test', role: 'READ_ONLY' } });
    const [lateMail] = await waitFor(
      async () => smtp.mails.filter((m) => JSON.stringify(m.to).includes('late@team.test')),
      (m) => m.length === 1,
    );
    await svc.deps.sql`update invitations set expires_at = now() - interval '1 second' where id = ${late.body.id}`;
    expect((await members('?type=invite&status=EXPIRED')).body.members.map((m: { id: string }) => m.id)).toEqual([late.body.id]);
    expect(
      (
        await svc.call('POST', '/v1/invitations/accept', {
          key: null,
          body: { token: /\n([\w-]{40,})\n/.exec(lateMail!.text!)![1]!, password: 'a late password!' },
        })
      ).status,
    ).toBe(410);
    expect((await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token: 'x'.repeat(43) } })).status).toBe(404);
  });

  it('asks a person whose second factor is on for its code when they accept an invitation with their password', async () => {
    const elsewhere = await createAccount(svc.deps.sql, 'their own');
    const person = await ensureUser(svc.deps.sql, 'careful@team.test', 'Careful');
    await setPassword(svc.deps.sql, person.id, await hashPassword(PASSWORD));
    await addMember(svc.deps.sql, elsewhere.id, person.id, 'OWNER');
    const secret = new OTPAuth.Secret({ size: 20 });
    await svc.deps.sql`update users set totp_secret = ${sealSecret(secret.base32)}, totp_enabled_at = now() where id = ${person.id}`;
    const totp = new OTPAuth.TOTP({ secret, digits: 6, period: 30, algorithm: 'SHA1' });

    expect((await svc.call('POST', '/v1/accounts/me/invitations', { key: keys.ADMIN, body: { email: 'careful@team.test', role: 'READ_ONLY' } })).status).toBe(
      201,
    );
    const [mail] = await waitFor(
      async () => smtp.mails.filter((m) => JSON.stringify(m.to).includes('careful@team.test')),
      (m) => m.length === 1,
    );
    const token = /\n([\w-]{40,})\n/.exec(mail!.text!)![1]!;
    const noCode = await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token, password: PASSWORD } });
    expect(noCode.status).toBe(401);
    expect(noCode.body.attributes).toEqual({ reason: 'second-factor' });
    expect(noCode.headers.getSetCookie()).toEqual([]);
    expect((await members('?search=careful&type=member')).body.members).toEqual([]);
    const accepted = await svc.call('POST', '/v1/invitations/accept', { key: null, body: { token, password: PASSWORD, code: totp.generate() } });
    expect(accepted.status, accepted.text).toBe(200);
    // The inviting account's log has the refusal and the acceptance, by the person.
    const log = await svc.call('GET', `/v1/audit-logs?operation=acceptInvitation&actorId=${person.id}`, { key: keys.ADMIN });
    expect(log.body.entries.map((e: { status: number }) => e.status)).toEqual([200, 401]);
  });

  it("keeps another account's members out of reach", async () => {
    const other = await createAccount(svc.deps.sql, 'elsewhere');
    const stranger = await ensureUser(svc.deps.sql, 'stranger@else.test');
    await addMember(svc.deps.sql, other.id, stranger.id, 'OWNER');
    expect((await svc.call('GET', `/v1/accounts/${other.id}/members`, { key: keys.OWNER })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/accounts/${other.id}/members/${stranger.id}`, { key: keys.OWNER })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/accounts/me/members/${stranger.id}`, { key: keys.OWNER })).status).toBe(404);
    expect((await members('?search=stranger', keys.OWNER)).body.members).toEqual([]);
  });

  it('keeps every write in the audit log with who, what, which fields and from where, never a value; Owners and Admins read it', async () => {
    const secret = 'value-that-must-not-be-logged';
    const made = await svc.call('POST', '/v1/variables', { key: keys.READ_WRITE, body: { key: 'AUDITED', value: secret, secret: true } });
    expect(made.status, made.text).toBe(201);
    const refused = await svc.call('DELETE', '/v1/variables/AUDITED', { key: keys.READ_ONLY });
    expect(refused.status).toBe(403);

    const log: ApiResponse = await svc.call('GET', '/v1/audit-logs?limit=100', { key: keys.ADMIN });
    expect(log.status).toBe(200);
    expect(log.text).not.toContain(secret);
    const create = log.body.entries.find((e: { operation: string }) => e.operation === 'createVariable');
    expect(create).toMatchObject({
      actor: { type: 'user', id: ids.READ_WRITE, name: 'read-write@team.test' },
      method: 'POST',
      path: '/v1/variables',
      status: 201,
      address: expect.any(String),
    });
    expect(create.fields.sort()).toEqual(['key', 'secret', 'value']);
    expect(log.body.entries.find((e: { operation: string }) => e.operation === 'deleteVariable')).toMatchObject({
      actor: { id: ids.READ_ONLY },
      resourceId: 'AUDITED',
      status: 403,
    });
    expect(log.body.entries.some((e: { operation: string }) => e.operation === 'signIn')).toBe(true);
    expect(log.body.entries.some((e: { operation: string }) => e.operation === 'updateMember')).toBe(true);
    // Newest first, in pages.
    const page = await svc.call('GET', '/v1/audit-logs?limit=3', { key: keys.OWNER });
    const next = await svc.call('GET', `/v1/audit-logs?limit=3&nextId=${page.body.nextId}`, { key: keys.OWNER });
    expect(Number(next.body.entries[0].id)).toBeLessThan(Number(page.body.entries[2].id));
    expect(
      (await svc.call('GET', `/v1/audit-logs?actorId=${ids.READ_ONLY}`, { key: keys.OWNER })).body.entries.every(
        (e: { actor: { id: string } }) => e.actor.id === ids.READ_ONLY,
      ),
    ).toBe(true);
    expect((await svc.call('GET', '/v1/audit-logs', { key: keys.READ_WRITE })).status).toBe(403);
    // Past the retention, entries are swept.
    const { sweepAudit } = await import('./audit.js');
    await svc.deps.sql`update audit_log set at = now() - interval '400 days' where operation = 'createVariable'`;
    expect(await sweepAudit(svc.deps.sql, 365)).toBeGreaterThan(0);
    expect((await svc.call('GET', '/v1/audit-logs?operation=createVariable', { key: keys.OWNER })).body.entries).toEqual([]);
  });
});

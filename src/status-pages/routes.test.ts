import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';

describe('status pages, services, incidents and subscribers (API)', () => {
  let svc: TestService;
  let other: { accountId: string; key: string };
  beforeAll(async () => {
    svc = await startTestService({ STATUS_PAGE_AUTOVERIFY_LIMIT: '5' });
    other = await createOtherTenant(svc);
  });
  afterAll(() => svc?.stop());

  const service = async (name: string, key?: string) => {
    const res = await svc.call('POST', '/v1/status-pages/services', { body: { name }, key });
    expect(res.status, res.text).toBe(200);
    return res.body as { id: string; name: string; accountId: string };
  };

  it("a page shows cards of the account's services; its url is unique across accounts, its domain only a claim until proved", async () => {
    const api = await service('API');
    const web = await service('Website');
    const created = await svc.call('POST', '/v1/status-pages', {
      body: {
        name: 'Acme status',
        url: 'Acme-Status',
        customDomain: 'Status.Acme.test',
        description: 'All of Acme',
        themeColors: null,
        defaultTheme: 'DARK',
        cards: [{ name: 'Core', services: [{ id: api.id }, { id: web.id, name: 'ignored' }] }, { name: 'Empty' }],
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Acme status',
      url: 'acme-status',
      customDomain: 'status.acme.test',
      defaultTheme: 'DARK',
      whiteLabel: false,
      isPrivate: false,
      cards: [
        {
          name: 'Core',
          services: [
            { id: api.id, name: 'API', accountId: svc.defaultAccountId },
            { id: web.id, name: 'Website' },
          ],
        },
        { name: 'Empty', services: [] },
      ],
    });
    const got = await svc.call('GET', `/v1/status-pages/${created.body.id}`);
    expect(got.body).toEqual(created.body);

    // Another account: not the url, nor our services; it does not see our page. Naming the same domain only makes its
    // own unverified claim (whoever proves the name with its TXT record gets it: docs/status-pages.md).
    const theirs = { name: 'Copy', url: 'acme-status', cards: [] };
    expect((await svc.call('POST', '/v1/status-pages', { body: theirs, key: other.key })).status).toBe(409);
    const claimed = await svc.call('POST', '/v1/status-pages', { body: { ...theirs, url: 'copy', customDomain: 'status.acme.test' }, key: other.key });
    expect(claimed.status).toBe(201);
    expect((await svc.call('GET', '/v1/custom-domains', { key: other.key })).body).toEqual([
      expect.objectContaining({ domain: 'status.acme.test', verified: false }),
    ]);
    expect((await svc.call('DELETE', `/v1/status-pages/${claimed.body.id}`, { key: other.key })).status).toBe(204);
    const stolen = await svc.call('POST', '/v1/status-pages', {
      body: { ...theirs, url: 'copy', cards: [{ name: 'x', services: [{ id: api.id }] }] },
      key: other.key,
    });
    expectFieldError(stolen, 'body.cards', 'exists');
    expect((await svc.call('GET', `/v1/status-pages/${created.body.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/status-pages', { key: other.key })).body).toEqual({ length: 0, entries: [], nextId: null });

    // Hostile or malformed values never reach a page's CSS or links.
    for (const [field, value] of [
      ['themeColors', { light: { bodyBackgroundColor: 'red;}' }, dark: {} }],
      ['logo', 'javascript:alert(1)'],
      ['url', 'a/b'],
      ['customDomain', 'x y'],
    ] as const) {
      const bad = await svc.call('POST', '/v1/status-pages', { body: { name: 'bad', url: `bad-${randomUUID().slice(0, 6)}`, cards: [], [field]: value } });
      expect(bad.status, `${field}: ${bad.text}`).toBe(400);
    }

    // A deleted service leaves the cards that showed it.
    expect((await svc.call('DELETE', `/v1/status-pages/services/${web.id}`)).status).toBe(204);
    const after = await svc.call('GET', `/v1/status-pages/${created.body.id}`);
    expect(after.body.cards[0].services.map((s: { id: string }) => s.id)).toEqual([api.id]);
  });

  it('lists pages and services a page at a time with nextId', async () => {
    const mine = await createOtherTenant(svc);
    for (let i = 0; i < 5; i++) await service(`s${i}`, mine.key);
    const first = await svc.call('GET', '/v1/status-pages/services?limit=2', { key: mine.key });
    expect(first.body.entries.map((s: { name: string }) => s.name)).toEqual(['s0', 's1']);
    const second = await svc.call('GET', `/v1/status-pages/services?limit=2&nextId=${first.body.nextId}`, { key: mine.key });
    expect(second.body.entries.map((s: { name: string }) => s.name)).toEqual(['s2', 's3']);
    const last = await svc.call('GET', `/v1/status-pages/services?limit=2&nextId=${second.body.nextId}`, { key: mine.key });
    expect(last.body).toMatchObject({ length: 1, nextId: null });
  });

  it('an incident moves from INVESTIGATING to RESOLVED through its updates; subscribers are told only when asked', async () => {
    const api = await service('Payments');
    const page = await svc.call('POST', '/v1/status-pages', { body: { name: 'Pay', url: 'pay-status', cards: [{ name: 'All', services: [{ id: api.id }] }] } });
    const bulk = await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      body: {
        subscriptions: [
          { type: 'EMAIL', config: 'a@example.test' },
          { type: 'EMAIL', config: 'A@example.test' },
          { type: 'EMAIL', config: 'b@example.test' },
        ],
        autoVerify: true,
      },
    });
    expect(bulk.status, bulk.text).toBe(201);
    expect(bulk.body).toEqual({ created: 2, skipped: 1, status: 'VERIFIED' });
    const subs = await svc.call('GET', `/v1/status-pages/${page.body.id}/subscriptions`);
    expect(subs.body.map((s: { address: string; status: string }) => [s.address, s.status])).toEqual([
      ['a@example.test', 'VERIFIED'],
      ['b@example.test', 'VERIFIED'],
    ]);

    const mails = async () =>
      (
        await svc.deps
          .sql`select count(*)::int as n from status_page_mails m join status_page_subscriptions s on s.id = m.subscription_id where s.status_page_id = ${page.body.id}`
      )[0].n as number;
    const created = await svc.call('POST', '/v1/status-pages/incidents', {
      body: {
        name: 'Payments slow',
        severity: 'MAJOR',
        services: [{ id: api.id, name: 'Payments', accountId: svc.defaultAccountId }],
        incidentUpdates: [{ description: 'Looking into it', notifySubscribers: true }],
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Payments slow',
      severity: 'MAJOR',
      lastUpdateStatus: 'INVESTIGATING',
      duration: null,
      services: [{ id: api.id }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into it', notifySubscribers: true }],
    });
    expect(await mails()).toBe(2);
    const id = created.body.id as string;
    const quiet = await svc.call('POST', `/v1/status-pages/incidents/${id}/incident-updates`, {
      body: { status: 'IDENTIFIED', description: 'A slow database' },
    });
    expect(quiet.status, quiet.text).toBe(200);
    expect(await mails()).toBe(2);
    // What the anchor CLI's `incidents update --severity` sends.
    expect((await svc.call('PATCH', `/v1/status-pages/incidents/${id}`, { body: { severity: 'MINOR' } })).body).toMatchObject({
      severity: 'MINOR',
      name: 'Payments slow',
    });
    const resolved = await svc.call('POST', `/v1/status-pages/incidents/${id}/incident-updates`, {
      body: { status: 'RESOLVED', description: 'Fixed', notifySubscribers: true },
    });
    expect(resolved.body.status).toBe('RESOLVED');
    const done = await svc.call('GET', `/v1/status-pages/incidents/${id}`);
    expect(done.body.lastUpdateStatus).toBe('RESOLVED');
    expect(typeof done.body.duration).toBe('number');
    expect(done.body.incidentUpdates.map((u: { status: string }) => u.status)).toEqual(['INVESTIGATING', 'IDENTIFIED', 'RESOLVED']);
    expect(await mails()).toBe(4);
    // The latest update deleted: the incident is open again, at its previous status.
    const latest = (await svc.call('GET', `/v1/status-pages/incidents/${id}/incident-updates`)).body[0];
    expect(latest.status).toBe('RESOLVED');
    expect((await svc.call('DELETE', `/v1/status-pages/incidents/${id}/incident-updates/${latest.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/status-pages/incidents/${id}`)).body).toMatchObject({ lastUpdateStatus: 'IDENTIFIED', duration: null });

    // Bad input changes nothing; another account sees none of it.
    expectFieldError(
      await svc.call('POST', '/v1/status-pages/incidents', {
        body: { name: 'x', severity: 'HUGE', services: [{ id: api.id }], incidentUpdates: [{ description: 'd' }] },
      }),
      'body.severity',
      'enum',
    );
    expectFieldError(
      await svc.call('POST', '/v1/status-pages/incidents', {
        body: { name: 'x', severity: 'MINOR', services: [{ id: randomUUID() }], incidentUpdates: [{ description: 'd' }] },
      }),
      'body.services',
      'exists',
    );
    expect((await svc.call('GET', `/v1/status-pages/incidents/${id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('POST', `/v1/status-pages/incidents/${id}/incident-updates`, { key: other.key, body: { description: 'x' } })).status).toBe(404);
    expect((await svc.call('GET', '/v1/status-pages/incidents', { key: other.key })).body.entries).toEqual([]);
    expect((await svc.call('GET', '/v1/status-pages/incidents?limit=1')).body).toMatchObject({ length: 1, entries: [{ id }] });
  });

  it('mails an imported subscriber who never confirmed at most 3 incident updates a day; one who confirmed gets every one', async () => {
    const api = await service('Search');
    const page = await svc.call('POST', '/v1/status-pages', {
      body: { name: 'Search', url: 'search-status', cards: [{ name: 'All', services: [{ id: api.id }] }] },
    });
    await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      body: {
        subscriptions: [
          { type: 'EMAIL', config: 'imported@example.test' },
          { type: 'EMAIL', config: 'confirmed@example.test' },
        ],
        autoVerify: true,
      },
    });
    // The second one confirmed through their mail's link (what the page's confirm form records).
    await svc.deps.sql`update status_page_subscriptions set confirmed_at = now() where address = 'confirmed@example.test'`;
    const created = await svc.call('POST', '/v1/status-pages/incidents', {
      body: {
        name: 'Search flaps',
        severity: 'MINOR',
        services: [{ id: api.id, name: 'Search', accountId: svc.defaultAccountId }],
        incidentUpdates: [{ description: 'Looking', notifySubscribers: true }],
      },
    });
    for (let i = 0; i < 5; i++) {
      const res = await svc.call('POST', `/v1/status-pages/incidents/${created.body.id}/incident-updates`, {
        body: { status: 'MONITORING', description: `Update ${i}`, notifySubscribers: true },
      });
      expect(res.status, res.text).toBe(200);
    }
    const mailsTo = async (address: string) =>
      (
        await svc.deps
          .sql`select count(*)::int as n from status_page_mails m join status_page_subscriptions s on s.id = m.subscription_id where s.address = ${address}`
      )[0]!.n as number;
    expect(await mailsTo('imported@example.test')).toBe(3);
    expect(await mailsTo('confirmed@example.test')).toBe(6);
  });

  it('autoVerify needs an admin key and stops at the account cap; without it every address gets a confirm mail', async () => {
    const other = await createOtherTenant(svc);
    const { createApiKey } = await import('../accounts/repository.js');
    const writer = await createApiKey(svc.deps.sql, { accountId: other.accountId, role: 'read-write' });
    const page = await svc.call('POST', '/v1/status-pages', { key: other.key, body: { name: 'Consent', url: 'consent-status', cards: [] } });
    expect(page.status, page.text).toBe(201);
    const addresses = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ type: 'EMAIL', config: `p${from + i}@example.test` }));
    const subscribers = async () => (await svc.call('GET', `/v1/status-pages/${page.body.id}/subscriptions`, { key: other.key })).body as { status: string }[];

    const refused = await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      key: writer.key,
      body: { subscriptions: addresses(3), autoVerify: true },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/only an admin key may use it/);
    expect(await subscribers()).toEqual([]);

    const asked = await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, { key: writer.key, body: { subscriptions: addresses(2) } });
    expect(asked.body).toEqual({ created: 2, skipped: 0, status: 'PENDING' });
    const confirms = (
      await svc.deps.sql`select count(*)::int as n from status_page_mails m join status_page_subscriptions s on s.id = m.subscription_id
      where s.status_page_id = ${page.body.id} and m.kind = 'confirm'`
    )[0].n;
    expect(confirms).toBe(2);

    // The cap (5 in this suite) counts the account's verified subscribers.
    expect(
      (
        await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
          key: other.key,
          body: { subscriptions: addresses(4, 10), autoVerify: true },
        })
      ).status,
    ).toBe(201);
    const over = await svc.call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      key: other.key,
      body: { subscriptions: addresses(2, 20), autoVerify: true },
    });
    expect(over.status).toBe(402);
    expect(over.body.message).toMatch(/at most 5 verified subscribers/);
    expect((await subscribers()).filter((s) => s.status === 'VERIFIED')).toHaveLength(4);
  });
});

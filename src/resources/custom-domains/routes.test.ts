import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, startTestService, type TestService, verifyDomain, waitFor } from '../../../test/support/service.js';
import { startDnsTarget } from '../../../test/support/targets.js';

/**
 * Custom domains are proved, not claimed: a status page or dashboard naming a domain is served there only once its
 * account published the claim's token as a TXT record (here on a local DNS server) and asked to verify. Another
 * account naming the same domain first blocks nobody; one page or dashboard per domain within an account.
 */
describe('custom domains', () => {
  let svc: TestService;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  beforeAll(async () => {
    dns = await startDnsTarget({});
    svc = await startTestService({ DOMAIN_DNS_SERVERS: `127.0.0.1:${dns.udpPort}`, STATUS_PAGE_CACHE_SECONDS: '0' });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    dns?.close();
  });

  const onHost = (host: string, path = '/') =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(svc.url);
      http
        .get({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        })
        .on('error', reject);
    });

  it('a squatter first, the owner proves it: only the proved page is served, and the squatter cannot prove it after', async () => {
    const squatter = await createOtherTenant(svc);
    const squat = await svc.call('POST', '/v1/status-pages', {
      key: squatter.key,
      body: { name: 'Fake shop', url: 'fake-shop', customDomain: 'status.shop.test', cards: [] },
    });
    expect(squat.status, squat.text).toBe(201);
    // The squatter's claim is not proved: nothing served, and asking without the record says what to publish.
    expect((await onHost('status.shop.test')).status).toBe(404);
    const [theirClaim] = (await svc.call('GET', '/v1/custom-domains', { key: squatter.key })).body;
    expect(theirClaim).toMatchObject({
      domain: 'status.shop.test',
      verified: false,
      challenge: { type: 'TXT', name: '_monitoring-challenge.status.shop.test', value: expect.stringMatching(/^[0-9a-f]{32}$/) },
    });
    const early = await svc.call('POST', '/v1/custom-domains/status.shop.test/verify', { key: squatter.key });
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/No TXT record _monitoring-challenge\.status\.shop\.test was found/);

    // The owner names the domain too (no 409) and publishes its own token.
    const mine = await svc.call('POST', '/v1/status-pages', { body: { name: 'Shop', url: 'real-shop', customDomain: 'status.shop.test', cards: [] } });
    expect(mine.status, mine.text).toBe(201);
    const proved = await verifyDomain(svc, dns, 'status.shop.test');
    expect(proved.status, proved.text).toBe(200);
    expect(proved.body).toMatchObject({ domain: 'status.shop.test', verified: true, usedBy: [{ type: 'status-page', id: mine.body.id }] });
    // Each API process looks a host up again within 5 s (the miss before was cached).
    const served = await waitFor(
      () => onHost('status.shop.test'),
      (r) => r.status === 200,
      10_000,
    );
    expect(served.text).toContain('<title>Shop');
    expect(served.text).not.toContain('Fake shop');

    // The record holds the owner's token, not the squatter's; and a verified domain is one account's.
    const wrong = await svc.call('POST', '/v1/custom-domains/status.shop.test/verify', { key: squatter.key });
    expect(wrong.status).toBe(409);
    expect(wrong.body.message).toMatch(/does not hold/);
    dns.txt.set('_monitoring-challenge.status.shop.test', [theirClaim.challenge.value]);
    const taken = await svc.call('POST', '/v1/custom-domains/status.shop.test/verify', { key: squatter.key });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toBe('status.shop.test is verified by another account');
    expect((await onHost('status.shop.test')).text).not.toContain('Fake shop');
  });

  it("within one account a domain serves one page or dashboard: a dashboard cannot take a status page's domain", async () => {
    const page = await svc.call('POST', '/v1/status-pages', { body: { name: 'Ops', url: 'ops-page', customDomain: 'ops.shop.test', cards: [] } });
    expect(page.status).toBe(201);
    const dashboard = await svc.call('POST', '/v1/dashboards', { body: { header: 'Ops board', customDomain: 'ops.shop.test' } });
    expect(dashboard.status).toBe(409);
    expect(dashboard.body.message).toBe(`customDomain ops.shop.test is already used by this account's status-page ${page.body.id}`);
    const board = await svc.call('POST', '/v1/dashboards', { body: { header: 'Board', customDomain: 'board.shop.test' } });
    expect(board.status).toBe(201);
    const moved = await svc.call('PUT', `/v1/status-pages/${page.body.id}`, {
      body: { name: 'Ops', url: 'ops-page', customDomain: 'board.shop.test', cards: [] },
    });
    expect(moved.status).toBe(409);
    expect((await svc.call('GET', `/v1/status-pages/${page.body.id}`)).body.customDomain).toBe('ops.shop.test');
    // A claim in use cannot be dropped; one no longer named can.
    expect((await svc.call('DELETE', '/v1/custom-domains/ops.shop.test')).status).toBe(409);
    expect((await svc.call('PUT', `/v1/status-pages/${page.body.id}`, { body: { name: 'Ops', url: 'ops-page', customDomain: null, cards: [] } })).status).toBe(
      200,
    );
    expect((await svc.call('DELETE', '/v1/custom-domains/ops.shop.test')).status).toBe(204);
    expect((await svc.call('DELETE', '/v1/custom-domains/ops.shop.test')).status).toBe(404);
  });
});

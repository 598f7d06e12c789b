import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { hashSecret } from '../model/secrets.js';

describe('private locations', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('are created with a key shown once and stored hashed, then read without it', async () => {
    const res = await svc.call('POST', '/v1/private-locations', { body: { name: 'Basement', slugName: 'basement-1', proxyUrl: 'https://proxy.test:3128' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'Basement', slugName: 'basement-1', icon: 'location', proxyUrl: 'https://proxy.test:3128' });
    const [key] = res.body.keys;
    expect(key.rawKey).toMatch(/^pl_[0-9a-f]{48}$/);
    expect(key.maskedKey).toBe(`...${key.rawKey.slice(-4)}`);
    const [stored] = await svc.deps.sql`select key_hash from private_location_keys where id = ${key.id}`;
    expect(Buffer.compare(stored.key_hash, hashSecret(key.rawKey))).toBe(0);
    const read = await svc.call('GET', `/v1/private-locations/${res.body.id}`);
    expect(read.text).not.toContain(key.rawKey);
    expect(read.body.keys).toEqual([{ id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: null }]);
    expect((await svc.call('GET', '/v1/private-locations')).text).not.toContain(key.rawKey);
  });

  it('get more keys and lose them, change name, icon and proxy but not the slug', async () => {
    const loc = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Rack', slugName: 'rack' } })).body;
    const second = await svc.call('POST', `/v1/private-locations/${loc.id}/keys`);
    expect(second.status).toBe(201);
    expect(second.body.rawKey).toMatch(/^pl_/);
    expect((await svc.call('GET', `/v1/private-locations/${loc.id}`)).body.keys).toHaveLength(2);
    expect((await svc.call('DELETE', `/v1/private-locations/${loc.id}/keys/${second.body.id}`)).status).toBe(204);
    expect((await svc.call('DELETE', `/v1/private-locations/${loc.id}/keys/${second.body.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/private-locations/${loc.id}/keys/nope`)).status).toBe(404);
    const put = await svc.call('PUT', `/v1/private-locations/${loc.id}`, { body: { name: 'Rack 2', icon: 'server', slugName: 'ignored' } });
    expect(put.body).toMatchObject({ name: 'Rack 2', icon: 'server', slugName: 'rack', proxyUrl: null });
  });

  it('refuse a public location name, a taken slug and bad fields, creating nothing', async () => {
    const before = (await svc.call('GET', '/v1/private-locations?limit=100')).body.length;
    expectFieldError(await svc.call('POST', '/v1/private-locations', { body: { name: 'x', slugName: 'eu-west-1' } }), 'body.slugName', 'pattern');
    expectFieldError(await svc.call('POST', '/v1/private-locations', { body: { name: 'x', slugName: 'has space' } }), 'body.slugName', 'pattern');
    expectFieldError(await svc.call('POST', '/v1/private-locations', { body: { name: 'x', slugName: 'a'.repeat(31) } }), 'body.slugName', 'pattern');
    expectFieldError(await svc.call('POST', '/v1/private-locations', { body: { name: 'x', slugName: 'ok', proxyUrl: 'ftp://p' } }), 'body.proxyUrl');
    const taken = await svc.call('POST', '/v1/private-locations', { body: { name: 'again', slugName: 'basement-1' } });
    expect(taken.status).toBe(409);
    expect((await svc.call('GET', '/v1/private-locations?limit=100')).body.length).toBe(before);
  });

  it('are run locations: checks name them, ingest takes them, an unknown name is a 400; in use they cannot go', async () => {
    const loc = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Edge', slugName: 'edge' } })).body;
    const check = await svc.call('POST', '/v1/checks/api', { body: { name: 'inside', privateLocations: ['edge'], request: { url: 'https://intranet.test' } } });
    expect(check.status, check.text).toBe(201);
    expectFieldError(
      await svc.call('POST', '/v1/checks/api', { body: { name: 'x', privateLocations: ['edge', 'nowhere'], request: { url: 'https://x.test' } } }),
      'body.privateLocations[1]',
      'exists',
    );
    expectFieldError(await svc.call('POST', '/v1/check-groups', { body: { name: 'g', privateLocations: ['nowhere'] } }), 'body.privateLocations[0]', 'exists');
    const result = (runLocation: string) => ({
      checkId: check.body.id,
      checkType: 'API',
      runLocation,
      startedAt: new Date().toISOString(),
      stoppedAt: new Date().toISOString(),
      hasFailures: false,
    });
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [result('edge'), result('eu-west-1')] } })).status).toBe(202);
    const bad = await svc.call('POST', '/v1/check-results', { body: { results: [result('edge'), result('moon-base-1')] } });
    expectFieldError(bad, 'body.results[1].runLocation', 'exists');
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.body.id}?location=edge`),
      (r) => r.body.length === 1,
    );
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/private-locations/${loc.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/private-locations/${loc.id}`, { key: other.key })).status).toBe(404);
    const inUse = await svc.call('DELETE', `/v1/private-locations/${loc.id}`);
    expect(inUse.status).toBe(409);
    expect((await svc.call('DELETE', `/v1/checks/${check.body.id}`)).status).toBe(204);
    expect((await svc.call('DELETE', `/v1/private-locations/${loc.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/private-locations/${loc.id}`)).status).toBe(404);
    expect((await svc.call('GET', `/v1/private-locations/${randomUUID()}`)).status).toBe(404);
  });
});

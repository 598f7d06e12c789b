import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../../test/support/service.js';
import { openSecret } from '../../storage/secret-box.js';

const cert = readFileSync(new URL('../../../test/fixtures/client-cert.pem', import.meta.url), 'utf8');
const key = readFileSync(new URL('../../../test/fixtures/client-key.pem', import.meta.url), 'utf8');

describe('client certificates', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('keep the key and passphrase and never show them', async () => {
    const res = await svc.call('POST', '/v1/client-certificates', { body: { host: '*.acme.test', cert, ca: cert, key, passphrase: 's3cret' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), host: '*.acme.test', cert, ca: cert, created_at: expect.any(String) });
    for (const text of [
      res.text,
      (await svc.call('GET', '/v1/client-certificates')).text,
      (await svc.call('GET', `/v1/client-certificates/${res.body.id}`)).text,
    ]) {
      expect(text).not.toContain('s3cret');
      expect(text).not.toContain('ENCRYPTED PRIVATE KEY');
    }
    // Kept sealed at rest (docs/platform.md, "Secrets at rest"), and what the service's key opens is what was sent.
    const [stored] = await svc.deps.sql`select private_key, passphrase from client_certificates where id = ${res.body.id}`;
    expect(JSON.stringify(stored)).not.toMatch(/PRIVATE KEY|s3cret/);
    expect({ private_key: openSecret(stored!.private_key), passphrase: openSecret(stored!.passphrase) }).toEqual({ private_key: key, passphrase: 's3cret' });
    expect(svc.logs.join('\n')).not.toContain('s3cret');
  });

  it('refuse what a runner could not use: not a certificate, a key the passphrase does not open', async () => {
    const count = async () => (await svc.call('GET', '/v1/client-certificates?limit=100')).body.length;
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/client-certificates', { body: { host: 'a.test', cert: 'not pem' } }), 'body.cert', 'certificate');
    expectFieldError(await svc.call('POST', '/v1/client-certificates', { body: { host: 'a.test', cert, ca: 'junk' } }), 'body.ca', 'certificate');
    expectFieldError(await svc.call('POST', '/v1/client-certificates', { body: { host: 'a.test', cert, key, passphrase: 'wrong' } }), 'body.key', 'key');
    expectFieldError(await svc.call('POST', '/v1/client-certificates', { body: { host: 'a.test', cert, key } }), 'body.key', 'key');
    expectFieldError(await svc.call('POST', '/v1/client-certificates', { body: { cert } }), 'body.host', 'required');
    expect(await count()).toBe(before);
  });

  it('are named by SSL monitors, in their own account only', async () => {
    const mine = (await svc.call('POST', '/v1/client-certificates', { body: { host: 'a.test', cert } })).body;
    const ok = await svc.call('POST', '/v1/checks/ssl', {
      body: { name: 'mtls', request: { sslConfig: { hostname: 'a.test', clientCertificateMode: 'explicit' }, sslClientCertificateId: mine.id } },
    });
    expect(ok.status, ok.text).toBe(201);
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/client-certificates/${mine.id}`, { key: other.key })).status).toBe(404);
    expectFieldError(
      await svc.call('POST', '/v1/checks/ssl', {
        key: other.key,
        body: { name: 'x', request: { sslConfig: { hostname: 'a.test' }, sslClientCertificateId: mine.id } },
      }),
      'body.request.sslClientCertificateId',
      'exists',
    );
    expect((await svc.call('DELETE', `/v1/client-certificates/${mine.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/client-certificates/${mine.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/client-certificates/${mine.id}`)).status).toBe(404);
  });
});

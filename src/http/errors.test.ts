import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

describe('error bodies', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(() => svc?.stop());

  it('answers malformed JSON with 400 in the contract shape', async () => {
    const res = await svc.call('POST', '/v1/api-keys', {
      rawBody: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON body' });
  });

  it('answers a body over the limit with 413', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { body: { name: 'x'.repeat(4096) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than the allowed limit',
    });
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
  });

  it('answers an unknown route with 404', async () => {
    const res = await svc.call('GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const res = await svc.call('PATCH', '/v1/account');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ statusCode: 405, error: 'Method Not Allowed', message: 'Method Not Allowed' });
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('names the field and the rule of a validation failure', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { body: { name: '', role: 'owner', extra: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.statusCode).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    const fields = res.body.attributes.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`);
    expect(fields).toEqual(expect.arrayContaining(['body.name:minLength', 'body.role:enum', 'body.extra:additionalProperties']));
    expect(res.body.message).toMatch(/^body\./);
  });

  it('rejects a missing body on a route that needs one', async () => {
    const res = await svc.call('POST', '/v1/api-keys');
    expect(res.status).toBe(400);
    expect(res.body.attributes.errors[0]).toMatchObject({ field: 'body', rule: 'type' });
  });

  it('rejects bad query and path values with 400', async () => {
    const q = await svc.call('GET', '/v1/api-keys?limit=0');
    expect(q.status).toBe(400);
    expect(q.body.attributes.errors[0]).toMatchObject({ field: 'query.limit', rule: 'minimum' });
    const unknown = await svc.call('GET', '/v1/api-keys?bogus=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.attributes.errors[0]).toMatchObject({ field: 'query.bogus', rule: 'additionalProperties' });
    const p = await svc.call('DELETE', '/v1/api-keys/123');
    expect(p.status).toBe(400);
    expect(p.body.attributes.errors[0]).toMatchObject({ field: 'path.id', rule: 'format' });
  });

  // Last: it breaks the service's Postgres pool on purpose.
  it('answers an unexpected failure with 500, a request id and no stack', async () => {
    await svc.deps.sql.end();
    const res = await svc.call('GET', '/v1/account', { headers: { 'x-request-id': 'req-500' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: 'Internal Server Error',
      attributes: { requestId: 'req-500' },
    });
    expect(res.text).not.toMatch(/at .*\.ts/);
    expect(svc.logs.some((l) => l.includes('"requestId":"req-500"') && l.includes('unhandled error'))).toBe(true);
  });
});

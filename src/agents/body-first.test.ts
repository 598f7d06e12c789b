import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

/**
 * The agent routes that take large bodies (/v1/agent/outcomes 32 MB, /v1/agent/made 64 MB) check the key before
 * reading a byte of the body: a caller without a location's key cannot make the service parse one.
 */
describe('agent routes with large bodies', () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService({});
    const location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Office', slugName: 'office' } })).body;
    key = location.keys[0].rawKey;
  }, 60_000);
  afterAll(() => svc?.stop());

  const post = (path: string, authorization: string | undefined, body: string) =>
    fetch(`${svc.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body,
    });

  it('answer a missing or unknown key with 401 before the body is read (a body that is not JSON is never parsed)', async () => {
    for (const path of ['/v1/agent/outcomes', '/v1/agent/made']) {
      for (const authorization of [undefined, `Bearer pl_${'0'.repeat(48)}`, 'Basic eDp5']) {
        const res = await post(path, authorization, '{"results": [ not json');
        expect(res.status, `${path} ${authorization}`).toBe(401);
        expect(((await res.json()) as { statusCode: number }).statusCode).toBe(401);
      }
      // A key of the location: the body is read, and a body that is not JSON is a 400.
      const own = await post(path, `Bearer ${key}`, '{"results": [ not json');
      expect(own.status, path).toBe(400);
    }
  });
});

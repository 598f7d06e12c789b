import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

describe('request log', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ LOG_REQUESTS: 'info' });
  });
  afterAll(() => svc?.stop());

  it('never writes keys or the Authorization header to the log', async () => {
    await svc.call('GET', '/v1/account');
    const created = await svc.call('POST', '/v1/api-keys', { body: { name: 'logged?' } });
    const all = svc.logs.join('\n');
    expect(svc.logs.length).toBeGreaterThan(0);
    expect(all).not.toContain(svc.adminKey);
    expect(all).not.toContain(created.body.key);
    expect(all.toLowerCase()).not.toContain('bearer');
  });

  it('writes request lines at LOG_REQUESTS (debug by default, so that at info the events stand out)', async () => {
    await svc.call('GET', '/v1/account');
    const lines = svc.logs.map((l) => JSON.parse(l) as { msg: string; level: number; path?: string });
    expect(lines.find((l) => l.msg === 'request' && l.path === '/v1/account')?.level).toBe(30);
    const quiet = await startTestService();
    try {
      await quiet.call('GET', '/v1/account');
      expect(quiet.logs.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg === 'request')).toEqual([]);
    } finally {
      await quiet.stop();
    }
  });

  it('echoes a caller request id and makes one when absent', async () => {
    const res = await svc.call('GET', '/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    const res2 = await svc.call('GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res2.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

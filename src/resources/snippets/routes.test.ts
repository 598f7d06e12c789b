import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../../test/support/service.js';

describe('snippets', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('are created, read, listed, updated and deleted, in their own account only', async () => {
    const created = await svc.call('POST', '/v1/snippets', { body: { name: 'auth', script: "request.headers['x'] = 1" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(Number), name: 'auth', script: "request.headers['x'] = 1", updated_at: null });
    const id = created.body.id;
    expect((await svc.call('GET', `/v1/snippets/${id}`)).body).toEqual(created.body);
    const list = await svc.call('GET', '/v1/snippets');
    expect(list.body).toEqual([created.body]);
    expect(list.headers.get('content-range')).toBe('0-0/1');
    const updated = await svc.call('PUT', `/v1/snippets/${id}`, { body: { name: 'auth 2', script: 'x' } });
    expect(updated.body).toMatchObject({ name: 'auth 2', script: 'x', updated_at: expect.any(String) });
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/snippets/${id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('PUT', `/v1/snippets/${id}`, { key: other.key, body: { name: 'n', script: 's' } })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/snippets/${id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/snippets/${id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/snippets/${id}`)).status).toBe(404);
  });

  it('refuse empty names and scripts and unknown fields, storing nothing', async () => {
    expectFieldError(await svc.call('POST', '/v1/snippets', { body: { name: '', script: 'x' } }), 'body.name', 'minLength');
    expectFieldError(await svc.call('POST', '/v1/snippets', { body: { name: 'n' } }), 'body.script', 'required');
    expectFieldError(await svc.call('POST', '/v1/snippets', { body: { name: 'n', script: 'x', lang: 'js' } }), 'body.lang', 'additionalProperties');
    expect((await svc.call('GET', '/v1/snippets')).body).toEqual([]);
  });

  it('are what API checks and groups may name as setup and teardown; another id is a 400', async () => {
    const snippet = (await svc.call('POST', '/v1/snippets', { body: { name: 'setup', script: 'x' } })).body;
    const ok = await svc.call('POST', '/v1/checks/api', {
      body: { name: 'a', request: { url: 'https://x.test' }, setupSnippetId: snippet.id, tearDownSnippetId: snippet.id },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.setupSnippetId).toBe(snippet.id);
    const other = await createOtherTenant(svc);
    const foreign = (await svc.call('POST', '/v1/snippets', { key: other.key, body: { name: 'theirs', script: 'x' } })).body;
    expectFieldError(
      await svc.call('POST', '/v1/checks/api', { body: { name: 'b', request: { url: 'https://x.test' }, setupSnippetId: foreign.id } }),
      'body.setupSnippetId',
      'exists',
    );
    expectFieldError(await svc.call('POST', '/v1/check-groups', { body: { name: 'g', tearDownSnippetId: 999999 } }), 'body.tearDownSnippetId', 'exists');
    expect((await svc.call('GET', '/v1/check-groups')).body).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../../test/support/service.js';
import { openSecret } from '../../storage/secret-box.js';

describe('environment variables', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  const count = async () => (await svc.deps.sql`select count(*)::int as n from variables`)[0].n as number;

  it('creates with defaults and retrieves by key', async () => {
    const res = await svc.call('POST', '/v1/variables', { body: { key: 'API_URL', value: 'https://x.test' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ key: 'API_URL', value: 'https://x.test', locked: false, secret: false, updated_at: null });
    const got = await svc.call('GET', '/v1/variables/API_URL');
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('answers 409 on a duplicate key and stores nothing', async () => {
    await svc.call('POST', '/v1/variables', { body: { key: 'DUP', value: 'a' } });
    const before = await count();
    const res = await svc.call('POST', '/v1/variables', { body: { key: 'DUP', value: 'b' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    expect(await count()).toBe(before);
    expect((await svc.call('GET', '/v1/variables/DUP')).body.value).toBe('a');
  });

  it.each([
    [{ value: 'x' }, 'body.key', 'required'],
    [{ key: 'K' }, 'body.value', 'required'],
    [{ key: '1BAD', value: 'x' }, 'body.key', 'pattern'],
    [{ key: 'has-dash', value: 'x' }, 'body.key', 'pattern'],
    [{ key: 'K', value: 5 }, 'body.value', 'type'],
    [{ key: 'K', value: 'x', locked: 'yes' }, 'body.locked', 'type'],
    [{ key: 'K', value: 'x', color: 'red' }, 'body.color', 'additionalProperties'],
  ])('rejects %j naming %s', async (body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/variables', { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it('never returns the value of a secret, in any read', async () => {
    const created = await svc.call('POST', '/v1/variables', { body: { key: 'TOKEN', value: 's3cr3t-value', secret: true } });
    expect(created.status).toBe(201);
    expect(created.body.value).toBe('');
    expect((await svc.call('GET', '/v1/variables/TOKEN')).body.value).toBe('');
    const list = await svc.call('GET', '/v1/variables?limit=100');
    expect(list.text).not.toContain('s3cr3t-value');
    expect(list.body.find((v: { key: string }) => v.key === 'TOKEN').value).toBe('');
    const updated = await svc.call('PUT', '/v1/variables/TOKEN', { body: { value: 'n3w-s3cr3t' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ value: '', secret: true });
    // Stored sealed (docs/platform.md, "Secrets at rest"); the service's key opens what was given, for the runners.
    const [row] = await svc.deps.sql`select value from variables where key = 'TOKEN'`;
    expect(row.value).not.toContain('s3cr3t');
    expect(openSecret(row.value)).toBe('n3w-s3cr3t');
    expect(svc.logs.join('\n')).not.toContain('s3cr3t');
  });

  it('refuses to clear secret, and leaves the variable as it was', async () => {
    await svc.call('POST', '/v1/variables', { body: { key: 'SEALED', value: 'v1', secret: true } });
    const res = await svc.call('PUT', '/v1/variables/SEALED', { body: { value: 'v2', secret: false } });
    expectFieldError(res, 'body.secret', 'immutable');
    const [row] = await svc.deps.sql`select value, secret from variables where key = 'SEALED'`;
    expect({ ...row, value: openSecret(row!.value) }).toMatchObject({ value: 'v1', secret: true });
  });

  it('updates value and locked, but not the key', async () => {
    await svc.call('POST', '/v1/variables', { body: { key: 'EDIT_ME', value: 'a' } });
    const res = await svc.call('PUT', '/v1/variables/EDIT_ME', { body: { value: 'b', locked: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: 'EDIT_ME', value: 'b', locked: true, secret: false });
    expect(res.body.updated_at).not.toBeNull();
    expectFieldError(await svc.call('PUT', '/v1/variables/EDIT_ME', { body: { key: 'OTHER', value: 'c' } }), 'body.key', 'immutable');
    expect((await svc.call('GET', '/v1/variables/EDIT_ME')).body.value).toBe('b');
    expect((await svc.call('PUT', '/v1/variables/NOPE', { body: { value: 'x' } })).status).toBe(404);
  });

  it('lists with paging and a total', async () => {
    for (const k of ['P1', 'P2', 'P3']) await svc.call('POST', '/v1/variables', { body: { key: k, value: k } });
    const total = await count();
    const page = await svc.call('GET', '/v1/variables?limit=2&page=2');
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(2);
    expect(Number(page.headers.get('x-total-count'))).toBe(total);
    expect(page.headers.get('content-range')).toBe(`2-3/${total}`);
    const beyond = await svc.call('GET', '/v1/variables?limit=100&page=50');
    expect(beyond.body).toEqual([]);
    expect(Number(beyond.headers.get('x-total-count'))).toBe(total);
    expect(beyond.headers.get('content-range')).toBe(`*/${total}`);
    expectFieldError(await svc.call('GET', '/v1/variables?limit=101'), 'query.limit', 'maximum');
    expectFieldError(await svc.call('GET', '/v1/variables?page=0'), 'query.page', 'minimum');
  });

  it('deletes, then answers 404', async () => {
    await svc.call('POST', '/v1/variables', { body: { key: 'GONE', value: 'x' } });
    expect((await svc.call('DELETE', '/v1/variables/GONE')).status).toBe(204);
    expect((await svc.call('GET', '/v1/variables/GONE')).status).toBe(404);
    expect((await svc.call('DELETE', '/v1/variables/GONE')).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's keys", async () => {
    await svc.call('POST', '/v1/variables', { body: { key: 'MINE', value: 'private' } });
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', '/v1/variables/MINE', { key: other.key })).status).toBe(404);
    expect((await svc.call('PUT', '/v1/variables/MINE', { key: other.key, body: { value: 'x' } })).status).toBe(404);
    expect((await svc.call('DELETE', '/v1/variables/MINE', { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/variables', { key: other.key })).body).toEqual([]);
    // The same key name is free in the other account.
    expect((await svc.call('POST', '/v1/variables', { key: other.key, body: { key: 'MINE', value: 'theirs' } })).status).toBe(201);
    expect((await svc.call('GET', '/v1/variables/MINE')).body.value).toBe('private');
  });
});

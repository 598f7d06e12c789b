import { generateSync } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedForGeneration, changeCount, fixtureIds, installChangeCounter, operationsOf } from '../../test/support/openapi-fuzz.js';
import { startTestService, type TestService } from '../../test/support/service.js';
import { ACCOUNT_ROLES, type AccountRole } from '../model/accounts.js';
import { deploysSettled } from '../projects/deployments.js';
import { addMember } from './members.js';
import { hashPassword } from './passwords.js';
import { setAccountRateLimit } from './repository.js';
import { ensureUser, setPassword } from './users.js';

/**
 * Every authenticated operation of the service's own /openapi.json × every role × a person's key and their browser
 * session: a role the operation documents (`x-roles`) is never refused for its role, any other always is (a 403
 * whose reason is the role), every answer is a documented status, and a refused write changes nothing.
 */
describe('the role matrix: every operation × every role × key and session', () => {
  let svc: TestService;
  const callers: { role: AccountRole; via: 'key' | 'session'; headers: Record<string, string> }[] = [];
  let doc: { paths: Record<string, Record<string, { 'x-roles'?: string[]; security?: unknown[] }>> };
  let ids: Record<string, string[]>;
  const tally = { allowed: 0, refused: 0 };

  beforeAll(async () => {
    svc = await startTestService();
    await setAccountRateLimit(svc.deps.sql, svc.defaultAccountId, { points: 10_000_000, windowSeconds: 60 });
    const password = 'a password for the matrix';
    for (const role of ACCOUNT_ROLES) {
      const email = `${role.toLowerCase()}@matrix.test`;
      const user = await ensureUser(svc.deps.sql, email);
      await setPassword(svc.deps.sql, user.id, await hashPassword(password));
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, role);
      const signIn = await svc.call('POST', '/v1/auth/sign-in', { key: null, body: { email, password } });
      const session = { cookie: signIn.headers.getSetCookie()[0]!.split(';')[0]!, 'x-csrf-token': signIn.body.csrfToken as string };
      const key = await svc.call('POST', '/v1/users/me/api-keys', { key: null, headers: session, body: { name: 'matrix' } });
      callers.push({ role, via: 'key', headers: { authorization: `Bearer ${key.body.key}` } }, { role, via: 'session', headers: session });
    }
    doc = (await svc.call('GET', '/openapi.json')).body;
    ids = await fixtureIds(svc);
    await installChangeCounter(svc);
  }, 120_000);
  afterAll(async () => {
    console.log(`role matrix: ${tally.allowed} allowed and ${tally.refused} refused requests`);
    await svc?.stop();
  });

  it('refuses exactly the roles an operation does not document, and a refused write changes nothing', async () => {
    const operations = operationsOf(doc as never).filter((op) => doc.paths[op.path]![op.method.toLowerCase()]!.security?.length);
    expect(operations.length).toBeGreaterThan(150);
    let seed = 1;
    for (const op of operations) {
      const roles = doc.paths[op.path]![op.method.toLowerCase()]!['x-roles'];
      expect(roles, `${op.method} ${op.path} documents its roles`).toBeDefined();
      const body = op.body ? generateSync(boundedForGeneration(op.body) as never, { seed, optionalsProbability: 0.5 }) : undefined;
      const query = op.query ? (generateSync(boundedForGeneration(op.query) as never, { seed, optionalsProbability: 0 }) as Record<string, unknown>) : {};
      if (op.queryNames.includes('maxWaitSeconds')) query.maxWaitSeconds = 1;
      seed++;
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name]?.[0] ?? '00000000-0000-4000-8000-000000000000'));
      const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
      for (const caller of callers) {
        const allowed = roles!.includes(caller.role);
        const write = op.method !== 'GET';
        const before = !allowed && write ? await changeCount(svc) : undefined;
        const res = await svc.call(op.method, search.size ? `${path}?${search}` : path, { key: null, headers: caller.headers, body });
        const what = `${caller.role} by ${caller.via}: ${op.method} ${path} -> ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, what).toBeLessThan(500);
        expect(Object.keys(op.responses), what).toContain(String(res.status));
        const roleRefusal = res.status === 403 && res.body?.attributes?.reason === 'role';
        if (allowed) {
          expect(roleRefusal, what).toBe(false);
          tally.allowed++;
        } else {
          expect(roleRefusal, what).toBe(true);
          tally.refused++;
        }
        await deploysSettled();
        if (before !== undefined) expect(await changeCount(svc), `a refused write changed the store: ${what}`).toBe(before);
        // An Owner may require a second factor, which would refuse every other request of the matrix: undone here.
        await svc.deps.sql`update accounts set require_two_factor = false where require_two_factor`;
        svc.forgetKeys(); // changed behind the API's back: the next request must not wait for Postgres's announcement
      }
    }
  }, 900_000);
});

import { describe, expect, it } from 'vitest';
import { newTestEnv, removeRedisKeys, startTestService } from '../../test/support/service.js';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { startService } from '../service.js';
import { dropDatabase } from '../storage/postgres.js';

describe('bootstrap', () => {
  it('creates the default account and one admin key on first start only', async () => {
    const env = newTestEnv({ BOOTSTRAP_API_KEY: '' });
    const config = loadConfig(env);
    const logger = createLogger('silent');
    const first = await startService(config, logger);
    try {
      expect(first.generatedKey).toMatch(/^mk_/);
      const res = await fetch(`${first.url}/v1/account`, { headers: { authorization: `Bearer ${first.generatedKey}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: first.defaultAccountId, role: 'ADMIN' });
    } finally {
      await first.close();
    }
    const second = await startService(config, logger);
    try {
      expect(second.generatedKey).toBeUndefined();
      expect(second.defaultAccountId).toBe(first.defaultAccountId);
      const [{ n }] = await second.deps.sql`select count(*)::int as n from api_keys`;
      expect(n).toBe(1);
    } finally {
      await second.close();
      await dropDatabase(env.DATABASE_URL);
      await removeRedisKeys(env.REDIS_PREFIX);
    }
  });

  it('makes BOOTSTRAP_API_KEY an admin key of the default account, without generating another', async () => {
    const svc = await startTestService();
    try {
      expect(svc.generatedKey).toBeUndefined();
      const res = await svc.call('GET', '/v1/account');
      expect(res.body).toMatchObject({ id: svc.defaultAccountId, role: 'ADMIN' });
    } finally {
      await svc.stop();
    }
  });
});

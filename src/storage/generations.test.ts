import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRedisKeys } from '../../test/support/service.js';
import { DAY_MS, Generations } from './generations.js';

/** The report cache's day versions (generations.ts) against Redis: what ingest marks is what a report reads. */
describe('day versions of checks', () => {
  const prefix = `test:${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  let generations: Generations;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    generations = new Generations(redis, prefix);
  });
  afterAll(async () => {
    await removeRedisKeys(prefix);
    redis.disconnect();
  });

  it('marks each day of each check once a batch, over many checks, and the versions read back', async () => {
    const day = 20_000;
    // More checks than one script call marks, each with runs on one or two days.
    const checks = Array.from({ length: 1_500 }, () => randomUUID());
    const runs = checks.flatMap((checkId, i) => [
      { checkId, at: day * DAY_MS + 1000 },
      { checkId, at: day * DAY_MS + 2000 },
      ...(i % 3 === 0 ? [{ checkId, at: (day + 1) * DAY_MS }] : []),
    ]);
    await generations.bump(runs);
    await generations.bump(runs.slice(0, 2));
    const { days } = await generations.readMany(checks, day, day + 1);
    expect(days.get(checks[0]!)).toEqual(
      new Map([
        [day, 2],
        [day + 1, 1],
      ]),
    );
    expect(days.get(checks[1]!)).toEqual(
      new Map([
        [day, 1],
        [day + 1, 0],
      ]),
    );
    expect(days.get(checks[1_499]!)).toEqual(
      new Map([
        [day, 1],
        [day + 1, 0],
      ]),
    );
    expect([...days.values()].filter((d) => d.get(day + 1) === 1).length).toBe(500);
    // Each hash expires by itself (a check nobody writes to any more goes).
    const ttl = await redis.ttl(`${prefix}rgen:${checks[1_499]}`);
    expect(ttl).toBeGreaterThan(399 * 86_400);
    await generations.bump([]);
  });
});

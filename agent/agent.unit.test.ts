import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadAgentConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import type { RunJob, RunnableCheck } from '../src/run-kernel/run.js';
import { DiskBuffer, type MadeResult, RefusedBatch } from './buffer.js';
import { HttpPort } from './http-port.js';
import { ownerOf, ScheduleMemory } from './memory.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'agent-unit-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const made = (i: number, pad = 0): MadeResult => ({
  checkId: `c${i}`,
  location: 'office',
  slot: 1_800_000_000_000 + i * 60_000,
  outcome: { i, pad: 'x'.repeat(pad) },
});

describe("the agent's disk buffer", () => {
  it('keeps results across a restart and delivers each once, oldest first', async () => {
    const dir = tmp();
    const first = new DiskBuffer(dir, 1024 * 1024);
    first.add([made(1), made(2)]);
    first.add([made(3)]);
    first.close();
    // A kill -9 mid-write leaves half a line: it is no result.
    const [segment] = readdirSync(path.join(dir, 'buffer'));
    appendFileSync(path.join(dir, 'buffer', segment!), '{"checkId":"c4","loc');
    const again = new DiskBuffer(dir, 1024 * 1024);
    const got: string[] = [];
    expect(await again.drain(async (rs) => void got.push(...rs.map((r) => r.checkId)))).toBe(3);
    expect(got).toEqual(['c1', 'c2', 'c3']);
    expect(again.stats).toMatchObject({ results: 0, bytes: 0, dropped: 0 });
    expect(await again.drain(async () => expect.unreachable())).toBe(0);
  });

  it('keeps what it could not deliver for the next try', async () => {
    const buffer = new DiskBuffer(tmp(), 1024 * 1024);
    buffer.add([made(1), made(2), made(3)]);
    await expect(buffer.drain(async () => Promise.reject(new Error('unreachable')))).rejects.toThrow('unreachable');
    expect(buffer.stats.results).toBe(3);
    const got: MadeResult[] = [];
    await buffer.drain(async (rs) => void got.push(...rs), 2);
    expect(got.map((r) => r.checkId)).toEqual(['c1', 'c2', 'c3']);
  });

  it('sets a batch the service refuses aside (kept on disk, counted) and goes on with the rest', async () => {
    const dir = tmp();
    const buffer = new DiskBuffer(dir, 1024 * 1024);
    buffer.add([made(1), made(2), made(3), made(4)]);
    const got: string[] = [];
    const n = await buffer.drain(async (rs) => {
      if (rs.some((r) => r.checkId === 'c1')) throw new RefusedBatch('400: not a result this service takes');
      got.push(...rs.map((r) => r.checkId));
    }, 2);
    expect(n).toBe(2);
    expect(got).toEqual(['c3', 'c4']);
    expect(buffer.stats).toMatchObject({ results: 0, setAside: 2 });
    const [file] = readdirSync(path.join(dir, 'refused'));
    const kept = readFileSync(path.join(dir, 'refused', file!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { reason: string; result: MadeResult });
    expect(kept.map((k) => k.result.checkId)).toEqual(['c1', 'c2']);
    expect(kept[0]!.reason).toMatch(/not a result/);
  });

  it('stays under its size limit by dropping the oldest results, and counts them', async () => {
    const buffer = new DiskBuffer(tmp(), 3 * 1024 * 1024);
    // 1 MiB segments of ~100 KiB results: 40 results are about 4 MiB, a third more than the limit.
    for (let i = 0; i < 40; i++) buffer.add([made(i, 100 * 1024)]);
    expect(buffer.stats.bytes).toBeLessThanOrEqual(3 * 1024 * 1024);
    expect(buffer.stats.dropped).toBeGreaterThan(0);
    expect(buffer.stats.dropped + buffer.stats.results).toBe(40);
    const got: MadeResult[] = [];
    await buffer.drain(async (rs) => void got.push(...rs));
    // What is left is the newest, in order.
    expect(got.map((r) => r.checkId)).toEqual(Array.from({ length: got.length }, (_, k) => `c${40 - got.length + k}`));
  });
});

describe("the agent's disk buffer while it drains", () => {
  it('does not count the segment being delivered as dropped when new results push it past its limit', async () => {
    const buffer = new DiskBuffer(tmp(), 3 * 1024 * 1024);
    // Three 1 MiB segments: at the limit.
    for (let i = 0; i < 30; i++) buffer.add([made(i, 100 * 1024)]);
    expect(buffer.stats.dropped).toBe(0);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const got: MadeResult[] = [];
    let calls = 0;
    const draining = buffer.drain(async (rs) => {
      // The first batch waits while results keep coming in, past the limit.
      if (calls++ === 0) await held;
      got.push(...rs);
    });
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 30; i < 45; i++) buffer.add([made(i, 100 * 1024)]);
    release();
    await draining;
    // Every result handed to the service was delivered, none of them counted as dropped; what was dropped never left.
    const delivered = new Set(got.map((r) => r.checkId));
    expect(buffer.stats.dropped).toBeGreaterThan(0);
    const left: MadeResult[] = [];
    await buffer.drain(async (rs) => void left.push(...rs));
    expect(delivered.size + left.length + buffer.stats.dropped).toBe(45);
    for (const r of left) expect(delivered.has(r.checkId)).toBe(false);
  });
});

describe("the agent's port when the service refuses what it buffered", () => {
  /**
   * A service on 127.0.0.1 that registers the agent, hands out no runs, and answers /made with `made` ('hang': never).
   * `leases` answers lease calls instead, when given.
   */
  async function fakeService(made: number | 'hang', leases?: (n: number) => { status: number; body: unknown }) {
    let leaseCalls = 0;
    const calls: string[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls.push(req.url ?? '');
        const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (req.url === '/v1/agent/register')
          return json(200, { leaseSeconds: 30, location: { slugName: 'office' }, isOutdated: false, minAgentVersion: '0.0.0' });
        if (req.url === '/v1/agent/made' && made === 'hang') return;
        if (req.url === '/v1/agent/leases' && leases) {
          const answer = leases(leaseCalls++);
          return json(answer.status, answer.body);
        }
        if (req.url === '/v1/agent/made')
          return json(
            made as number,
            made === 200
              ? { accepted: 0, refused: [] }
              : { statusCode: made, error: 'Bad Request', message: 'body.results/0/outcome must NOT have additional properties' },
          );
        if (req.url === '/v1/agent/leases') return setTimeout(() => json(200, { leases: [] }), 20);
        json(404, {});
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      calls,
      close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
    };
  }
  const quiet = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
  const portFor = (apiUrl: string, buffer: DiskBuffer, offlineAfterMs = 60_000) =>
    new HttpPort({
      apiUrl,
      apiKey: `pl_${'a'.repeat(48)}`,
      agentId: 'a1',
      capabilities: ['API'],
      concurrency: 1,
      egressIps: [],
      offlineAfterMs,
      buffer,
      memory: new ScheduleMemory(),
      logger: quiet,
    });

  it('a buffer the service is slow to take does not hold up leasing: delivery has a loop of its own', async () => {
    const service = await fakeService('hang');
    const buffer = new DiskBuffer(tmp(), 1024 * 1024);
    buffer.add([made(1)]);
    const port = portFor(service.url, buffer);
    try {
      port.serve(async () => expect.unreachable());
      // Leasing waits for the delivery at most 5 s, then goes on while the delivery hangs.
      for (let i = 0; i < 200 && service.calls.filter((c) => c === '/v1/agent/leases').length < 5; i++) await new Promise((r) => setTimeout(r, 50));
      expect(service.calls).toContain('/v1/agent/made');
      expect(service.calls.filter((c) => c === '/v1/agent/leases').length).toBeGreaterThanOrEqual(5);
    } finally {
      await port.close(0);
      await service.close();
    }
  });

  it('a service that answers probes but not lease calls keeps the agent running from memory (no flapping)', async () => {
    // One scheduled run of a 10-second check, then every lease call fails (503) while register answers.
    const lease = {
      leaseId: 'bGVhc2UtMQ',
      expiresAt: Date.now() + 30_000,
      resultId: '00000000-0000-4000-8000-000000000001',
      run: { v: 1, accountId: 'a', checkId: 'c1', location: 'office', slot: Date.now() - 1000, attempt: 1, source: 'SCHEDULER', periodMs: 10_000 },
      check: { id: 'c1', checkType: 'API', locations: ['office'], runParallel: false },
    };
    const service = await fakeService(200, (n) =>
      n === 0 ? { status: 200, body: { leases: [lease] } } : { status: 503, body: { statusCode: 503, message: 'the queue is unavailable' } },
    );
    const port = portFor(service.url, new DiskBuffer(tmp(), 1024 * 1024), 300);
    try {
      port.serve(
        async () =>
          ({ startedAt: Date.now(), stoppedAt: Date.now(), hasFailures: false, hasErrors: false, isDegraded: false, metrics: {}, detail: {} }) as never,
      );
      for (let i = 0; i < 100 && !port.offline; i++) await new Promise((r) => setTimeout(r, 50));
      expect(port.offline).toBe(true);
      // Sampled for 5 s: the probes keep answering, the lease calls keep failing; the agent stays offline.
      let online = 0;
      for (let i = 0; i < 100; i++) {
        if (!port.offline) online++;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(service.calls.filter((c) => c === '/v1/agent/register').length).toBeGreaterThanOrEqual(3);
      expect(online).toBeLessThanOrEqual(5);
    } finally {
      await port.close(0);
      await service.close();
    }
  });

  it('a batch refused as a whole (a 400: a version skew) is set aside and leasing goes on', async () => {
    const service = await fakeService(400);
    const dir = tmp();
    const buffer = new DiskBuffer(dir, 1024 * 1024);
    buffer.add([made(1), made(2)]);
    const port = portFor(service.url, buffer);
    try {
      port.serve(async () => expect.unreachable());
      for (let i = 0; i < 100 && (service.calls.filter((c) => c === '/v1/agent/leases').length < 2 || buffer.stats.results); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(service.calls.filter((c) => c === '/v1/agent/leases').length).toBeGreaterThanOrEqual(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(service.calls.filter((c) => c === '/v1/agent/made')).toHaveLength(1);
      expect(buffer.stats).toMatchObject({ results: 0, setAside: 2 });
      expect(port.drainFailing).toBe(false);
    } finally {
      await port.close(0);
      await service.close();
    }
  });

  it('a buffer the service does not take for another reason stays, and says so (readiness)', async () => {
    const service = await fakeService(409);
    const buffer = new DiskBuffer(tmp(), 1024 * 1024);
    buffer.add([made(1)]);
    const port = portFor(service.url, buffer);
    try {
      port.serve(async () => expect.unreachable());
      for (let i = 0; i < 100 && !port.drainFailing; i++) await new Promise((r) => setTimeout(r, 50));
      expect(port.drainFailing).toBe(true);
      expect(buffer.stats).toMatchObject({ results: 1, setAside: 0 });
    } finally {
      await port.close(0);
      await service.close();
    }
  });
});

describe("the agent's memory of its schedule", () => {
  const check = { id: 'c1', checkType: 'API' } as RunnableCheck;
  const run = (slot: number, extra: Partial<RunJob> = {}): RunJob => ({
    v: 1,
    accountId: 'a',
    checkId: 'c1',
    location: 'office',
    slot,
    attempt: 1,
    source: 'SCHEDULER',
    periodMs: 10_000,
    ...extra,
  });

  it('hands out each next slot once, skips slots more than a period late, and ignores runs that are not scheduled', () => {
    const memory = new ScheduleMemory();
    memory.remember(run(100_000), check, 100_000);
    memory.remember(run(0, { source: 'TRIGGER_API', periodMs: undefined }), check, 100_000);
    expect(memory.size).toBe(1);
    expect(memory.due(105_000)).toEqual([]);
    expect(memory.due(110_500).map((d) => d.run.slot)).toEqual([110_000]);
    expect(memory.due(110_900)).toEqual([]);
    // Cut off for a while: the latest due slot runs, not a burst of the missed ones.
    expect(memory.due(155_000).map((d) => d.run.slot)).toEqual([150_000]);
    // A lease of an older slot never moves it back.
    memory.remember(run(120_000), check, 156_000);
    expect(memory.due(160_100).map((d) => d.run.slot)).toEqual([160_000]);
  });

  it("runs only the slots that are its location's turn when the check runs its locations in turn", () => {
    const memory = new ScheduleMemory();
    const inTurn = { id: 'c1', checkType: 'API', locations: ['eu-west-1', 'lab', 'office'], runParallel: false } as RunnableCheck;
    memory.remember(run(100_000), inTurn, 100_000);
    const handed: number[] = [];
    for (let now = 100_000; now <= 400_000; now += 1000) handed.push(...memory.due(now).map((d) => d.run.slot));
    // Slot n (n = slot / period) is office's when n % 3 === 2: one slot in three, as the scheduler hands them out.
    expect(handed).toEqual([110_000, 140_000, 170_000, 200_000, 230_000, 260_000, 290_000, 320_000, 350_000, 380_000]);
    const parallel = new ScheduleMemory();
    parallel.remember(run(100_000), { ...inTurn, runParallel: true }, 100_000);
    const all: number[] = [];
    for (let now = 100_000; now <= 400_000; now += 1000) all.push(...parallel.due(now).map((d) => d.run.slot));
    expect(all).toHaveLength(30);
  });

  it('agents cut off together share the checks they all held: each check runs on exactly one of them', () => {
    const agents = ['7f0c7d8e-0000-4000-8000-00000000000a', '7f0c7d8e-0000-4000-8000-00000000000b', '7f0c7d8e-0000-4000-8000-00000000000c'];
    const memories = agents.map(() => new ScheduleMemory());
    const checks = Array.from({ length: 60 }, (_, i) => `check-${i}`);
    for (const id of checks)
      memories.forEach((m, k) =>
        // The first agent held every check; the others held each one, and were told the same holders at their last lease.
        m.remember(run(100_000, { checkId: id }), { ...check, id }, 100_000, k === 0 && id.endsWith('7') ? [agents[0]!] : agents),
      );
    const ran = new Map<string, string[]>();
    memories.forEach((m, k) => {
      for (const d of m.due(110_500, agents[k])) ran.set(d.run.checkId, [...(ran.get(d.run.checkId) ?? []), agents[k]!]);
    });
    for (const id of checks) {
      const by = ran.get(id) ?? [];
      // A check one agent believes it holds alone runs there (never less monitoring); the others once.
      if (id.endsWith('7')) expect(by.length, id).toBeGreaterThanOrEqual(1);
      else expect(by, id).toEqual([ownerOf(id, agents)]);
    }
    // The shares are spread, not all on one agent.
    expect(new Set([...ran.values()].flat()).size).toBe(3);
    // Without holders (an older service), every agent runs what it remembers.
    const alone = new ScheduleMemory();
    alone.remember(run(100_000), check, 100_000);
    expect(alone.due(110_500, agents[1])).toHaveLength(1);
  });

  it('forgets a check not leased for three periods', () => {
    const memory = new ScheduleMemory();
    memory.remember(run(0), check, 0);
    memory.forgetStale(80_000);
    expect(memory.size).toBe(1);
    memory.forgetStale(91_000);
    expect(memory.size).toBe(0);
  });
});

describe("the agent's settings", () => {
  const key = `pl_${'a'.repeat(48)}`;
  it("are the anchor agent's names, with their defaults", () => {
    const c = loadAgentConfig({ API_KEY: key, API_URL: 'https://monitoring.example.com/' });
    expect(c).toMatchObject({
      apiKey: key,
      apiUrl: 'https://monitoring.example.com',
      jobConcurrency: 1,
      healthPort: 0,
      offlineAfterMs: 15_000,
      bufferMaxBytes: 256 * 1024 * 1024,
    });
  });
  it('refuse what would not work, naming the setting', () => {
    expect(() => loadAgentConfig({ API_URL: 'https://x.test' })).toThrow(ConfigError);
    expect(() => loadAgentConfig({ API_KEY: 'mk_abc', API_URL: 'https://x.test' })).toThrow(/API_KEY/);
    expect(() => loadAgentConfig({ API_KEY: key })).toThrow(/API_URL/);
    expect(() => loadAgentConfig({ API_KEY: key, API_URL: 'https://x.test', JOB_CONCURRENCY: '11' })).toThrow(/JOB_CONCURRENCY/);
    expect(() => loadAgentConfig({ API_KEY: key, API_URL: 'https://x.test', EGRESS_IPS: 'nope' })).toThrow(/EGRESS_IPS/);
  });
});

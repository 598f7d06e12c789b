import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, type CliResult, checkly, cliEnv } from '../support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService } from '../support/service.js';
import { type HttpTarget, startHttpTarget } from '../support/targets.js';

/**
 * Live runs with the anchor's CLI (checkly 9.5.0): `checkly test` of a sample project (one passing and one failing
 * API check against a local server) and `checkly trigger` of the account's tagged checks, each result printed as
 * it arrives over MQTT from the service's own broker; the broker keeps accounts apart.
 */
const SAMPLE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'projects/live');

describe('checkly test, trigger and live results over MQTT', { timeout: 180_000 }, () => {
  let svc: TestService;
  let target: HttpTarget;
  let home: string;
  let project: string;
  let env: NodeJS.ProcessEnv;
  /** A run whose results do not come is given up by the CLI itself (60 s a check), so the failure shows its output. */
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
    checkly({ ...env, ...extra }, project, ['test', 'trigger'].includes(args[0]) && !args.includes('--timeout') ? [...args, '--timeout', '60'] : args, 150_000);
  const sessions = async () =>
    (await svc.call('GET', '/v1/test-sessions?limit=100')).body.entries as {
      id: string;
      name: string;
      status: string;
      provider: string;
      passed: string[];
      failed: string[];
    }[];

  beforeAll(async () => {
    // The in-process runner executes the runs; no scheduler (nothing runs on its own).
    svc = await startTestService({ RUNNER: 'on' });
    target = await startHttpTarget();
    home = mkdtempSync(path.join(os.tmpdir(), 'checkly-live-'));
    project = path.join(home, 'live');
    cpSync(SAMPLE, project, { recursive: true });
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(path.join(CLI_DIR, 'node_modules/checkly'), path.join(project, 'node_modules/checkly'), 'dir');
    env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home, { LIVE_URL: target.url, CHECKLY_MQTT_URL: `${svc.url.replace('http', 'ws')}/mqtt` });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await target?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('checkly test prints the passing and the failing check as they come, exits 1 and records a session', async () => {
    const res = await cli(['test', '--reporter', 'list']);
    expect(res.code, res.out).toBe(1);
    expect(res.out).toContain('Running 2 checks in eu-west-1');
    expect(res.out).toMatch(/✔ Live OK/);
    expect(res.out).toMatch(/✖ Live failing/);
    // The failing check's details, from the result's checkRunData.
    expect(res.out).toContain(`GET ${target.url}/status/503`);
    expect(res.out).toMatch(/Status Code: 503/);
    expect(res.out).toContain('1 failed, 1 passed, 2 total');
    const id = /Test session ID: ([0-9a-f-]{36})/.exec(res.out)![1];
    expect(res.out).toContain(`Detailed session summary at: ${svc.url}/v1/test-sessions/${id}`);
    const session = (await svc.call('GET', `/v1/test-sessions/${id}`)).body;
    expect(session).toMatchObject({ name: 'Live runs', status: 'FAILED' });
    expect(session.results.map((r: { name: string; status: string }) => `${r.name}:${r.status}`).sort()).toEqual(['Live OK:PASSED', 'Live failing:FAILED']);
    // The checks ran as sent: the account has none of them.
    expect((await svc.call('GET', '/v1/checks')).body).toEqual([]);
    // And the runner really made the requests.
    expect(target.hits('/ok').length).toBeGreaterThan(0);
  });

  it('--no-record keeps no session; only passing checks exit 0', async () => {
    const before = (await sessions()).length;
    const res = await cli(['test', '--no-record', '--grep', 'Live OK']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toContain('1 passed, 1 total');
    expect(await sessions()).toHaveLength(before);
  });

  it('test-sessions get --watch follows a session to its end', async () => {
    const [latest] = await sessions();
    const res = await cli(['test-sessions', 'get', latest.id, '--watch']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(/Status:\s+failed/i);
  });

  it("checkly trigger --tags runs the account's tagged checks and only those", async () => {
    const make = (name: string, tags: string[], path: string) =>
      svc.call('POST', '/v1/checks/api', {
        body: {
          name,
          tags,
          locations: ['eu-west-1'],
          request: { url: `${target.url}${path}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        },
      });
    await make('Tagged healthy', ['smoke', 'shop'], '/ok');
    await make('Tagged too', ['smoke'], '/ok');
    await make('Not tagged', ['other'], '/status/500');
    const res = await cli(['trigger', '--tags', 'smoke', '--location', 'eu-west-1']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(/✔ Tagged healthy/);
    expect(res.out).toMatch(/✔ Tagged too/);
    expect(res.out).not.toContain('Not tagged');
    expect(res.out).toContain('2 passed, 2 total');
    const [triggered] = await sessions();
    expect(triggered).toMatchObject({ provider: 'TRIGGER', status: 'PASSED' });
    expect(triggered.passed).toHaveLength(2);
    const none = await cli(['trigger', '--tags', 'no-such-tag']);
    expect(none.code).toBe(1);
    expect(none.out).toContain('No matching checks were found.');
  });

  it("the broker refuses logins without the account's key and subscriptions to another account's topics", async () => {
    const url = `${svc.url.replace('http', 'ws')}/mqtt`;
    const other = await createOtherTenant(svc);
    /** Within `ms`, or fails saying what did not happen. */
    const within = <T>(what: string, p: Promise<T>, ms = 15_000) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))]);
    const connect = (username: string, password: string) =>
      within(
        `connect as ${username}`,
        new Promise<mqtt.MqttClient>((resolve, reject) => {
          const client = mqtt.connect(url, { username, password, reconnectPeriod: 0, connectTimeout: 10_000 });
          client.once('connect', () => resolve(client));
          const fail = (err: Error) => {
            client.end(true);
            reject(err);
          };
          client.once('error', fail);
          client.once('close', () => fail(new Error('Connection closed before it was accepted (Not authorized)')));
        }),
      );
    await expect(connect(svc.defaultAccountId, 'not-a-key')).rejects.toThrow(/Not authorized|Bad username or password/i);
    // Another account's key does not log in as this account.
    await expect(connect(svc.defaultAccountId, other.key)).rejects.toThrow(/Not authorized|Bad username or password/i);
    const theirs = await connect(other.accountId, other.key);
    const mine = await connect(svc.defaultAccountId, svc.adminKey);
    try {
      // Each refused with the SUBACK failure code (the client reports it as an error).
      for (const topic of [`account/${svc.defaultAccountId}/#`, 'account/+/ad-hoc-check-results/#', '#', `account/${svc.defaultAccountId}`]) {
        await expect(theirs.subscribeAsync(topic), topic).rejects.toThrow(/Subscribe error/);
      }
      expect((await theirs.subscribeAsync(`account/${other.accountId}/#`)).map((g) => g.qos)).toEqual([0]);
      const seen: string[] = [];
      theirs.on('message', (topic) => seen.push(topic));
      mine.on('message', (topic) => seen.push(`mine:${topic}`));
      await mine.subscribeAsync(`account/${svc.defaultAccountId}/#`);
      // A client cannot publish, not even on its own topics: the broker drops the connection.
      const dropped = new Promise<void>((resolve) => theirs.once('close', () => resolve()));
      theirs.publish(`account/${other.accountId}/ad-hoc-check-results/x/y/z/result`, '{"resultType":"FINAL"}');
      await within('the publishing client dropped', dropped);
      // This account's run reaches this account only.
      const res = await cli(['test', '--no-record', '--grep', 'Live OK']);
      expect(res.code, res.out).toBe(0);
      expect(seen.some((t) => t.startsWith(`mine:account/${svc.defaultAccountId}/ad-hoc-check-results/`) && t.endsWith('/result'))).toBe(true);
      expect(seen.filter((t) => !t.startsWith('mine:'))).toEqual([]);
    } finally {
      theirs.end(true);
      mine.end(true);
    }
  });
});

import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver } from '../test/support/receivers.js';
import { newTestEnv, removeRedisKeys, startTestService, type TestService } from '../test/support/service.js';
import { loadConfig } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { openServiceSecrets, rotateSecrets } from './secrets.js';
import { startService } from './service.js';
import { connectPostgres, dropDatabase } from './storage/postgres.js';
import { SecretBox } from './storage/secret-box.js';
import { openSecrets, SecretsKeyError } from './storage/secret-keys.js';

const cert = readFileSync(new URL('../test/fixtures/client-cert.pem', import.meta.url), 'utf8');
const key = readFileSync(new URL('../test/fixtures/client-key.pem', import.meta.url), 'utf8');

/** Every secret this suite stores, as a client sends it: none may be found in a dump of the database. */
const SECRETS = {
  variable: 'account-variable-s3cr3t',
  checkVar: 'check-variable-s3cr3t',
  groupVar: 'group-variable-s3cr3t',
  header: 'webhook-header-s3cr3t',
  webhookSecret: 'webhook-signing-s3cr3t',
  pagerduty: 'PDKEYPDKEYPDKEYPDKEYPDKEYPDKEY12',
  opsgenie: 'opsgenie-key-s3cr3t',
  oidc: 'oidc-client-s3cr3t',
  passphrase: 's3cret',
};

/** Every row of the tables that hold secrets, as text: what a dump or a backup would give away. */
async function dump(sql: ReturnType<typeof connectPostgres>): Promise<string> {
  const tables = ['variables', 'checks', 'check_groups', 'alert_channels', 'account_oidc', 'users', 'client_certificates', 'adhoc_runs'];
  const parts: string[] = [];
  for (const t of tables) parts.push(JSON.stringify(await sql`select * from ${sql(t)}`));
  return parts.join('\n');
}

describe('secrets at rest', () => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  const keyA = randomBytes(32).toString('base64');
  let totpSecret = '';

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    svc = await startTestService({ SECRETS_KEY: keyA });
    const made = async (path: string, body: unknown) => {
      const res = await svc.call('POST', path, { body });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body;
    };
    await made('/v1/variables', { key: 'TOKEN', value: SECRETS.variable, secret: true });
    const group = await made('/v1/check-groups', {
      name: 'g',
      locations: ['eu-west-1'],
      environmentVariables: [{ key: 'G', value: SECRETS.groupVar, secret: true }],
    });
    await made('/v1/checks/api?autoAssignAlerts=false', {
      name: 'c',
      groupId: group.id,
      locations: ['eu-west-1'],
      request: { url: 'http://127.0.0.1:9/' },
      environmentVariables: [{ key: 'C', value: SECRETS.checkVar, secret: true }],
    });
    await made('/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'hook',
        url: `${receiver.url}/hook`,
        method: 'POST',
        headers: [{ key: 'X-Key', value: SECRETS.header, secret: true }],
        webhookSecret: SECRETS.webhookSecret,
      },
    });
    await made('/v1/alert-channels', { type: 'PAGERDUTY', config: { serviceKey: SECRETS.pagerduty } });
    await made('/v1/alert-channels', { type: 'OPSGENIE', config: { name: 'og', apiKey: SECRETS.opsgenie, region: 'EU', priority: 'P3' } });
    await made('/v1/client-certificates', { host: 'a.test', cert, key, passphrase: SECRETS.passphrase });
    // An OpenID provider's settings as stored (saving them asks the provider, which this suite does not run).
    const { saveAccountOidc } = await import('./accounts/oidc.js');
    await saveAccountOidc(svc.deps.sql, svc.defaultAccountId, {
      issuer: 'http://127.0.0.1:9/',
      clientId: 'c',
      clientSecret: SECRETS.oidc,
      roleClaim: 'groups',
      roleMap: [],
      defaultRole: null,
      trustProviderMfa: false,
    });
    const { ensureUser, setTotpSecret } = await import('./accounts/users.js');
    totpSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    await setTotpSecret(svc.deps.sql, (await ensureUser(svc.deps.sql, 'totp@example.test')).id, totpSecret);
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  it('stores no secret in the clear, and the service still uses each one', async () => {
    const text = await dump(svc.deps.sql);
    for (const [what, value] of Object.entries({ ...SECRETS, totp: totpSecret })) expect(text.includes(value), what).toBe(false);
    expect(text).not.toContain('PRIVATE KEY');
    // The webhook's test message carries the secret header: it was opened to be sent.
    const [hook] = await svc.deps.sql<{ id: number }[]>`select id from alert_channels where type = 'WEBHOOK'`;
    expect((await svc.call('POST', `/v1/alert-channels/${hook!.id}/test`)).body).toMatchObject({ ok: true });
    expect(receiver.to('/hook').at(-1)!.headers['x-key']).toBe(SECRETS.header);
    expect(svc.logs.join('\n')).not.toContain('s3cr3t');
  });

  it('seals what an earlier version stored in the clear at the next start, and refuses to start without its key or with another', async () => {
    // As an earlier version left it: plain values and no mark that sealing is done.
    await svc.deps.sql`update variables set value = 'plain-from-before' where key = 'TOKEN'`;
    await svc.deps.sql`delete from service_secrets where name = 'secrets-sealed'`;
    const env: Record<string, string> = { ...svc.env, SECRETS_KEY: keyA };
    const logger = createLogger('silent');
    const admin = connectPostgres(env.DATABASE_URL, 2);
    try {
      const opened = await openServiceSecrets(admin, loadConfig(env).secrets, logger);
      const [row] = await admin<{ value: string }[]>`select value from variables where key = 'TOKEN'`;
      expect(row!.value).not.toContain('plain-from-before');
      expect(opened.box.open(row!.value)).toBe('plain-from-before');

      // No key (and no key file where this process looks): a clear refusal, naming what to set.
      const noKey = loadConfig({ ...env, SECRETS_KEY: '', SECRETS_KEY_FILE: `${env.DATA_DIR}/no-such-key` }).secrets;
      await expect(openSecrets(admin, noKey)).rejects.toThrow(/no key to open them: set SECRETS_KEY/);
      // Another key: refused before anything is read with it.
      const wrong = loadConfig({ ...env, SECRETS_KEY: randomBytes(32).toString('hex') }).secrets;
      await expect(openSecrets(admin, wrong)).rejects.toThrow(SecretsKeyError);
      await expect(startService(loadConfig({ ...env, PORT: '0', SECRETS_KEY: randomBytes(32).toString('hex') }), logger)).rejects.toThrow(
        /is not the key the stored secrets were sealed with/,
      );
    } finally {
      await admin.end();
    }
  });

  it('rotates: with the new key and the old one as previous, every secret is sealed anew; then the old key alone is refused', async () => {
    const keyB = randomBytes(32).toString('base64');
    const env: Record<string, string> = { ...svc.env, SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA };
    const admin = connectPostgres(env.DATABASE_URL, 2);
    try {
      const opened = await openSecrets(admin, loadConfig(env).secrets);
      expect(opened.rotationPending).toBe(true);
      const sealed = await rotateSecrets(admin, opened.box);
      expect(sealed).toMatchObject({
        'TOTP secrets': 1,
        'OpenID client secrets': 1,
        'secret account variables': 1,
        'checks and groups with secret variables': 2,
        'alert channels': 3,
        'client certificates': 1,
      });
      const ids = new Set([...(await dump(admin)).matchAll(/enc1\.([0-9a-f]{8})\./g)].map((m) => m[1]));
      expect([...ids]).toEqual([opened.box.currentId]);
      expect((await openSecrets(admin, loadConfig({ ...env, SECRETS_KEY_PREVIOUS: '' }).secrets)).rotationPending).toBe(false);
      await expect(openSecrets(admin, loadConfig({ ...env, SECRETS_KEY: keyA, SECRETS_KEY_PREVIOUS: '' }).secrets)).rejects.toThrow(SecretsKeyError);
      // What the service reads afterwards is what was stored.
      const [pd] = await admin<{ config: { serviceKey: string } }[]>`select config from alert_channels where type = 'PAGERDUTY'`;
      expect(new SecretBox(Buffer.from(keyB, 'base64')).open(pd!.config.serviceKey)).toBe(SECRETS.pagerduty);
    } finally {
      // The suite's own service goes on with the new key.
      await openSecrets(admin, loadConfig({ ...env, SECRETS_KEY_PREVIOUS: '' }).secrets);
      await admin.end();
    }
  });

  it('makes a key file on a fresh install without SECRETS_KEY, and uses it at the next start', async () => {
    const env = newTestEnv({ SECRETS_KEY: '' });
    env.SECRETS_KEY_FILE = `${env.DATA_DIR}/keys-${randomBytes(3).toString('hex')}/secrets.key`;
    const lines: string[] = [];
    const sink = { write: (line: string) => void lines.push(line) };
    const first = await startService(loadConfig(env), createLogger('info', sink as never));
    try {
      const made = readFileSync(env.SECRETS_KEY_FILE, 'utf8').trim();
      expect(Buffer.from(made, 'base64')).toHaveLength(32);
      expect(statSync(env.SECRETS_KEY_FILE).mode & 0o777).toBe(0o600);
      expect(lines.join('\n')).toMatch(/made the secrets key/);
      await first.close();
      // The next start reads the same file (no new key): it opens what the first sealed.
      const again = await startService(loadConfig(env), createLogger('silent'));
      await again.close();
      expect(readFileSync(env.SECRETS_KEY_FILE, 'utf8').trim()).toBe(made);
    } finally {
      await first.close();
      await dropDatabase(env.DATABASE_URL);
      await removeRedisKeys(env.REDIS_PREFIX);
    }
  }, 60_000);
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';
import { openSecret } from '../storage/secret-box.js';

describe('alert channels', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const count = async () => (await svc.deps.sql`select count(*)::int as n from alert_channels`)[0].n as number;

  it.each([
    [{ type: 'EMAIL', config: { address: 'a@x.test' } }, { address: 'a@x.test' }],
    [{ type: 'SLACK', config: { url: 'https://hooks.slack.test/T1' } }, { url: 'https://hooks.slack.test/T1' }],
    [
      { type: 'SMS', config: { number: '+31612345678', name: 'On call' } },
      { number: '+31612345678', name: 'On call' },
    ],
    [
      { type: 'WEBHOOK', config: { name: 'pager', url: 'https://x.test/hook', method: 'PUT', queryParameters: [{ key: 'a', value: 'b' }] } },
      { name: 'pager', url: 'https://x.test/hook', method: 'PUT', headers: [], queryParameters: [{ key: 'a', value: 'b', locked: false }] },
    ],
  ])('creates a %j channel', async (body, config) => {
    const res = await svc.call('POST', '/v1/alert-channels', { body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: body.type, config, sendRecovery: true, sendFailure: true, sendDegraded: false, subscriptions: [] });
    expect(res.body.health).toEqual({ status: 'UNUSED', consecutiveFailures: 0, lastDeliveryAt: null, lastError: null });
    // A webhook channel's signing key is in this response only, and stored for signing.
    const { signingSecret, ...rest } = res.body;
    expect(signingSecret === undefined).toBe(body.type !== 'WEBHOOK');
    if (signingSecret) {
      expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      const [row] = await svc.deps.sql`select signing_secret from alert_channels where id = ${res.body.id}`;
      expect(row.signing_secret).not.toContain('whsec_');
      expect(openSecret(row.signing_secret)).toBe(signingSecret);
    }
    const read = await svc.call('GET', `/v1/alert-channels/${res.body.id}`);
    expect(read.body).toEqual(rest);
    expect((await svc.call('GET', '/v1/alert-channels?limit=100')).text).not.toContain('whsec_');
  });

  it.each([
    [{ config: {} }, 'body.type', 'required'],
    [{ type: 'PIGEON', config: {} }, 'body.type', 'enum'],
    [{ type: 'EMAIL', config: { address: 'not-an-email' } }, 'body.config.address', 'format'],
    [{ type: 'EMAIL', config: {} }, 'body.config.address', 'required'],
    [{ type: 'SMS', config: { number: '0612', name: 'x' } }, 'body.config.number', 'pattern'],
    [{ type: 'SLACK', config: { url: 'ftp://x.test' } }, 'body.config.url', 'pattern'],
    [{ type: 'WEBHOOK', config: { name: 'x', url: 'https://x.test', method: 'TRACE' } }, 'body.config.method', 'enum'],
    [{ type: 'WEBHOOK', config: { name: 'x', url: 'https://x.test', headers: [{ key: 'a' }] } }, 'body.config.headers[0].value', 'required'],
    [{ type: 'EMAIL', config: { address: 'a@x.test', cc: 'b@x.test' } }, 'body.config.cc', 'additionalProperties'],
  ])('rejects %j naming %s, storing nothing', async (body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/alert-channels', { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it('updates config but not type, and deletes', async () => {
    const { body: ch } = await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'a@x.test' } } });
    const upd = await svc.call('PUT', `/v1/alert-channels/${ch.id}`, { body: { type: 'EMAIL', config: { address: 'b@x.test' }, sendDegraded: true } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ config: { address: 'b@x.test' }, sendDegraded: true });
    expectFieldError(
      await svc.call('PUT', `/v1/alert-channels/${ch.id}`, { body: { type: 'SLACK', config: { url: 'https://x.test' } } }),
      'body.type',
      'immutable',
    );
    expect((await svc.call('DELETE', `/v1/alert-channels/${ch.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/alert-channels/${ch.id}`)).status).toBe(404);
  });

  it('subscribes checks and groups, pauses a subscription, and reflects it on the check', async () => {
    const { body: ch } = await svc.call('POST', '/v1/alert-channels', { body: { type: 'SMS', config: { number: '+15551234567', name: 'ops' } } });
    const { body: c } = await svc.call('POST', '/v1/checks/browser?autoAssignAlerts=false', { body: { name: 'x', script: null } });
    const { body: g } = await svc.call('POST', '/v1/check-groups', { body: { name: 'g' } });
    const sub = await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: c.id, activated: true } });
    expect(sub.status).toBe(200);
    expect(sub.body).toEqual({ alertChannelId: ch.id, checkId: c.id, groupId: null, activated: true });
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body.alertChannels.sms).toEqual([{ number: '+15551234567', name: 'ops' }]);
    const paused = await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: c.id, activated: false } });
    expect(paused.body.activated).toBe(false);
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body.alertChannels.sms).toEqual([]);
    const gsub = await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { groupId: g.id } });
    expect(gsub.body).toEqual({ alertChannelId: ch.id, checkId: null, groupId: g.id, activated: true });
    expect((await svc.call('GET', `/v1/alert-channels/${ch.id}`)).body.subscriptions).toHaveLength(2);

    // The anchor sends the other id as null.
    const anchorForm = await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: c.id, groupId: null, activated: true } });
    expect(anchorForm.body).toEqual({ alertChannelId: ch.id, checkId: c.id, groupId: null, activated: true });
    expectFieldError(await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: null, groupId: null } }), 'body.checkId', 'oneOf');
    expectFieldError(await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { activated: true } }), 'body.checkId', 'oneOf');
    expectFieldError(await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: c.id, groupId: g.id } }), 'body.checkId', 'oneOf');
    expectFieldError(await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { body: { checkId: randomUUID() } }), 'body.checkId', 'exists');
    expect((await svc.call('PUT', '/v1/alert-channels/999999/subscriptions', { body: { checkId: c.id } })).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's channels and cannot subscribe its checks", async () => {
    const { body: ch } = await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'a@x.test' } } });
    const other = await createOtherTenant(svc);
    const as = { key: other.key };
    expect((await svc.call('GET', `/v1/alert-channels/${ch.id}`, as)).status).toBe(404);
    expect((await svc.call('PUT', `/v1/alert-channels/${ch.id}`, { ...as, body: { type: 'EMAIL', config: { address: 'z@x.test' } } })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/alert-channels/${ch.id}`, as)).status).toBe(404);
    expect((await svc.call('GET', '/v1/alert-channels', as)).body).toEqual([]);
    const { body: theirCheck } = await svc.call('POST', '/v1/checks/browser', { ...as, body: { name: 'x', script: null } });
    expect((await svc.call('PUT', `/v1/alert-channels/${ch.id}/subscriptions`, { ...as, body: { checkId: theirCheck.id } })).status).toBe(404);
    const { body: theirChannel } = await svc.call('POST', '/v1/alert-channels', { ...as, body: { type: 'EMAIL', config: { address: 't@x.test' } } });
    const { body: mine } = await svc.call('POST', '/v1/checks/browser', { body: { name: 'x', script: null } });
    expectFieldError(
      await svc.call('PUT', `/v1/alert-channels/${theirChannel.id}/subscriptions`, { ...as, body: { checkId: mine.id } }),
      'body.checkId',
      'exists',
    );
  });

  it('sends a test message through a channel and says what the far end answered, recording nothing', async () => {
    const { startHttpReceiver } = await import('../../test/support/receivers.js');
    const receiver = await startHttpReceiver();
    try {
      const hook = await svc.call('POST', '/v1/alert-channels', {
        body: { type: 'WEBHOOK', config: { name: 'test me', url: `${receiver.url}/hook`, method: 'POST' } },
      });
      const before = await svc.deps.sql`select count(*)::int as n from alert_notifications`;
      const ok = await svc.call('POST', `/v1/alert-channels/${hook.body.id}/test`);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ ok: true, detail: expect.stringContaining('200') });
      expect(receiver.to('/hook')).toHaveLength(1);
      expect(receiver.to('/hook')[0]!.headers['x-monitoring-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      receiver.failNext('/hook', 1);
      const failed = await svc.call('POST', `/v1/alert-channels/${hook.body.id}/test`);
      expect(failed.body).toMatchObject({ ok: false, detail: expect.stringMatching(/500/) });
      expect(await svc.deps.sql`select count(*)::int as n from alert_notifications`).toEqual(before);
      const other = await createOtherTenant(svc);
      expect((await svc.call('POST', `/v1/alert-channels/${hook.body.id}/test`, { key: other.key })).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });
});

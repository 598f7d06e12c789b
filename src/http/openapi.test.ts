import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createApp } from '../app.js';

describe('OpenAPI document', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('is a valid OpenAPI 3.1 document', async () => {
    const res = await svc.call('GET', '/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists exactly the routes the router serves', async () => {
    const { router, principals, checkTypes } = createApp(svc.deps);
    principals.stop();
    checkTypes.stop();
    const served = new Set<string>();
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        served.add(`${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    const doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...documented].sort()).toEqual([...served].sort());
    expect(served.size).toBeGreaterThan(4);
  });

  it('describes bearer auth, the x-service-account header and error responses', async () => {
    const doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const op = doc.paths['/v1/account'].get;
    expect(op.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
    expect(op['x-roles']).toEqual(['OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY']);
    expect(doc.paths['/v1/api-keys'].post['x-roles']).toEqual(['OWNER', 'ADMIN']);
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'monitoring_session' });
    expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/ServiceAccount' });
    expect(doc.components.parameters.ServiceAccount).toMatchObject({ name: 'x-service-account', in: 'header' });
    for (const status of ['401', '403', '429', '500']) {
      expect(op.responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(doc.paths['/health'].get.security).toEqual([]);
  });

  it('still serves /swagger.json, marked deprecated', async () => {
    const res = await svc.call('GET', '/swagger.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.headers.get('link')).toContain('/openapi.json');
    expect(res.body.openapi).toBe('3.1.0');
  });

  it('makes a field with a default optional in requests and required in responses', async () => {
    const doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
    const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
    const reply = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema;
    const variable = body('/v1/variables', 'post');
    expect(variable.required).toEqual(['key', 'value']);
    expect(variable.properties.locked.default).toBe(false);
    expect(reply('/v1/variables', 'post', '201').required).toEqual(expect.arrayContaining(['locked', 'secret']));
    const dashboard = body('/v1/dashboards', 'post');
    expect(dashboard.required).toEqual(['header']);
    expect(reply('/v1/dashboards', 'post', '201').required).toEqual(expect.arrayContaining(['isPrivate', 'showP95', 'width']));
    expect(body('/v1/checks/browser', 'post').required.sort()).toEqual(['name', 'script']);
    const list = doc.paths['/v1/checks'].get.parameters;
    expect(list.find((p: { name: string }) => p.name === 'limit')).toMatchObject({ required: false, schema: { default: 10 } });
    expect(list.find((p: { name: string }) => p.name === 'page')).toMatchObject({ required: false });
    const report = doc.paths['/v1/analytics/icmp/{id}'].get.parameters;
    expect(report.find((p: { name: string }) => p.name === 'quickRange')).toMatchObject({ required: false });
    expect(report.find((p: { name: string }) => p.name === 'metrics')).toMatchObject({ required: true });
    expect(doc.paths['/v1/checks/api'].post.parameters.find((p: { name: string }) => p.name === 'autoAssignAlerts').required).toBe(false);
  });

  it('states the rules the service enforces', async () => {
    const doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
    const from = doc.paths['/v1/analytics/icmp/{id}'].get.parameters.find((p: { name: string }) => p.name === 'from');
    expect(new RegExp(from.schema.pattern).test('1767225600')).toBe(true);
    expect(new RegExp(from.schema.pattern).test('2026-01-01T00:00:00Z')).toBe(true);
    expect(new RegExp(from.schema.pattern).test('yesterday')).toBe(false);
    const channel = doc.paths['/v1/alert-channels'].post.requestBody.content['application/json'].schema;
    expect(channel.discriminator).toEqual({ propertyName: 'type' });
    expect(channel.oneOf.map((b: { properties: { type: { const: string } } }) => b.properties.type.const)).toEqual([
      'EMAIL',
      'WEBHOOK',
      'SLACK',
      'SMS',
      'PAGERDUTY',
      'OPSGENIE',
    ]);
    expect(channel.oneOf[0].properties.config.required).toEqual(['address']);
    const subscription = doc.paths['/v1/alert-channels/{id}/subscriptions'].put.requestBody.content['application/json'].schema;
    expect(subscription.oneOf).toEqual([
      { required: ['checkId'], properties: { checkId: { type: 'string' } } },
      { required: ['groupId'], properties: { groupId: { type: 'integer' } } },
    ]);
    expect(doc.paths['/v1/variables/{key}'].put.description).toContain('must equal the key in the path');
  });
});

import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { startTestService, type TestService } from '../../test/support/service.js';

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
    const { router } = createApp(svc.deps);
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
    expect(op.security).toEqual([{ bearerAuth: [] }]);
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
});

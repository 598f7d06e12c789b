import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';

const PROTO = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/support/otlp/trace.proto');
const METRICS_TOKEN = 'metrics-token-for-traces-test';

interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number };
}

/**
 * Trace context (docs/traces.md): every request an HTTP check makes carries a new W3C `traceparent` (and the
 * synthetic marker in `tracestate`), the stored result keeps its trace id and links it, and each landed run goes out
 * as an OpenTelemetry span under that trace, decoded here by a receiver on 127.0.0.1 with the OTLP definitions.
 */
describe('trace context and run spans', { timeout: 120_000 }, () => {
  let svc: TestService;
  let target: Server;
  let receiver: Server;
  let targetUrl: string;
  const seen: IncomingHttpHeaders[] = [];
  const spans: DecodedSpan[] = [];
  const exportHeaders: IncomingHttpHeaders[] = [];
  let receiverDown = false;

  beforeAll(async () => {
    const root = await protobuf.load(PROTO);
    const Request = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');
    target = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (receiverDown) return void res.writeHead(503).end();
        exportHeaders.push(req.headers);
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const decoded = Request.toObject(Request.decode(body), { longs: String, bytes: String, enums: Number }) as {
          resourceSpans: { scopeSpans: { spans: (Omit<DecodedSpan, 'attributes'> & { attributes: { key: string; value: Record<string, unknown> }[] })[] }[] }[];
        };
        const hex = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('hex');
        for (const rs of decoded.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                ...s,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: hex(s.parentSpanId),
                attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value ?? {})[0]])),
                status: { code: s.status?.code ?? 0 },
              });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await Promise.all([new Promise<void>((r) => target.listen(0, '127.0.0.1', r)), new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))]);
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/orders`;
    svc = await startTestService({
      RUNNER: 'on',
      RUNNER_LOCATIONS: 'eu-west-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otlp-secret',
      TRACE_LINK_TEMPLATE: 'http://127.0.0.1:16686/trace/{traceId}',
      METRICS_TOKEN,
    });
  }, 90_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([new Promise((r) => target?.close(r)), new Promise((r) => receiver?.close(r))]);
  });

  const runNow = async (checkId: string) => {
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [checkId] } } });
    expect(trigger.status, trigger.text).toBe(201);
    const sessionId = trigger.body.sessions[0].checkSessionId as string;
    const done = await waitFor(
      () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
      (r) => r.status !== 408,
      60_000,
    );
    const resultId = done.body.results[0].checkResultId as string;
    return (
      await waitFor(
        () => svc.call('GET', `/v1/check-results/${checkId}/${resultId}`),
        (r) => r.status === 200,
      )
    ).body;
  };

  it('sends a new traceparent with every run, keeps its trace id on the result with a link, and exports the run as a span under it', async () => {
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'Orders', locations: ['eu-west-1'], request: { url: targetUrl } },
    });
    expect(check.status, check.text).toBe(201);
    const first = await runNow(check.body.id);
    const second = await runNow(check.body.id);
    const [a, b] = seen.slice(-2);
    const parsed = (h: IncomingHttpHeaders) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(h.traceparent));
    expect(parsed(a!), String(a!.traceparent)).not.toBeNull();
    expect(a!.tracestate).toBe('checkly=true');
    // A new trace per run; the result keeps the one its request carried, and links it.
    expect(parsed(a!)![1]).not.toBe(parsed(b!)![1]);
    expect(first.traceId).toBe(parsed(a!)![1]);
    expect(second.traceId).toBe(parsed(b!)![1]);
    expect(first.traceUrl).toBe(`http://127.0.0.1:16686/trace/${first.traceId}`);

    // The run's span: under the trace its request carried, with the parent id it sent as its own id, phases below it.
    const runSpan = (
      await waitFor(
        async () => spans.filter((s) => s.traceId === first.traceId && s.name === 'API check run'),
        (found) => found.length === 1,
      )
    )[0]!;
    expect(runSpan.spanId).toBe(parsed(a!)![2]);
    expect(runSpan.kind).toBe(3);
    expect(runSpan.attributes).toMatchObject({
      'check.id': check.body.id,
      'check.type': 'API',
      'check.location': 'eu-west-1',
      'check.result': 'passed',
      'check.result_id': first.id,
      'http.response.status_code': '200',
      'check.synthetic': true,
    });
    expect(runSpan.status.code).toBe(1);
    const phases = spans.filter((s) => s.traceId === first.traceId && s.parentSpanId === runSpan.spanId).map((s) => s.name);
    expect(phases).toContain('firstByte');
    expect(exportHeaders[0]!.authorization).toBe('Bearer otlp-secret');
  });

  it('keeps the trace a check sends itself', async () => {
    const own = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'Own trace', locations: ['eu-west-1'], request: { url: targetUrl, headers: [{ key: 'traceparent', value: own }] } },
    });
    expect(check.status, check.text).toBe(201);
    const result = await runNow(check.body.id);
    expect(seen.at(-1)!.traceparent).toBe(own);
    expect(result.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it("traces the service's own requests, continuing a caller's trace, named by route, never by raw path", async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'Traced request', request: { url: targetUrl } } });
    const res = await svc.call('GET', `/v1/checks/${check.body.id}`, { headers: { traceparent: parent } });
    expect(res.status).toBe(200);
    const span = (
      await waitFor(
        async () => spans.filter((s) => s.traceId === '0af7651916cd43dd8448eb211c80319c'),
        (found) => found.length === 1,
      )
    )[0]!;
    expect(span).toMatchObject({ name: 'GET /v1/checks/:id', parentSpanId: 'b7ad6b7169203331', kind: 2 });
    expect(span.attributes).toMatchObject({ 'http.route': '/v1/checks/:id', 'http.response.status_code': '200', 'http.request.method': 'GET' });
    expect(JSON.stringify(span)).not.toContain(check.body.id);
  });

  it('counts the spans it could not export on /metrics, and the runs go on', async () => {
    receiverDown = true;
    try {
      const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
        body: { name: 'While down', locations: ['eu-west-1'], request: { url: targetUrl } },
      });
      const result = await runNow(check.body.id);
      expect(result.hasFailures).toBe(false);
      const failed = async () => {
        const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
        return Number(/otel_run_spans_total\{outcome="failed"\} (\d+)/.exec(text)?.[1] ?? 0);
      };
      expect(await waitFor(failed, (n) => n >= 1, 30_000)).toBeGreaterThanOrEqual(1);
    } finally {
      receiverDown = false;
    }
  });
});

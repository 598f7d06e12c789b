import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { GrpcRequest, StoredRequest } from '../../checks/index.js';
import { targetHost } from '../../model/checks.js';
import { evaluate, jsonPathValues, regexCapture } from '../assertions.js';
import { type CheckRunner, isNetworkError, judge, limitsOf, messageOf, targetFailure } from './common.js';

type GrpcRequestDef = StoredRequest<typeof GrpcRequest>;

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** The largest protoContent a run parses (the check's schema refuses larger ones at create). */
export const PROTO_LIMIT_CHARS = 262_144;
const configError = (message: string) => Object.assign(new Error(message), { code: 'CONFIG' });

/**
 * A check's proto, parsed from its text: never written to a file and never loaded with its imports followed, so
 * it reads nothing of the runner's files. An import may name only a definition protobuf.js bundles
 * (google/protobuf/any, duration, empty, field_mask, struct, timestamp, wrappers); any other is refused naming it,
 * and no text but the proto's own ever reaches an error.
 */
export function protoDefinition(content: string): protoLoader.PackageDefinition {
  if (content.length > PROTO_LIMIT_CHARS) throw configError(`protoContent is longer than ${PROTO_LIMIT_CHARS} characters`);
  const root = new protobuf.Root();
  let parsed: protobuf.IParserResult;
  try {
    parsed = protobuf.parse(content, root, { keepCase: true });
  } catch (err) {
    throw configError(`protoContent does not parse: ${messageOf(err)}`);
  }
  for (const name of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
    const bundled = protobuf.common.get(name) as { nested?: Record<string, protobuf.AnyNestedObject> } | null;
    if (!bundled?.nested)
      throw configError(
        `protoContent imports "${name.slice(0, 200)}": only google/protobuf/{any,duration,empty,field_mask,struct,timestamp,wrappers}.proto can be imported; put the other definitions in the proto itself`,
      );
    root.addJSON(bundled.nested);
  }
  try {
    root.resolveAll();
    return protoLoader.fromJSON(root.toJSON(), { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  } catch (err) {
    throw configError(`protoContent does not resolve: ${messageOf(err)}`);
  }
}
const HEALTH_LABELS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** grpc.health.v1.HealthCheckRequest {service}: field 1, a string. */
function encodeHealthRequest(service: string): Buffer {
  const bytes = Buffer.from(service, 'utf8');
  const len: number[] = [];
  let n = bytes.length;
  do {
    len.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n);
  return bytes.length ? Buffer.concat([Buffer.from([0x0a, ...len]), bytes]) : Buffer.alloc(0);
}

/** grpc.health.v1.HealthCheckResponse {status}: field 1, an enum varint (absent: 0, UNKNOWN). */
function decodeHealthResponse(buf: Buffer): { status: number } {
  for (let i = 0; i < buf.length; ) {
    const tag = buf[i++];
    if (tag === 0x08) {
      let value = 0;
      let shift = 0;
      while (i < buf.length) {
        const b = buf[i++];
        value |= (b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
      }
      return { status: value };
    }
    break;
  }
  return { status: 0 };
}

/** gRPC: the standard health check, or a unary method call from the check's proto, over the address the policy allows. */
export const runGrpc: CheckRunner = async (ctx) => {
  const def = (ctx.check.data.request ?? {}) as GrpcRequestDef;
  const cfg: Partial<NonNullable<GrpcRequestDef['grpcConfig']>> = def.grpcConfig ?? {};
  const limits = limitsOf(ctx.check.data, { degraded: 3000, max: 10_000 });
  const host = targetHost(def.url);
  const port = Number(def.port ?? 443);
  const mode = cfg.mode ?? 'BEHAVIOR';
  const useTls = cfg.tls !== false;
  const startedAt = Date.now();
  const request = { host, port, grpcMode: mode, grpcMethod: cfg.method ?? null, service: cfg.service ?? null, tls: useTls };
  const timeoutMs = Math.min(180_000, Math.max(1000, def.timeout ? def.timeout * 1000 : limits.max + 250));
  const t0 = performance.now();
  let client: grpc.Client | undefined;
  try {
    const [target] = await ctx.policy.resolve(host, port, def.ipFamily === 'IPv6' ? 6 : def.ipFamily === 'IPv4' ? 4 : 0);
    const dns = round(performance.now() - t0);
    const address = target.family === 6 ? `[${target.address}]:${port}` : `${target.address}:${port}`;
    const credentials = useTls
      ? grpc.credentials.createSsl(null, null, null, def.skipSSL ? ({ checkServerIdentity: () => undefined, rejectUnauthorized: false } as never) : undefined)
      : grpc.credentials.createInsecure();
    const options = { 'grpc.ssl_target_name_override': host, 'grpc.default_authority': `${host}:${port}`, 'grpc.dns_min_time_between_resolutions_ms': 0 };
    const metadata = new grpc.Metadata();
    for (const m of cfg.metadata ?? []) metadata.add(m.key, m.value);
    const deadline = Date.now() + timeoutMs;
    let responseMessage: unknown = null;
    let healthStatus: number | null = null;
    const responseMetadata: { key: string; value: string }[] = [];
    const call = <T>(invoke: (done: (err: grpc.ServiceError | null, value?: T) => void) => grpc.ClientUnaryCall) =>
      new Promise<{ err: grpc.ServiceError | null; value?: T }>((resolve) => {
        const c = invoke((err, value) => resolve({ err, value }));
        c.on('metadata', (md) => {
          for (const [key, value] of Object.entries(md.getMap())) responseMetadata.push({ key, value: String(value) });
        });
      });
    let outcome: { err: grpc.ServiceError | null; value?: unknown };
    if (mode === 'HEALTH') {
      client = new grpc.Client(address, credentials, options);
      const c = client;
      outcome = await call<{ status: number }>((done) =>
        c.makeUnaryRequest('/grpc.health.v1.Health/Check', encodeHealthRequest, decodeHealthResponse, cfg.service ?? '', metadata, { deadline }, done),
      );
      healthStatus = (outcome.value as { status: number } | undefined)?.status ?? null;
      responseMessage = healthStatus === null ? null : { status: HEALTH_LABELS[healthStatus] ?? healthStatus };
    } else {
      if (!cfg.protoContent)
        throw Object.assign(new Error('A method call needs protoContent (server reflection is not supported by this runner)'), { code: 'CONFIG' });
      const [servicePath, methodName] = (cfg.method ?? '').split('/');
      if (!servicePath || !methodName) throw Object.assign(new Error('grpcConfig.method must be package.Service/Method'), { code: 'CONFIG' });
      const loaded = grpc.loadPackageDefinition(protoDefinition(cfg.protoContent));
      const Service = servicePath.split('.').reduce<unknown>((o, part) => (o as Record<string, unknown> | undefined)?.[part], loaded) as
        | (new (
            address: string,
            creds: grpc.ChannelCredentials,
            options: object,
          ) => grpc.Client)
        | undefined;
      if (typeof Service !== 'function') throw Object.assign(new Error(`${servicePath} is not a service of the proto`), { code: 'CONFIG' });
      client = new Service(address, credentials, options);
      const fn = (client as unknown as Record<string, unknown>)[methodName] as ((...args: unknown[]) => grpc.ClientUnaryCall) | undefined;
      if (typeof fn !== 'function') throw Object.assign(new Error(`${methodName} is not a method of ${servicePath}`), { code: 'CONFIG' });
      const message = cfg.message ? (JSON.parse(cfg.message) as object) : {};
      outcome = await call((done) => fn.call(client, message, metadata, { deadline }, done));
      responseMessage = outcome.value ?? null;
    }
    const total = round(performance.now() - t0);
    const grpcStatusCode = outcome.err ? outcome.err.code : grpc.status.OK;
    const grpcStatusMessage = outcome.err ? outcome.err.details : 'OK';
    const response = {
      grpcMode: mode,
      host,
      resolvedIp: target.address,
      port,
      grpcMethod: cfg.method ?? null,
      responseMessage: responseMessage === null ? null : JSON.stringify(responseMessage),
      grpcStatusCode,
      grpcStatusMessage,
      healthStatus,
      healthStatusLabel: healthStatus === null ? null : (HEALTH_LABELS[healthStatus] ?? String(healthStatus)),
      metadata: responseMetadata,
      timingPhases: { dns, total },
    };
    const assertions = evaluate(def.assertions ?? [], (a) => {
      switch (a.source) {
        case 'RESPONSE_TIME':
          return [total];
        case 'GRPC_STATUS_CODE':
          return [grpcStatusCode];
        case 'GRPC_HEALTHCHECK_STATUS':
          return [healthStatus];
        case 'GRPC_RESPONSE':
          return jsonPathValues(responseMessage, a.property ?? '$');
        case 'TEXT_BODY':
          return [a.property ? regexCapture(response.responseMessage ?? '', a.property) : response.responseMessage];
        case 'GRPC_METADATA':
          return [responseMetadata.find((m) => m.key.toLowerCase() === (a.property ?? '').toLowerCase())?.value];
        default:
          throw new Error(`${a.source} is not a source of gRPC checks`);
      }
    });
    const explicitCode = (def.assertions ?? []).some((a) => a.source === 'GRPC_STATUS_CODE' || a.source === 'GRPC_HEALTHCHECK_STATUS');
    const failedAssertion = assertions.find((a) => a.error);
    const { overMax, degraded } = judge(total, limits);
    const problems = [
      ...(!explicitCode && grpcStatusCode !== grpc.status.OK ? [`gRPC status ${grpcStatusCode}: ${grpcStatusMessage}`] : []),
      ...(!explicitCode && mode === 'HEALTH' && grpcStatusCode === grpc.status.OK && healthStatus !== 1
        ? [`Health is ${response.healthStatusLabel}, not SERVING`]
        : []),
      ...(overMax ? [`Over maxResponseTime (${total} ms > ${limits.max} ms)`] : []),
      ...(failedAssertion?.error ? [failedAssertion.error] : []),
    ];
    const hasFailures = problems.length > 0;
    const unreachable = grpcStatusCode === grpc.status.UNAVAILABLE || grpcStatusCode === grpc.status.DEADLINE_EXCEEDED;
    return {
      startedAt,
      stoppedAt: Date.now(),
      hasFailures,
      hasErrors: false,
      isDegraded: !hasFailures && degraded,
      metrics: { responseTime: total, grpcStatusCode, timings: { dns, total } },
      detail: { grpcCheckResult: { grpcStatusCode, healthStatus, timingPhases: { dns, total }, requestError: null, request, assertions, response } },
      networkError: unreachable,
      error: problems[0],
    };
  } catch (err) {
    const why = messageOf(err);
    return targetFailure(startedAt, { grpcCheckResult: { requestError: why, request, assertions: [], response: null } }, why, isNetworkError(err));
  } finally {
    client?.close();
  }
};

import type { Socket } from 'node:net';
import { checkServerIdentity, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import type { StoredRequest, TcpRequest } from '../../checks/index.js';
import { targetHost } from '../../model/checks.js';
import { connectThrough } from '../../platform/outbound.js';
import { type Assertion, evaluate, jsonPathValues, regexCapture } from '../assertions.js';
import { type CheckRunner, isNetworkError, judge, limitsOf, messageOf, type RunOutcome, targetFailure } from './common.js';

/** The most a TCP check reads of what the server sends. */
export const TCP_READ_BYTES = 64 * 1024;
/** After the first bytes arrive, the answer is taken as whole once the server is quiet this long. */
const TCP_QUIET_MS = 250;

const round = (ms: number) => Math.round(ms * 1000) / 1000;

type TcpRequestDef = StoredRequest<typeof TcpRequest>;

/** Reads what the server sends: until it closes, goes quiet after answering, or the read window ends. */
function readAnswer(socket: Socket, windowMs: number): Promise<{ data: string; firstByteAt?: number; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let firstByteAt: number | undefined;
    let quiet: NodeJS.Timeout | undefined;
    const done = (closed: boolean) => {
      clearTimeout(window);
      clearTimeout(quiet);
      socket.removeAllListeners('data');
      resolve({ data: Buffer.concat(chunks).toString('utf8'), firstByteAt, closed });
    };
    const window = setTimeout(() => done(false), windowMs);
    socket.on('data', (chunk: Buffer) => {
      firstByteAt ??= performance.now();
      if (size < TCP_READ_BYTES) chunks.push(chunk.subarray(0, TCP_READ_BYTES - size));
      size += chunk.length;
      clearTimeout(quiet);
      quiet = setTimeout(() => done(false), TCP_QUIET_MS);
      if (size >= TCP_READ_BYTES) done(false);
    });
    socket.once('end', () => done(true));
    socket.once('close', () => done(true));
    socket.once('error', () => done(true));
  });
}

/** TCP: connect (through the outbound policy), send `data` if any, read the answer, assert on it. */
export const runTcp: CheckRunner = async (ctx) => {
  const def = (ctx.check.data.request ?? {}) as TcpRequestDef;
  const limits = limitsOf(ctx.check.data, { degraded: 3000, max: 5000 });
  const host = def.hostname ?? targetHost(def.url);
  const data = def.data ?? '';
  const startedAt = Date.now();
  const t0 = performance.now();
  const request = { hostname: host, port: def.port, data, ipFamily: def.ipFamily ?? 'IPv4' };
  const wantsAnswer = Boolean(data) || (def.assertions ?? []).some((a) => a.source === 'RESPONSE_DATA');
  try {
    const { socket, timings, address } = await connectThrough(ctx.policy, host, def.port ?? 0, {
      family: def.ipFamily === 'IPv6' ? 6 : def.ipFamily === 'IPv4' ? 4 : 0,
      timeoutMs: limits.max + 250,
    });
    const tConnected = performance.now();
    if (data) socket.write(data);
    const answer = wantsAnswer ? await readAnswer(socket, Math.max(100, limits.max - (tConnected - t0))) : { data: '', firstByteAt: undefined, closed: false };
    socket.destroy();
    const tEnd = performance.now();
    const total = round(tEnd - t0);
    const timingPhases = { dns: timings.dns, connection: timings.tcp, data: round(tEnd - tConnected), total };
    const assertions = evaluate(def.assertions ?? [], (a) => {
      if (a.source === 'RESPONSE_DATA') return [a.property ? regexCapture(answer.data, a.property) : answer.data];
      if (a.source === 'RESPONSE_TIME') return [total];
      throw new Error(`${a.source} is not a source of TCP checks`);
    });
    const failedAssertion = assertions.find((a) => a.error);
    const { overMax, degraded } = judge(total, limits);
    const hasFailures = Boolean(failedAssertion) || overMax;
    return {
      startedAt,
      stoppedAt: Date.now(),
      hasFailures,
      hasErrors: false,
      isDegraded: !hasFailures && degraded,
      metrics: { responseTime: timings.tcp, timings: timingPhases },
      detail: { tcpCheckResult: { request, response: { data: answer.data, resolvedIp: address }, timingPhases, assertions, requestError: null } },
      error: failedAssertion?.error ?? (overMax ? `Over maxResponseTime (${total} ms > ${limits.max} ms)` : undefined),
    };
  } catch (err) {
    const e = err as { code?: string; syscall?: string; address?: string; port?: number };
    const why = messageOf(err);
    const response = { error: { code: e.code ?? 'ERROR', syscall: e.syscall, address: e.address, port: e.port } };
    return targetFailure(
      startedAt,
      { tcpCheckResult: { request, response, assertions: [], requestError: why } },
      why,
      isNetworkError(err) || e.code === 'ETIMEDOUT',
    );
  }
};

interface SslConfig {
  hostname: string;
  port?: number;
  serverName?: string | null;
  ipFamily?: 'IPv4' | 'IPv6' | null;
  skipChainValidation?: boolean;
  handshakeTimeoutMs?: number;
  alertDaysBeforeExpiry?: number;
}

const cnOf = (name: Record<string, unknown> | undefined) =>
  name ? (Array.isArray(name.CN) ? String(name.CN[0]) : (name.CN as string | undefined)) : undefined;

/** A certificate as results and assertions show it. */
function describeCertificate(c: DetailedPeerCertificate, now: number) {
  const sans = (c.subjectaltname ?? '')
    .split(/,\s*/)
    .filter(Boolean)
    .map((s) => s.replace(/^(DNS|IP Address):/, ''));
  const validTo = Date.parse(c.valid_to);
  return {
    subjectCN: cnOf(c.subject as unknown as Record<string, unknown>) ?? null,
    issuerCN: cnOf(c.issuer as unknown as Record<string, unknown>) ?? null,
    serialNumber: c.serialNumber,
    fingerprintSha256: c.fingerprint256,
    validFrom: new Date(Date.parse(c.valid_from)).toISOString(),
    validTo: new Date(validTo).toISOString(),
    daysUntilExpiry: Math.floor((validTo - now) / 86_400_000),
    sans,
    keySizeBits: c.bits ?? null,
    keyAlgorithm: c.asn1Curve ? 'EC' : c.modulus ? 'RSA' : null,
    selfSigned: c.issuerCertificate === c || JSON.stringify(c.subject) === JSON.stringify(c.issuer),
    isCA: Boolean(c.ca),
  };
}

/** SSL: a TLS handshake (through the outbound policy), the certificate's expiry, chain and name, assertions. */
export const runSsl: CheckRunner = async (ctx) => {
  const req = (ctx.check.data.request ?? {}) as { sslConfig?: SslConfig; assertions?: Assertion[] };
  const cfg = req.sslConfig ?? (ctx.check.data.sslConfig as SslConfig | undefined) ?? { hostname: '' };
  const limits = limitsOf(ctx.check.data, { degraded: 3000, max: 10_000 });
  const port = cfg.port ?? 443;
  const hostname = targetHost(cfg.hostname);
  const servername = cfg.serverName || hostname;
  const startedAt = Date.now();
  const request = { hostname, port, serverName: servername, ipFamily: cfg.ipFamily ?? 'IPv4' };
  let socket: TLSSocket | undefined;
  try {
    const connected = await connectThrough(ctx.policy, hostname, port, {
      tls: { servername, rejectUnauthorized: false },
      family: cfg.ipFamily === 'IPv6' ? 6 : cfg.ipFamily === 'IPv4' ? 4 : 0,
      timeoutMs: Math.min(cfg.handshakeTimeoutMs ?? 10_000, 30_000),
    });
    socket = connected.socket as TLSSocket;
    const now = Date.now();
    const peer = socket.getPeerCertificate(true);
    const certificate = describeCertificate(peer, now);
    const chain: ReturnType<typeof describeCertificate>[] = [];
    for (let c: DetailedPeerCertificate | undefined = peer.issuerCertificate; c && chain.length < 8 && c !== c.issuerCertificate; c = c.issuerCertificate)
      chain.push(describeCertificate(c, now));
    const handshakeTimeMs = round(connected.timings.tcp + connected.timings.tls);
    const hostnameVerified = checkServerIdentity(servername, peer) === undefined;
    const chainTrusted = socket.authorized;
    const response = {
      resolvedIp: connected.address,
      protocol: socket.getProtocol(),
      cipherSuite: socket.getCipher()?.name ?? null,
      handshakeTimeMs,
      hostnameVerified,
      chainTrusted,
      chainTrustReason: chainTrusted ? null : String(socket.authorizationError ?? 'untrusted'),
      daysUntilExpiry: certificate.daysUntilExpiry,
      certificate,
      chain,
    };
    const assertions = evaluate(req.assertions ?? [], (a) => {
      switch (a.source) {
        case 'CERTIFICATE':
          return [(certificate as Record<string, unknown>)[a.property ?? '']];
        case 'CONNECTION':
          return [
            { tlsVersion: response.protocol, cipherSuite: response.cipherSuite, resolvedIp: response.resolvedIp, hostnameVerified, chainTrusted }[
              a.property ?? ''
            ],
          ];
        case 'RESPONSE_TIME':
          return [handshakeTimeMs];
        case 'JSON_RESPONSE':
          return jsonPathValues(response, a.property ?? '$');
        case 'TEXT_RESPONSE':
          return [a.property ? regexCapture(JSON.stringify(response), a.property) : JSON.stringify(response)];
        default:
          throw new Error(`${a.source} is not a source of SSL checks`);
      }
    });
    const expired = certificate.daysUntilExpiry < 0;
    const problems = [
      ...(expired ? [`The certificate expired on ${certificate.validTo}`] : []),
      ...(!chainTrusted && !cfg.skipChainValidation ? [`The chain is not trusted: ${response.chainTrustReason}`] : []),
      ...(!hostnameVerified && !cfg.skipChainValidation ? [`The certificate is not for ${servername}`] : []),
      ...assertions.flatMap((a) => (a.error ? [a.error] : [])),
    ];
    const { overMax, degraded } = judge(handshakeTimeMs, limits);
    if (overMax) problems.push(`Over maxResponseTime (${handshakeTimeMs} ms > ${limits.max} ms)`);
    const expiring = certificate.daysUntilExpiry <= (cfg.alertDaysBeforeExpiry ?? 20);
    const hasFailures = problems.length > 0;
    return {
      startedAt,
      stoppedAt: Date.now(),
      hasFailures,
      hasErrors: false,
      isDegraded: !hasFailures && (degraded || expiring),
      metrics: { responseTime: handshakeTimeMs, handshakeTimeMs, daysUntilExpiry: certificate.daysUntilExpiry },
      detail: {
        sslCheckResult: {
          tlsVersion: response.protocol,
          cipherSuite: response.cipherSuite,
          daysUntilExpiry: certificate.daysUntilExpiry,
          handshakeTimeMs,
          chainTrusted,
          hostnameVerified,
          failureCategory: hasFailures ? (expired ? 'EXPIRED' : !chainTrusted ? 'CHAIN' : !hostnameVerified ? 'HOSTNAME' : 'ASSERTION') : null,
          requestError: null,
          request,
          assertions,
          response,
        },
      },
      error: problems[0],
    };
  } catch (err) {
    const why = messageOf(err);
    return targetFailure(
      startedAt,
      { sslCheckResult: { requestError: why, request, assertions: [], failureCategory: 'CONNECTION', response: null } },
      why,
      isNetworkError(err),
    );
  } finally {
    socket?.destroy();
  }
};

/** The outcome type, for the type registry's signature checks. */
export type { RunOutcome };

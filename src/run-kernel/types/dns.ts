import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import dnsPacket, { type Answer, type Packet, type RecordType } from 'dns-packet';
import type { DnsRequest, StoredRequest } from '../../checks/index.js';
import { DEFAULT_NAMESERVER } from '../../model/checks.js';
import { connectThrough } from '../../platform/outbound.js';
import { evaluate, jsonPathValues, regexCapture } from '../assertions.js';
import { type CheckRunner, isNetworkError, judge, limitsOf, messageOf, targetFailure } from './common.js';

/** The resolver a DNS check asks when it names none (the anchor's default). */

type DnsRequestDef = StoredRequest<typeof DnsRequest>;

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** One query over UDP to an already-checked address. */
function queryUdp(address: string, family: 4 | 6, port: number, query: Buffer, timeoutMs: number): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(Object.assign(new Error(`no answer from ${address}:${port} within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
    socket.on('message', (msg) => {
      try {
        const packet = dnsPacket.decode(msg);
        clearTimeout(timer);
        socket.close();
        resolve(packet);
      } catch {
        // not a DNS answer: keep waiting for one
      }
    });
    socket.send(query, port, address);
  });
}

/** One query over TCP (two-byte length prefix), through the outbound policy. */
async function queryTcp(ctx: Parameters<CheckRunner>[0], server: string, port: number, query: Buffer, timeoutMs: number): Promise<Packet> {
  const { socket } = await connectThrough(ctx.policy, server, port, { timeoutMs });
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`no answer from ${server}:${port} within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
        clearTimeout(timer);
        socket.destroy();
        try {
          resolve(dnsPacket.decode(buffer.subarray(2, 2 + buffer.readUInt16BE(0))));
        } catch (err) {
          reject(err);
        }
      }
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(
      dnsPacket.streamEncode({ type: 'query', id: randomInt(65535), flags: dnsPacket.RECURSION_DESIRED, questions: dnsPacket.decode(query).questions }),
    );
  });
}

/** An answer's data as text, the way dig prints it. */
function dataText(a: Answer): string {
  const d = (a as { data?: unknown }).data;
  if (Buffer.isBuffer(d)) return d.toString('utf8');
  if (Array.isArray(d)) return d.map((x) => (Buffer.isBuffer(x) ? `"${x.toString('utf8')}"` : String(x))).join(' ');
  if (d && typeof d === 'object') {
    const o = d as Record<string, unknown>;
    if (a.type === 'MX') return `${o.preference} ${o.exchange}.`;
    if (a.type === 'SOA') return `${o.mname}. ${o.rname}. ${o.serial} ${o.refresh} ${o.retry} ${o.expire} ${o.minimum}`;
    return JSON.stringify(d);
  }
  return ['CNAME', 'NS', 'PTR'].includes(a.type) ? `${String(d)}.` : String(d);
}

/** DNS: one query of the record type to the check's nameserver, over UDP (TCP when asked, or when truncated). */
export const runDns: CheckRunner = async (ctx) => {
  const def = (ctx.check.data.request ?? {}) as DnsRequestDef;
  const limits = limitsOf(ctx.check.data, { degraded: 500, max: 1000 });
  const server = def.nameServer || DEFAULT_NAMESERVER;
  const port = def.port ?? 53;
  const protocol = def.protocol === 'TCP' ? 'TCP' : 'UDP';
  const startedAt = Date.now();
  // The name asked for: `query` (the create route sets it from `hostname` when only that was given).
  const name = def.query ?? def.hostname ?? '';
  const request = { query: name, recordType: def.recordType ?? 'A', nameServer: server, port, protocol };
  const timeoutMs = Math.max(limits.max, 250) + 250;
  const t0 = performance.now();
  try {
    const [target] = await ctx.policy.resolve(server, port);
    const query = dnsPacket.encode({
      type: 'query',
      id: randomInt(65535),
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: (def.recordType ?? 'A') as RecordType, name }],
    });
    let packet =
      protocol === 'TCP' ? await queryTcp(ctx, target.address, port, query, timeoutMs) : await queryUdp(target.address, target.family, port, query, timeoutMs);
    if (protocol === 'UDP' && (packet.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) packet = await queryTcp(ctx, target.address, port, query, timeoutMs);
    const total = round(performance.now() - t0);
    const returnCode = ((packet as { rcode?: string }).rcode ?? 'NOERROR').toUpperCase();
    const answers = (packet.answers ?? []).map((a) => ({ name: `${a.name}.`, type: a.type, TTL: (a as { ttl?: number }).ttl ?? 0, data: dataText(a) }));
    const flags = packet.flags ?? 0;
    const jsonAnswer = {
      Status: returnCode,
      TC: Boolean(flags & dnsPacket.TRUNCATED_RESPONSE),
      RD: Boolean(flags & dnsPacket.RECURSION_DESIRED),
      RA: Boolean(flags & dnsPacket.RECURSION_AVAILABLE),
      AD: Boolean(flags & dnsPacket.AUTHENTIC_DATA),
      CD: Boolean(flags & dnsPacket.CHECKING_DISABLED),
      Question: [{ name: `${def.query}.`, type: def.recordType }],
      Answer: answers,
    };
    const textAnswer = answers.map((a) => `${a.name}\t${a.TTL}\tIN\t${a.type}\t${a.data}`).join('\n');
    const assertions = evaluate(def.assertions ?? [], (a) => {
      switch (a.source) {
        case 'RESPONSE_TIME':
          return [total];
        case 'RESPONSE_CODE':
          return [returnCode];
        case 'TEXT_ANSWER':
          return [a.property ? regexCapture(textAnswer, a.property) : textAnswer];
        case 'JSON_ANSWER':
          return jsonPathValues(jsonAnswer, a.property ?? '$');
        default:
          throw new Error(`${a.source} is not a source of DNS checks`);
      }
    });
    const hasCodeAssertion = (def.assertions ?? []).some((a) => a.source === 'RESPONSE_CODE');
    const failedAssertion = assertions.find((a) => a.error);
    const { overMax, degraded } = judge(total, limits);
    const badCode = !hasCodeAssertion && returnCode !== 'NOERROR';
    const hasFailures = Boolean(failedAssertion) || overMax || badCode;
    return {
      startedAt,
      stoppedAt: Date.now(),
      hasFailures,
      hasErrors: false,
      isDegraded: !hasFailures && degraded,
      metrics: { responseTime: total, timings: { total } },
      detail: {
        dnsCheckResult: {
          request,
          nameServerInfo: { name: server, host: target.address, port },
          response: { returnCode, responseTime: total, answer: textAnswer, jsonAnswer },
          assertions,
          requestError: null,
        },
      },
      error:
        failedAssertion?.error ??
        (badCode ? `The answer's return code is ${returnCode}` : overMax ? `Over maxResponseTime (${total} ms > ${limits.max} ms)` : undefined),
    };
  } catch (err) {
    const why = messageOf(err);
    return targetFailure(startedAt, { dnsCheckResult: { request, response: null, assertions: [], requestError: why } }, why, isNetworkError(err));
  }
};

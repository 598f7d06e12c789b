import { execFile } from 'node:child_process';
import type { IcmpRequest, StoredRequest, TracerouteRequest } from '../../checks/index.js';
import { targetHost } from '../../model/checks.js';
import { evaluate, jsonPathValues } from '../assertions.js';
import { type CheckRunner, judge, limitsOf, messageOf, type RunOutcome, targetFailure } from './common.js';

/**
 * ICMP and traceroute through Debian's `ping` (iputils-ping) and `traceroute`, which the project's set-up
 * installs (scripts/system-packages.sh). They run with no shell and an empty environment, on the address the
 * outbound policy resolved (never a name the tools would look up themselves), and are killed at their limit.
 */

function run(command: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { timeout: timeoutMs, killSignal: 'SIGKILL', env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', LC_ALL: 'C' }, maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : err ? null : 0;
        resolve({ stdout: String(stdout), stderr: String(stderr) || (err && code === null ? messageOf(err) : ''), code });
      },
    );
  });
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

function stats(values: number[]) {
  if (!values.length) return { avg: null, min: null, max: null, stdDev: null };
  const avg = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - avg) ** 2, 0) / values.length;
  return { avg: round(avg), min: round(Math.min(...values)), max: round(Math.max(...values)), stdDev: round(Math.sqrt(variance)) };
}

const failure = (startedAt: number, key: 'icmpCheckResult' | 'tracerouteCheckResult', request: object, why: string, networkError = false): RunOutcome =>
  targetFailure(startedAt, { [key]: { request, requestError: why, assertions: [] } }, why, networkError);

type IcmpRequestDef = StoredRequest<typeof IcmpRequest>;

/** ICMP: `pingCount` echo requests, packet loss and latency judged against the check's thresholds. */
export const runIcmp: CheckRunner = async (ctx) => {
  const def = (ctx.check.data.request ?? {}) as IcmpRequestDef;
  const limits = limitsOf(ctx.check.data, { degraded: 10_000, max: 20_000 });
  const count = Math.min(50, Math.max(1, def.pingCount ?? 10));
  const family = def.ipFamily === 'IPv6' ? 6 : 4;
  const request = { hostname: def.hostname, ipFamily: family === 6 ? 'IPv6' : 'IPv4', pingCount: count };
  const startedAt = Date.now();
  let address: string;
  const t0 = performance.now();
  try {
    [{ address }] = await ctx.policy.resolve(def.hostname ?? '', 0, family);
  } catch (err) {
    return failure(startedAt, 'icmpCheckResult', request, messageOf(err), true);
  }
  const dnsResolutionTime = round(performance.now() - t0);
  const waitSeconds = Math.max(1, Math.ceil(limits.max / 1000));
  const out = await run(
    'ping',
    ['-n', `-${family}`, '-c', String(count), '-i', '0.2', '-W', String(waitSeconds), address],
    (count * 0.2 + waitSeconds) * 1000 + 2000,
  );
  if (out.code === null && !out.stdout) return failure(startedAt, 'icmpCheckResult', request, `ping could not run: ${out.stderr || 'not installed'}`);
  const pingResults = [...out.stdout.matchAll(/icmp_seq=(\d+) ttl=(\d+) time=([\d.]+) ms/g)].map((m) => ({
    sequence: Number(m[1]),
    type: 0,
    code: 0,
    success: true,
    rtt: Number(m[3]),
    ttl: Number(m[2]),
  }));
  const sent = Number(/(\d+) packets transmitted/.exec(out.stdout)?.[1] ?? count);
  const received = pingResults.length;
  const packetLoss = sent ? round((100 * (sent - received)) / sent, 1) : 100;
  const latency = stats(pingResults.map((p) => p.rtt));
  const response = {
    hostname: def.hostname,
    resolvedIp: address,
    ipFamily: request.ipFamily,
    pingCount: count,
    packetsSent: sent,
    packetsReceived: received,
    packetSize: 64,
    packetLoss,
    latency,
    dnsResolutionTime,
    pingResults,
  };
  const assertions = evaluate(def.assertions ?? [], (a) => {
    if (a.source === 'LATENCY') return [(latency as Record<string, number | null>)[a.property || 'avg']];
    if (a.source === 'JSON_RESPONSE') return jsonPathValues(response, a.property ?? '$');
    throw new Error(`${a.source} is not a source of ICMP checks`);
  });
  const maxLoss = typeof ctx.check.data.maxPacketLossThreshold === 'number' ? (ctx.check.data.maxPacketLossThreshold as number) : 20;
  const degradedLoss = typeof ctx.check.data.degradedPacketLossThreshold === 'number' ? (ctx.check.data.degradedPacketLossThreshold as number) : 10;
  const { overMax, degraded } = judge(latency.avg ?? undefined, limits);
  const failedAssertion = assertions.find((a) => a.error);
  const problems = [
    ...(received === 0 ? [`No reply from ${address}`] : []),
    ...(packetLoss > maxLoss ? [`${packetLoss}% packet loss (more than ${maxLoss}%)`] : []),
    ...(overMax ? [`Average latency ${latency.avg} ms over ${limits.max} ms`] : []),
    ...(failedAssertion?.error ? [failedAssertion.error] : []),
  ];
  const hasFailures = problems.length > 0;
  return {
    startedAt,
    stoppedAt: Date.now(),
    hasFailures,
    hasErrors: false,
    isDegraded: !hasFailures && (degraded || packetLoss > degradedLoss),
    metrics: {
      responseTime: latency.avg ?? undefined,
      packetLoss,
      latencyAvg: latency.avg ?? undefined,
      latencyMin: latency.min ?? undefined,
      latencyMax: latency.max ?? undefined,
      latencyStdDev: latency.stdDev ?? undefined,
    },
    detail: { icmpCheckResult: { request, response, assertions, requestError: null } },
    networkError: received === 0,
    error: problems[0],
  };
};

type TracerouteRequestDef = StoredRequest<typeof TracerouteRequest>;

/** Traceroute: the hops to the target (TCP to port 443 by default, as the anchor), judged on the final hop's latency. */
export const runTraceroute: CheckRunner = async (ctx) => {
  const def = (ctx.check.data.request ?? {}) as TracerouteRequestDef;
  const limits = limitsOf(ctx.check.data, { degraded: 3000, max: 5000 });
  const host = targetHost(def.url);
  const protocol = def.protocol ?? 'TCP';
  const port = def.port ?? (protocol === 'TCP' ? 443 : 33434);
  const family = def.ipFamily === 'IPv6' ? 6 : 4;
  const maxHops = Math.min(64, Math.max(1, def.maxHops ?? 30));
  const wait = Math.min(30, Math.max(1, def.timeout ?? 10));
  const request = { hostname: host, protocol, port, ipFamily: family === 6 ? 'IPv6' : 'IPv4', maxHops };
  const startedAt = Date.now();
  let address: string;
  const t0 = performance.now();
  try {
    [{ address }] = await ctx.policy.resolve(host, protocol === 'ICMP' ? 0 : port, family);
  } catch (err) {
    return failure(startedAt, 'tracerouteCheckResult', request, messageOf(err), true);
  }
  const dns = round(performance.now() - t0);
  const mode = protocol === 'TCP' ? ['-T', '-p', String(port)] : protocol === 'UDP' ? ['-U', '-p', String(port)] : ['-I'];
  const out = await run(
    'traceroute',
    ['-n', `-${family}`, ...mode, '-m', String(maxHops), '-w', String(Math.max(1, Math.ceil(wait / 3))), '-q', '3', address],
    (wait + 2) * 1000 * 4,
  );
  if (out.code === null && !out.stdout)
    return failure(startedAt, 'tracerouteCheckResult', request, `traceroute could not run: ${out.stderr || 'not installed'}`);
  const hops = out.stdout
    .split('\n')
    .slice(1)
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => {
      const ip = /(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f:]+:[0-9a-f:]*)/i.exec(m[2])?.[1] ?? null;
      const times = [...m[2].matchAll(/([\d.]+) ms/g)].map((t) => Number(t[1]));
      const lost = (m[2].match(/\*/g) ?? []).length;
      const rtt = stats(times);
      return {
        hop_number: Number(m[1]),
        main_ip: ip,
        main_host: ip,
        loss_percentage: round((100 * lost) / Math.max(1, lost + times.length), 1),
        rtt: { avg_ms: rtt.avg, best_ms: rtt.min, worst_ms: rtt.max },
      };
    });
  const last = hops[hops.length - 1];
  const destinationReached = Boolean(last && last.main_ip === address);
  const finalHopLatency = destinationReached ? last.rtt : null;
  const total = round(performance.now() - t0);
  const packetLoss = last ? last.loss_percentage : 100;
  const response = {
    hostname: host,
    resolvedIp: address,
    totalHops: hops.length,
    destinationReached,
    truncationReason: destinationReached ? 'destinationReached' : hops.length >= maxHops ? 'maxHops' : 'timeout',
    finalHopLatency: finalHopLatency ? { avg: finalHopLatency.avg_ms, min: finalHopLatency.best_ms, max: finalHopLatency.worst_ms } : null,
    hops,
    protocol,
  };
  const assertions = evaluate(def.assertions ?? [], (a) => {
    if (a.source === 'RESPONSE_TIME') {
      if (!destinationReached) throw new Error('The destination was not reached');
      return [(response.finalHopLatency as Record<string, number | null> | null)?.[a.property || 'avg']];
    }
    if (a.source === 'HOP_COUNT') return [hops.length];
    if (a.source === 'PACKET_LOSS') return [packetLoss];
    throw new Error(`${a.source} is not a source of traceroute checks`);
  });
  const avg = finalHopLatency?.avg_ms ?? undefined;
  const { overMax, degraded } = judge(avg, limits);
  const failedAssertion = assertions.find((a) => a.error);
  const problems = [
    ...(!destinationReached ? [`${address} was not reached in ${hops.length} hops`] : []),
    ...(overMax ? [`Final hop latency ${avg} ms over ${limits.max} ms`] : []),
    ...(failedAssertion?.error ? [failedAssertion.error] : []),
  ];
  const hasFailures = problems.length > 0;
  return {
    startedAt,
    stoppedAt: Date.now(),
    hasFailures,
    hasErrors: false,
    isDegraded: !hasFailures && degraded,
    metrics: { responseTime: avg ?? total, hopCount: hops.length, finalHopLatency: avg },
    detail: {
      tracerouteCheckResult: {
        totalHops: hops.length,
        destinationReached,
        finalHopLatency: response.finalHopLatency,
        timingPhases: { dns },
        requestError: null,
        request,
        assertions,
        response,
      },
    },
    error: problems[0],
  };
};

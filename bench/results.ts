import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from './load.js';

type Level = Omit<LoadResult, 'samples'> & { ok: boolean };

export interface ScenarioResult {
  id: string;
  title: string;
  method: string;
  path: string;
  query?: string;
  report: boolean;
  levels: Level[];
  floor?: {
    runs: number;
    sql: string;
    /** The compiled query through the store (chdb call and JSON parse), measured in the service process. */
    storeMs: { p50: number; p95: number; p99: number };
    /** ClickHouse's own elapsed time for the query. */
    engineMs: { p50: number; p95: number; p99: number };
    rowsRead: number;
    httpOverStore: number;
  };
}

export interface IngestResult {
  seconds: number;
  connections: number;
  batchSize: number;
  post: Level;
  acceptedResults: number;
  acceptedResponsesSeen: number;
  acceptedPerSecond: number;
  landedResults: number;
  landedPerSecond: number;
  lagAfterStopSeconds: number;
  maxQueueWaiting: number;
  maxOldestWaitingSeconds: number;
  failedBatches: number;
  lost: number;
  concurrentReport: Level & { id: string };
  ok: boolean;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResults {
  startedAt: string;
  mode: 'quick' | 'full';
  machine: { cpus: number; memoryGiB: number; node: string };
  data: { wide: string; many: string; seeding: { wideRows: number; manyRows: number; seconds: number; rowsPerSecond: number } };
  scenarios: ScenarioResult[];
  ingest: IngestResult;
  service: { peakRssBytes: number };
  durationSeconds: number;
  targets: Target[];
  ok: boolean;
}

const at = (s: ScenarioResult | undefined, connections: number) => s?.levels.find((l) => l.connections === connections);

/** The targets, checked against this run. A failed level (errors, non-2xx) never meets a target. */
export function evaluateTargets(r: BenchResults): Target[] {
  const byId = (id: string) => r.scenarios.find((s) => s.id === id);
  const targets: Target[] = [];
  const s2 = byId('report-30d-hourly-grouped');
  const s2one = at(s2, 1);
  targets.push({
    target: '2. 30-day grouped hourly p95, 1 connection: p50 ≤ 50 ms, HTTP ÷ engine ≤ 1.15',
    measured: `p50 ${s2one?.latencyMs.p50} ms, HTTP ÷ store ${s2?.floor?.httpOverStore}`,
    met: !!s2one?.ok && s2one.latencyMs.p50 <= 50 && (s2?.floor?.httpOverStore ?? Infinity) <= 1.15,
  });
  const s1one = at(byId('report-24h-raw'), 1);
  targets.push({ target: '1. 24-hour raw page: p50 ≤ 5 ms', measured: `p50 ${s1one?.latencyMs.p50} ms`, met: !!s1one?.ok && s1one.latencyMs.p50 <= 5 });
  const s4one = at(byId('summary-100-last24Hours'), 1);
  targets.push({ target: '4. summary of 100 checks, last24Hours: p50 ≤ 15 ms', measured: `p50 ${s4one?.latencyMs.p50} ms`, met: !!s4one?.ok && s4one.latencyMs.p50 <= 15 });
  for (const s of r.scenarios.filter((x) => x.report)) {
    const one = at(s, 1);
    const top = at(s, 32);
    const ratio = one && top ? top.requestsPerSecond / one.requestsPerSecond : 0;
    targets.push({
      target: `${s.title.split(',')[0]}, 32 connections: no errors, throughput ≥ 1.6 × 1 connection`,
      measured: `${top?.requestsPerSecond} vs ${one?.requestsPerSecond} req/s (× ${ratio.toFixed(2)}), errors ${top ? top.errors + top.non2xx + top.timeouts : '?'}`,
      met: !!top?.ok && !!one?.ok && ratio >= 1.6,
    });
  }
  const i = r.ingest;
  targets.push({
    target: '5. ingest: ≥ 30,000 results/s landed, lag back to 0 within 5 s, nothing lost',
    measured: `${i.landedPerSecond}/s landed (${i.acceptedPerSecond}/s accepted), lag ${i.lagAfterStopSeconds} s, lost ${i.lost}`,
    met: i.ok && i.landedPerSecond >= 30_000 && i.lagAfterStopSeconds <= 5 && i.lost === 0,
  });
  const get = byId('crud-get-check');
  const best = get?.levels.filter((l) => l.ok).sort((a, b) => b.requestsPerSecond - a.requestsPerSecond)[0];
  targets.push({
    target: '6. GET /v1/checks/{id}: ≥ 3,000 req/s, p99 ≤ 20 ms',
    measured: best ? `${best.requestsPerSecond} req/s at ${best.connections} connections, p99 ${best.latencyMs.p99} ms` : 'failed',
    met: !!best && best.requestsPerSecond >= 3000 && best.latencyMs.p99 <= 20,
  });
  const gib = r.service.peakRssBytes / 2 ** 30;
  targets.push({ target: 'service RSS under all of it ≤ 1.5 GiB', measured: `peak ${gib.toFixed(2)} GiB`, met: gib <= 1.5 });
  return targets;
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

export function renderTable(r: BenchResults): string {
  const lines = [
    `Run of ${r.startedAt} (${r.mode}, ${r.durationSeconds} s in all; ${r.machine.cpus} CPUs, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}).`,
    `Data: wide = ${r.data.wide}; many = ${r.data.many}; ${r.data.seeding.wideRows + r.data.seeding.manyRows} rows seeded in ${r.data.seeding.seconds} s (${r.data.seeding.rowsPerSecond} rows/s).`,
    '',
    '| scenario | conns | req/s | p50 ms | p95 ms | p99 ms | store p50 ms | engine p50 ms | HTTP ÷ store | rows read |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of r.scenarios) {
    for (const l of s.levels) {
      const first = l === s.levels[0];
      const floor = first && s.floor ? [s.floor.storeMs.p50, s.floor.engineMs.p50, s.floor.httpOverStore, s.floor.rowsRead] : ['', '', '', ''];
      const numbers = l.ok
        ? [l.requestsPerSecond, l.latencyMs.p50, l.latencyMs.p95, l.latencyMs.p99]
        : [`FAILED: ${l.errors} errors, ${l.timeouts} timeouts, ${l.non2xx} non-2xx`, '', '', ''];
      lines.push(`| ${first ? s.title : ''} | ${l.connections} | ${numbers.join(' | ')} | ${floor.join(' | ')} |`);
    }
  }
  const i = r.ingest;
  lines.push(
    '',
    `Ingest (${i.connections} connections posting ${i.batchSize}-result batches for ${i.seconds} s while scenario 2 ran at 1 connection): ` +
      `${i.acceptedPerSecond} results/s accepted, ${i.landedPerSecond} results/s landed, queue drained ${i.lagAfterStopSeconds} s after the load stopped, ` +
      `max ${i.maxQueueWaiting} batches waiting (oldest ${i.maxOldestWaitingSeconds} s), ${i.lost} lost, ${i.failedBatches} failed batches; ` +
      `POST p50 ${i.post.latencyMs.p50} ms / p99 ${i.post.latencyMs.p99} ms; scenario 2 meanwhile p50 ${i.concurrentReport.latencyMs.p50} ms / p99 ${i.concurrentReport.latencyMs.p99} ms` +
      `${i.ok ? '' : ' — FAILED'}.`,
    '',
    `Peak service RSS: ${(r.service.peakRssBytes / 2 ** 30).toFixed(2)} GiB.`,
    '',
    '| target | measured | met |',
    '|---|---|---|',
    ...r.targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`),
  );
  return lines.join('\n');
}

/** Prints the table; a full run also replaces the generated section of bench/README.md. */
export function writeReadme(r: BenchResults, readme: string, update: boolean): string {
  const table = renderTable(r);
  if (update && existsSync(readme)) {
    const text = readFileSync(readme, 'utf8');
    const from = text.indexOf(START);
    const to = text.indexOf(END);
    if (from >= 0 && to > from) writeFileSync(readme, `${text.slice(0, from + START.length)}\n${table}\n${text.slice(to)}`);
  }
  return table;
}

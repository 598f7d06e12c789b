/**
 * The peer stack a self-hosting user would deploy instead of this service for HTTP probes: Debian's Prometheus 2.42
 * scraping Debian's blackbox_exporter 0.23 (bench/peer-install.sh unpacks both into bench/.peer), every target once
 * a minute, results in Prometheus's own TSDB. `measurePeer` runs both on 127.0.0.1 against the runner bench's
 * target, waits until every target has been probed once, then measures whole minutes: the probes the target saw and
 * the CPU of both processes. The probes' success is read back from Prometheus (`sum(probe_success)`), so the
 * comparison is with a stack that really probed and stored every target.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, ROOT } from './harness.js';

const BIN = path.join(ROOT, 'bench/.peer/usr/bin');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function waitFor(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface PeerResult {
  stack: string;
  targets: number;
  minutes: number;
  probes: number;
  succeeding: number;
  cpuSeconds: { exporter: number; prometheus: number };
  cpuCores: number;
  cpuMsPerProbe: { exporter: number; prometheus: number; total: number };
  peakRssMB: { exporter: number; prometheus: number };
}

const rssMB = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

/** `targets` URLs (`${base}/p/<i>`), each probed once a minute for `minutes` measured minutes; `hits` counts the target's requests. */
export async function measurePeer(base: string, targets: number, minutes: number, hits: () => number): Promise<PeerResult> {
  const install = spawnSync('bash', [path.join(ROOT, 'bench/peer-install.sh')], { stdio: 'inherit' });
  if (install.status !== 0) throw new Error('bench/peer-install.sh failed');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'peer-'));
  const children: ChildProcess[] = [];
  try {
    const exporterPort = await freePort();
    const prometheusPort = await freePort();
    writeFileSync(path.join(dir, 'blackbox.yml'), 'modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      preferred_ip_protocol: ip4\n');
    const urls = Array.from({ length: targets }, (_, i) => `'${base}/p/${i}'`).join(', ');
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1m',
        '  scrape_timeout: 10s',
        'scrape_configs:',
        '  - job_name: blackbox',
        '    metrics_path: /probe',
        '    params:',
        '      module: [http_2xx]',
        '    static_configs:',
        `      - targets: [${urls}]`,
        '    relabel_configs:',
        '      - source_labels: [__address__]',
        '        target_label: __param_target',
        '      - source_labels: [__param_target]',
        '        target_label: instance',
        '      - target_label: __address__',
        `        replacement: 127.0.0.1:${exporterPort}`,
        '',
      ].join('\n'),
    );
    const exporter = spawn(
      path.join(BIN, 'prometheus-blackbox-exporter'),
      [`--config.file=${path.join(dir, 'blackbox.yml')}`, `--web.listen-address=127.0.0.1:${exporterPort}`, '--log.level=warn'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    children.push(exporter);
    await waitFor(`http://127.0.0.1:${exporterPort}/metrics`, 15_000);
    const prometheus = spawn(
      path.join(BIN, 'prometheus'),
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    children.push(prometheus);
    const api = `http://127.0.0.1:${prometheusPort}`;
    await waitFor(`${api}/-/ready`, 60_000);
    // Prometheus spreads its targets over the interval: the measured minutes start once each was scraped once.
    const first = Date.now();
    const succeeding = async () => {
      const res = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent('sum(probe_success)')}`)).json()) as {
        data: { result: { value: [number, string] }[] };
      };
      return Number(res.data.result[0]?.value[1] ?? 0);
    };
    while ((await succeeding()) < targets && Date.now() - first < 150_000) await new Promise((r) => setTimeout(r, 2000));
    const cpu0 = { exporter: cpuSeconds(exporter.pid!), prometheus: cpuSeconds(prometheus.pid!) };
    const hits0 = hits();
    await new Promise((r) => setTimeout(r, minutes * 60_000));
    const cpu = { exporter: +(cpuSeconds(exporter.pid!) - cpu0.exporter).toFixed(2), prometheus: +(cpuSeconds(prometheus.pid!) - cpu0.prometheus).toFixed(2) };
    const probes = hits() - hits0;
    const ok = await succeeding();
    const per = (s: number) => +((s * 1000) / probes).toFixed(3);
    return {
      stack: 'Prometheus 2.42 + blackbox_exporter 0.23 (Debian bookworm)',
      targets,
      minutes,
      probes,
      succeeding: ok,
      cpuSeconds: cpu,
      cpuCores: +((cpu.exporter + cpu.prometheus) / (minutes * 60)).toFixed(3),
      cpuMsPerProbe: { exporter: per(cpu.exporter), prometheus: per(cpu.prometheus), total: per(cpu.exporter + cpu.prometheus) },
      peakRssMB: { exporter: rssMB(exporter.pid!), prometheus: rssMB(prometheus.pid!) },
    };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dir, { recursive: true, force: true });
  }
}

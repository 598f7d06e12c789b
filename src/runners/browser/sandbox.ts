import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { startEgress } from './egress.js';

/**
 * One Playwright Test run of a user's script, isolated (docs/browser-checks.md): bubblewrap gives it its own
 * mount, PID, IPC, UTS and network namespaces; it sees the system's /usr read-only, the Playwright packages, its
 * own work directory and nothing of the service (no /work, no service environment, no other process). Its network
 * namespace has only its own loopback: the browser and the `request` fixture reach targets through the egress
 * proxy, which applies the outbound policy. It is killed at its deadline and when its processes' memory passes
 * the limit.
 */

const require = createRequire(import.meta.url);
/** The packages a script can import, bound read-only into the sandbox's node_modules. */
const PACKAGES = ['@playwright/test', 'playwright', 'playwright-core'] as const;
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

export const CHROMIUM_BINARY = process.env.CHROMIUM_BINARY ?? '/usr/lib/chromium/chromium';
const BWRAP = process.env.BWRAP_PATH ?? '/usr/bin/bwrap';
/** The proxy's port on the sandbox's own loopback (forwarded to the egress socket). */
const PROXY_PORT = 3128;

export interface SandboxRun {
  /** The script, a Playwright Test spec (TypeScript or JavaScript). */
  script: string;
  /** Becomes the run's whole `process.env` (besides HOME, PATH and Playwright's own). */
  env: Record<string, string>;
  /** The test's own timeout; the whole run is killed 20 s after it. */
  timeoutMs: number;
  /** Memory (proportional set size) of all the run's processes together, in bytes. */
  memoryBytes: number;
  policy: OutboundPolicy;
  trace: 'on' | 'off' | 'retain-on-failure';
  screenshot: 'on' | 'off' | 'only-on-failure';
  video: 'on' | 'off' | 'retain-on-failure';
}

export interface SandboxOutcome {
  /** Playwright's JSON report, or null when the run produced none (killed, crashed). */
  report: PlaywrightReport | null;
  /** Why the run was cut short: 'timeout', 'memory', or null. */
  killed: 'timeout' | 'memory' | null;
  /** What the process printed (Playwright's own output; the script's console is in the report). */
  output: string;
  /** The run's output directory on this host: attachments named in the report are under it. */
  outDir: string;
  /** Maps a path the report names (inside the sandbox) to this host's. */
  hostPath(sandboxPath: string): string | null;
  /** Removes the run's files. */
  cleanup(): void;
}

export interface PlaywrightStep {
  title: string;
  duration: number;
  error?: { message?: string };
  steps?: PlaywrightStep[];
}
export interface PlaywrightResult {
  status: 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted';
  duration: number;
  startTime: string;
  errors: { message?: string; stack?: string; location?: { file: string; line: number; column: number } }[];
  stdout: { text?: string; buffer?: string }[];
  stderr: { text?: string; buffer?: string }[];
  steps: PlaywrightStep[];
  attachments: { name: string; contentType: string; path?: string }[];
}
export interface PlaywrightReport {
  suites: { title: string; specs: { title: string; tests: { results: PlaywrightResult[] }[] }[]; suites?: PlaywrightReport['suites'] }[];
  errors: { message?: string }[];
  stats: { expected: number; unexpected: number; flaky: number; skipped: number; duration: number };
}

/** Whether this machine can run browser checks, and if not, why. */
export function browserSupport(): { ok: true } | { ok: false; why: string } {
  if (!existsSync(BWRAP)) return { ok: false, why: `bubblewrap is not installed (${BWRAP}): run scripts/system-packages.sh` };
  if (!existsSync(CHROMIUM_BINARY)) return { ok: false, why: `Chromium is not installed (${CHROMIUM_BINARY}): apt-get install chromium` };
  return { ok: true };
}

const CONFIG = (run: SandboxRun) => `module.exports = {
  testDir: '/sandbox/work',
  testMatch: 'check.spec.ts',
  outputDir: '/sandbox/out/results',
  timeout: ${Math.round(run.timeoutMs)},
  workers: 1,
  retries: 0,
  reporter: [['json', { outputFile: '/sandbox/out/report.json' }]],
  globalSetup: '/sandbox/harness/egress-forward.js',
  use: {
    headless: true,
    proxy: { server: 'http://127.0.0.1:${PROXY_PORT}' },
    trace: '${run.trace}',
    screenshot: '${run.screenshot}',
    video: '${run.video}',
    launchOptions: {
      executablePath: ${JSON.stringify(CHROMIUM_BINARY)},
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
};
`;

/** Runs in the sandbox before the test: the sandbox's loopback proxy port, piped to the egress socket. */
const FORWARDER = `const net = require('node:net');
module.exports = async () => {
  const server = net.createServer((client) => {
    const egress = net.connect('/run/egress.sock');
    client.pipe(egress);
    egress.pipe(client);
    egress.on('error', () => client.destroy());
    client.on('error', () => egress.destroy());
  });
  await new Promise((resolve) => server.listen(${PROXY_PORT}, '127.0.0.1', resolve));
  return async () => new Promise((resolve) => server.close(resolve));
};
`;

/** `pid` and all its descendants (Linux /proc). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const tree: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    tree.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return tree;
}

/**
 * The memory of processes, in bytes, as their proportional set size: a page shared by n of them counts 1/n to
 * each, so Chromium's processes sharing its libraries are not counted many times over (their RSS sum is ~2x).
 */
export function treeMemory(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      total += pss ? Number(pss[1]) * 1024 : 0;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

export async function runInSandbox(run: SandboxRun): Promise<SandboxOutcome> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'browser-run-'));
  const work = path.join(root, 'work');
  const harness = path.join(root, 'harness');
  const out = path.join(root, 'out');
  for (const dir of [work, harness, out]) mkdirSync(dir);
  writeFileSync(path.join(work, 'check.spec.ts'), run.script);
  writeFileSync(path.join(harness, 'playwright.config.js'), CONFIG(run));
  writeFileSync(path.join(harness, 'egress-forward.js'), FORWARDER);
  const socketPath = path.join(root, 'egress.sock');
  const egress = await startEgress(socketPath, run.policy);

  const env = Object.entries({ ...run.env, HOME: '/tmp', PATH: '/usr/bin:/bin' }).flatMap(([k, v]) => ['--setenv', k, v]);
  const packages = PACKAGES.flatMap((name) => ['--ro-bind', packageDir(name), `/sandbox/node_modules/${name}`]);
  const args = [
    '--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL',
    '--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin',
    '--ro-bind', '/etc/fonts', '/etc/fonts', '--ro-bind-try', '/etc/ssl', '/etc/ssl', '--ro-bind-try', '/etc/alternatives', '/etc/alternatives',
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
    '--dir', '/sandbox/node_modules/@playwright', ...packages,
    '--ro-bind', work, '/sandbox/work', '--ro-bind', harness, '/sandbox/harness', '--bind', out, '/sandbox/out', '--bind', socketPath, '/run/egress.sock',
    // Node itself, where it is not under /usr.
    ...(process.execPath.startsWith('/usr/') ? [] : ['--ro-bind', path.dirname(process.execPath), path.dirname(process.execPath)]),
    '--chdir', '/sandbox/work', '--clearenv', ...env,
    process.execPath, '/sandbox/node_modules/@playwright/test/cli.js', 'test', '--config', '/sandbox/harness/playwright.config.js',
  ];
  let killed: SandboxOutcome['killed'] = null;
  let output = '';
  try {
    await new Promise<void>((resolve) => {
      const child = spawn(BWRAP, args, { stdio: ['ignore', 'pipe', 'pipe'], env: {} });
      const keep = (chunk: Buffer) => {
        if (output.length < 64 * 1024) output += chunk.toString('utf8');
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      const kill = (why: 'timeout' | 'memory') => {
        killed ??= why;
        child.kill('SIGKILL');
      };
      const deadline = setTimeout(() => kill('timeout'), run.timeoutMs + 20_000);
      const watchdog = setInterval(() => {
        if (child.pid && treeMemory(processTree(child.pid)) > run.memoryBytes) kill('memory');
      }, 250);
      child.once('error', (err) => {
        output += `\n${err.message}`;
      });
      child.once('close', () => {
        clearTimeout(deadline);
        clearInterval(watchdog);
        resolve();
      });
    });
  } finally {
    await egress.close();
  }
  const reportFile = path.join(out, 'report.json');
  let report: PlaywrightReport | null = null;
  if (existsSync(reportFile)) {
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as PlaywrightReport;
    } catch {
      report = null;
    }
  }
  return {
    report,
    killed,
    output,
    outDir: out,
    hostPath: (p) => {
      const rel = path.posix.relative('/sandbox/out', p);
      return rel.startsWith('..') || path.isAbsolute(rel) ? null : path.join(out, rel);
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

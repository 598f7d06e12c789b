import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutboundPolicy } from '../../platform/outbound.js';
import { sandboxCompileCache } from './compile-cache.js';
import { runInSandbox, SANDBOX_NICENESS, SANDBOX_NODE, type SandboxOutcome, type SandboxRun } from './sandbox.js';

/**
 * Hostile scripts against the browser sandbox itself (docs/browser-checks.md, "Isolation" and "Outputs"): links to
 * the host's files, FIFOs and devices where the host would read, files that fill memory, many processes, a bundle
 * that unpacks to gigabytes. Each case is what a tenant's script could do; none may reach the host's files, block
 * this process, or take more than the run's limits.
 */
describe('the browser sandbox against hostile scripts', { timeout: 90_000 }, () => {
  const policy = new OutboundPolicy({ allowPublic: false, allow: ['127.0.0.0/8'] });
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const spec = (script: string, extra: Partial<SandboxRun> = {}) =>
    runInSandbox({
      program: { kind: 'spec', entry: 'hostile.spec.js', files: [{ path: 'hostile.spec.js', content: script }] },
      env: { RUN_MARK: 'sandbox-run' },
      timeoutMs: 20_000,
      memoryBytes: 1536 * 1024 * 1024,
      policy,
      trace: 'off',
      screenshot: 'off',
      video: 'off',
      ...extra,
    });
  const resultOf = (outcome: SandboxOutcome) => outcome.report?.suites[0]?.specs[0]?.tests[0]?.results[0];
  const logOf = (outcome: SandboxOutcome) => (resultOf(outcome)?.stdout ?? []).map((o) => o.text ?? '').join('');
  /** The host files the host kept of the run's attachments, by attachment name. */
  const kept = (outcome: SandboxOutcome) =>
    Object.fromEntries((resultOf(outcome)?.attachments ?? []).map((a) => [a.name, a.path ? outcome.hostPath(a.path) : null]));

  it('hands back no host file: links to the environment, /etc/passwd and /dev/zero are not followed, a real file is', async () => {
    const outcome = await spec(`
      const { test } = require('@playwright/test');
      const fs = require('node:fs');
      test('links', async ({}, info) => {
        for (const name of ['env', 'passwd', 'zero', 'real']) {
          fs.writeFileSync('/tmp/' + name + '.png', 'PNG-' + name);
          await info.attach(name, { path: '/tmp/' + name + '.png', contentType: 'image/png' });
        }
        // Playwright copied each into the output directory; point the copies at what the host must never read.
        for (const attachment of info.attachments) {
          const name = attachment.name;
          const target = name === 'env' ? '/proc/self/environ' : name === 'passwd' ? '/etc/passwd' : name === 'zero' ? '/dev/zero' : null;
          if (!target) continue;
          fs.rmSync(attachment.path);
          fs.symlinkSync(target, attachment.path);
        }
        // The report itself cannot be a link either: a second report written elsewhere and linked is not read.
        console.log('cmdline ' + fs.readFileSync('/proc/1/cmdline', 'utf8').split('\\0').join(' '));
      });`);
    expect(resultOf(outcome)?.status, outcome.output).toBe('passed');
    const files = kept(outcome);
    expect(files.env).toBeNull();
    expect(files.passwd).toBeNull();
    expect(files.zero).toBeNull();
    expect(readFileSync(files.real!, 'utf8')).toBe('PNG-real');
    // What came back is only files the host made, in its own directory.
    for (const file of Object.values(files).filter(Boolean)) expect(file).toMatch(/\/received\/file-\d+$/);
    // The sandbox's first process shows no path of this host (its options went in on a pipe).
    const cmdline = logOf(outcome);
    expect(cmdline).toMatch(/^cmdline /);
    expect(cmdline).not.toContain(`${os.tmpdir()}/browser-run-`);
    expect(cmdline).not.toContain(process.cwd());
    outcome.cleanup();
  });

  it("every process of a run, Chromium's included, runs below the service's priority", async () => {
    const outcome = await spec(`
      const { test } = require('@playwright/test');
      const fs = require('node:fs');
      test('niceness', async ({ page }) => {
        await page.setContent('<title>up</title>');
        // The sandbox has its own process namespace: /proc lists the run's processes and nothing else.
        for (const pid of fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d))) {
          let stat;
          try { stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'); } catch { continue; }
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          console.log('nice ' + fields[16] + ' ' + stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
        }
        if (fs.existsSync('/proc/self/autogroup')) console.log('autogroup ' + fs.readFileSync('/proc/self/autogroup', 'utf8').trim());
      });`);
    expect(resultOf(outcome)?.status, outcome.output).toBe('passed');
    const log = logOf(outcome).trim().split('\n');
    const lines = log.filter((l) => l.startsWith('nice '));
    expect(
      lines.some((l) => /chrom|headless/i.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(lines.length).toBeGreaterThan(3);
    // `nice` adds to the service's own niceness (0 unless it was started niced itself).
    const expected = Math.min(19, os.getPriority() + SANDBOX_NICENESS);
    for (const line of lines) expect(line).toMatch(new RegExp(`^nice ${expected} `));
    // Where the kernel groups processes by session (autogroup), the run's session is weighed at that niceness too.
    if (existsSync('/proc/self/autogroup')) expect(log.find((l) => l.startsWith('autogroup '))).toMatch(new RegExp(` nice ${SANDBOX_NICENESS}$`));
    outcome.cleanup();
  });

  it('a FIFO as the report or as an attachment blocks nothing: the run ends at its deadline or without that file', async () => {
    const asReport = await spec(
      `
      const { test } = require('@playwright/test');
      const { execFileSync } = require('node:child_process');
      test('fifo report', async () => { execFileSync('mkfifo', ['/sandbox/out/report.json']); });`,
      { timeoutMs: 2_000 },
    );
    // Playwright blocks writing its report into the FIFO (inside the sandbox) until the deadline kills it.
    expect(asReport.report).toBeNull();
    expect(asReport.killed).toBe('timeout');
    asReport.cleanup();

    const asFile = await spec(`
      const { test } = require('@playwright/test');
      const fs = require('node:fs');
      const { execFileSync } = require('node:child_process');
      test('fifo attachment', async ({}, info) => {
        fs.writeFileSync('/tmp/pipe.png', 'x');
        await info.attach('pipe', { path: '/tmp/pipe.png', contentType: 'image/png' });
        for (const attachment of info.attachments) { fs.rmSync(attachment.path); execFileSync('mkfifo', [attachment.path]); }
      });`);
    expect(resultOf(asFile)?.status, asFile.output).toBe('passed');
    expect(asFile.killed).toBeNull();
    expect(kept(asFile).pipe).toBeNull();
    asFile.cleanup();
  });

  it("/tmp and the output directory are sized tmpfs, and their bytes count toward the run's memory", async () => {
    // The files are kept a while after writing (holdMs): a run that ended at once would take its tmpfs with it
    // before the watchdog's next look, and what the watchdog must stop is a run that keeps the memory.
    const fill = (dir: string, mb: number, holdMs = 0) => `
      const { test } = require('@playwright/test');
      const fs = require('node:fs');
      test('fill', async () => {
        const chunk = Buffer.alloc(4 * 1024 * 1024, 1);
        let written = 0;
        try { for (let i = 0; i < ${mb / 4}; i++) { fs.writeFileSync('${dir}/fill-' + i, chunk); written += chunk.length; } }
        catch (e) { console.log('stopped: ' + e.code); }
        console.log('written ' + written);
        await new Promise((resolve) => setTimeout(resolve, ${holdMs}));
      });`;
    // 96 MiB into a 64 MiB output directory: ENOSPC, nothing of it on this host's disk (the full directory leaves
    // Playwright no room for its report either: the run has none, and its output says why).
    const full = await spec(fill('/sandbox/out', 96), { limits: { outBytes: 64 * 1024 * 1024 } });
    expect(full.output).toContain('stopped: ENOSPC');
    expect(Number(/written (\d+)/.exec(full.output)?.[1])).toBeLessThanOrEqual(64 * 1024 * 1024);
    full.cleanup();
    // 400 MiB in /tmp with a 300 MiB memory limit: the watchdog counts the tmpfs and stops the run.
    const memory = await spec(fill('/tmp', 400, 40_000), { memoryBytes: 300 * 1024 * 1024, timeoutMs: 60_000 });
    expect(memory.killed).toBe('memory');
    memory.cleanup();
  });

  it('a run that starts many processes is stopped', async () => {
    const outcome = await spec(
      `
      const { test } = require('@playwright/test');
      const { spawn } = require('node:child_process');
      test('many', async () => {
        for (let i = 0; i < 400; i++) spawn('sleep', ['30'], { stdio: 'ignore' }).on('error', () => {});
        await new Promise((resolve) => setTimeout(resolve, 10_000));
      });`,
      { limits: { processes: 64 } },
    );
    expect(outcome.killed).toBe('processes');
    outcome.cleanup();
  });

  it('a code bundle unpacks into a sized work directory: a bomb fails to unpack', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-bomb-'));
    dirs.push(dir);
    // 160 MiB of zeros compress to ~160 KiB.
    writeFileSync(path.join(dir, 'zeros.bin'), Buffer.alloc(160 * 1024 * 1024));
    writeFileSync(path.join(dir, 'playwright.config.js'), 'module.exports = {};');
    const bundle = path.join(dir, 'bundle.tar.gz');
    execFileSync('tar', ['-czf', bundle, '-C', dir, 'zeros.bin', 'playwright.config.js']);
    expect(readdirSync(dir)).toContain('bundle.tar.gz');
    const outcome = await runInSandbox({
      program: { kind: 'suite', bundle, config: 'playwright.config.js', cwd: '.', args: [] },
      env: {},
      timeoutMs: 20_000,
      memoryBytes: 1536 * 1024 * 1024,
      policy,
      trace: 'off',
      screenshot: 'off',
      video: 'off',
      limits: { workBytes: 64 * 1024 * 1024 },
    });
    expect(outcome.report).toBeNull();
    expect(outcome.output).toContain('The code bundle could not be unpacked');
    outcome.cleanup();
  });

  it("runs on the sandbox's Node with the service's compile cache, which a run can read but not write", async () => {
    const version = execFileSync(SANDBOX_NODE, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
    const cache = await sandboxCompileCache(policy);
    const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 8)) {
      // A Node without a compile cache (the runtime is not installed here): runs go without one.
      expect(cache).toBeNull();
      return;
    }
    // Made once by the warm-up: the same directory again, holding V8's cache of Playwright's modules.
    expect(cache).not.toBeNull();
    expect(await sandboxCompileCache(policy)).toBe(cache);
    const entries = () => readdirSync(cache!, { recursive: true }).length;
    const before = entries();
    expect(before).toBeGreaterThan(3);
    const outcome = await spec(
      `
      const { test } = require('@playwright/test');
      const fs = require('node:fs');
      const path = require('node:path');
      test('cache', async () => {
        console.log('node ' + process.version);
        console.log('cache dir ' + require('node:module').getCompileCacheDir());
        console.log('cache ' + fs.readdirSync('/sandbox/cache', { recursive: true }).length);
        // Rewriting an entry of the cache (what the next run would load) is refused.
        const dir = path.join('/sandbox/cache', fs.readdirSync('/sandbox/cache')[0]);
        const entry = path.join(dir, fs.readdirSync(dir)[0]);
        for (const write of [() => fs.writeFileSync(entry, 'poison'), () => fs.writeFileSync(path.join(dir, 'new'), 'x'), () => fs.rmSync(entry)]) {
          try { write(); console.log('written'); } catch (err) { console.log('refused ' + err.code); }
        }
        console.log('env ' + Object.keys(process.env).filter((k) => k.startsWith('NODE_')).join(','));
      });`,
      { compileCache: { dir: cache!, write: false } },
    );
    expect(resultOf(outcome)?.status, outcome.output).toBe('passed');
    const log = logOf(outcome);
    expect(log).toContain(`node ${version}`);
    // The run reads the cache: its Node has it on, at the bound directory.
    expect(log).toMatch(/^cache dir \/sandbox\/cache/m);
    expect(log).toContain(`cache ${before}`);
    expect(log).not.toContain('written');
    expect(log.match(/refused EROFS/g)).toHaveLength(3);
    // The cache is switched on by a preloaded file, not by a variable in the script's environment.
    expect(log).toMatch(/^env $/m);
    expect(entries()).toBe(before);
    outcome.cleanup();
  });
});

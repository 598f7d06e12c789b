import { mkdtempSync, rmSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * What a browser sandbox hands back, and how the host takes it without trusting it (docs/browser-checks.md,
 * "Outputs"). The sandbox's output directory is a tmpfs of its own: no host directory is bound into it writable,
 * so nothing it makes there (a link to a host file, a FIFO, a device) is ever opened by the host. When the test
 * ends, the sandbox's collector (COLLECTOR, below) writes the JSON report and the files the report attaches to a
 * pipe, each as a frame: a header line `{"path": "/sandbox/out/…", "size": n}` and then n bytes. The host reads
 * frames with limits (header length, a file's size, the whole stream) into files it creates itself, in a
 * directory the sandbox never saw; a frame out of bounds ends the reading, and what came before it stands.
 */

export interface OutputLimits {
  /** The report, held in memory and parsed. */
  reportBytes: number;
  /** One attached file. */
  fileBytes: number;
  /** Everything the sandbox hands back. */
  totalBytes: number;
}

const HEADER_LIMIT = 4096;

/** The frame being read: its path, the bytes left, and where they go (memory for the report, else a file). */
interface Frame {
  path: string;
  left: number;
  chunks?: Buffer[];
  file?: FileHandle;
  hostFile?: string;
}
const REPORT_PATH = '/sandbox/out/report.json';

export interface ReceivedOutputs {
  /** The report's bytes, or null when the sandbox sent none. */
  report: Buffer | null;
  /** A file the sandbox named (its path inside the sandbox) to the host file holding its bytes. */
  files: Map<string, string>;
  /** Why the reading stopped early (a limit or a malformed frame), or null. */
  problem: string | null;
}

/** Reads the collector's frames from `stream` into `dir` (made and owned by the host). */
export async function receiveOutputs(stream: Readable, dir: string, limits: OutputLimits): Promise<ReceivedOutputs> {
  const files = new Map<string, string>();
  let report: Buffer | null = null;
  let problem: string | null = null;
  let total = 0;
  let header: Buffer = Buffer.alloc(0);
  const at: { frame: Frame | null } = { frame: null };

  const stop = (why: string) => {
    problem ??= why;
  };
  const finish = async () => {
    if (!at.frame) return;
    if (at.frame.chunks) report = Buffer.concat(at.frame.chunks);
    if (at.frame.file) {
      await at.frame.file.close();
      files.set(at.frame.path, at.frame.hostFile!);
    }
    at.frame = null;
  };
  const begin = async (line: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return stop('a malformed output frame');
    }
    const { path: named, size } = (parsed ?? {}) as { path?: unknown; size?: unknown };
    if (typeof named !== 'string' || !Number.isSafeInteger(size) || (size as number) < 0) return stop('a malformed output frame');
    const normal = path.posix.normalize(named);
    if (normal !== named || !normal.startsWith('/sandbox/out/')) return stop(`an output outside /sandbox/out (${named.slice(0, 200)})`);
    if (normal === REPORT_PATH) {
      if ((size as number) > limits.reportBytes) return stop(`a report of ${size} bytes (at most ${limits.reportBytes})`);
      at.frame = { path: normal, left: size as number, chunks: [] };
    } else {
      if (files.has(normal)) return stop(`${normal} sent twice`);
      if ((size as number) > limits.fileBytes) return stop(`${path.posix.basename(normal)} of ${size} bytes (at most ${limits.fileBytes})`);
      const hostFile = path.join(dir, `file-${files.size}`);
      // O_EXCL: a file of the host's own, created now, in a directory only the host knows.
      at.frame = { path: normal, left: size as number, file: await open(hostFile, 'wx', 0o600), hostFile };
    }
    if (at.frame.left === 0) await finish();
  };

  try {
    for await (const piece of stream) {
      let chunk = piece as Buffer;
      total += chunk.length;
      if (total > limits.totalBytes) stop(`more than ${limits.totalBytes} bytes of outputs`);
      while (!problem && chunk.length) {
        if (at.frame) {
          const part = chunk.subarray(0, at.frame.left);
          chunk = chunk.subarray(part.length);
          at.frame.left -= part.length;
          if (at.frame.chunks) at.frame.chunks.push(part);
          else await at.frame.file!.write(part);
          if (at.frame.left === 0) await finish();
          continue;
        }
        const end = chunk.indexOf(0x0a);
        if (end < 0) {
          header = Buffer.concat([header, chunk]);
          chunk = Buffer.alloc(0);
          if (header.length > HEADER_LIMIT) stop('a malformed output frame');
          continue;
        }
        const line = Buffer.concat([header, chunk.subarray(0, end)]);
        header = Buffer.alloc(0);
        chunk = chunk.subarray(end + 1);
        if (line.length > HEADER_LIMIT) stop('a malformed output frame');
        else await begin(line.toString('utf8'));
      }
      if (problem) break;
    }
  } catch (err) {
    stop(`the outputs could not be read: ${(err as Error).message}`);
  } finally {
    // An unfinished frame is dropped: its file was never complete.
    if (at.frame?.file) await at.frame.file.close().catch(() => undefined);
    if (!problem && at.frame) stop('the outputs ended in the middle of a file');
    stream.destroy();
  }
  return { report, files, problem };
}

/** A directory of the host's for one run's received outputs (0700, under the system's temporary directory). */
export function outputsDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'browser-outputs-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Runs inside the sandbox once the test has ended (its own Node, its own files: nothing it reads is the host's).
 * Sends the report and the regular files under /sandbox/out that the report attaches, each at most the file
 * limit, all together at most the total; a link, a FIFO, a device or a file too large is not sent. Test output is
 * cut to bounds first (the host bounds what it keeps again), so a script's 50 MB of console does not travel.
 */
export const COLLECTOR = (limits: OutputLimits & { logBytes: number; textBytes: number }) => `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const OUT = '/sandbox/out';
const LIMITS = ${JSON.stringify(limits)};
let sent = 0;
function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try { off += fs.writeSync(3, buf, off, buf.length - off); }
    catch (e) { if (e.code !== 'EAGAIN') throw e; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); }
  }
}
function send(name, buf) {
  if (sent + buf.length > LIMITS.totalBytes) return;
  sent += buf.length;
  writeAll(Buffer.from(JSON.stringify({ path: name, size: buf.length }) + '\\n'));
  writeAll(buf);
}
function readRegular(file, limit) {
  let fd;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > limit) return null;
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const held = fs.fstatSync(fd);
    if (!held.isFile() || held.size > limit) return null;
    const buf = Buffer.alloc(held.size);
    let n = 0;
    while (n < buf.length) { const r = fs.readSync(fd, buf, n, buf.length - n, n); if (r === 0) break; n += r; }
    return buf.subarray(0, n);
  } catch { return null; } finally { if (fd !== undefined) try { fs.closeSync(fd); } catch {} }
}
const cut = (s, n) => (typeof s === 'string' && s.length > n ? s.slice(0, n) + ' … (cut at ' + n + ' characters)' : s);
function bound(report) {
  let log = 0;
  const output = (list) => (Array.isArray(list) ? list : []).map((o) => {
    const text = o && (typeof o.text === 'string' ? o.text : typeof o.buffer === 'string' ? Buffer.from(o.buffer, 'base64').toString('utf8') : '');
    if (log >= LIMITS.logBytes) return null;
    const kept = text.slice(0, LIMITS.logBytes - log);
    log += kept.length;
    return { text: kept.length < text.length ? kept + ' … (output cut at ' + LIMITS.logBytes + ' characters)' : kept };
  }).filter(Boolean);
  const steps = (list, depth) => (Array.isArray(list) && depth < 20 ? list.slice(0, 500) : []).map((s) => ({
    title: cut(String(s && s.title), LIMITS.textBytes), duration: Number(s && s.duration) || 0,
    ...(s && s.error ? { error: { message: cut(String(s.error.message || ''), LIMITS.textBytes) } } : {}),
    steps: steps(s && s.steps, depth + 1),
  }));
  const errors = (list) => (Array.isArray(list) ? list.slice(0, 50) : []).map((e) => ({ ...e, message: cut(e && e.message, LIMITS.textBytes), stack: cut(e && e.stack, LIMITS.textBytes) }));
  const suites = (list, depth) => (Array.isArray(list) && depth < 20 ? list : []).map((s) => ({
    ...s, title: cut(s.title, LIMITS.textBytes), suites: suites(s.suites, depth + 1),
    specs: (s.specs || []).map((spec) => ({ ...spec, title: cut(spec.title, LIMITS.textBytes), tests: (spec.tests || []).map((t) => ({
      ...t, results: (t.results || []).map((r) => ({ ...r, stdout: output(r.stdout), stderr: output(r.stderr), steps: steps(r.steps, 0), errors: errors(r.errors), attachments: (r.attachments || []).slice(0, 100) })),
    })) })),
  }));
  return { ...report, suites: suites(report.suites, 0), errors: errors(report.errors) };
}
const raw = readRegular(path.join(OUT, 'report.json'), 512 * 1024 * 1024);
let report = null;
try { report = raw && bound(JSON.parse(raw.toString('utf8'))); } catch { report = null; }
if (report) {
  const text = Buffer.from(JSON.stringify(report));
  if (text.length <= LIMITS.reportBytes) send(OUT + '/report.json', text);
  const named = new Set();
  const walk = (list) => (Array.isArray(list) ? list : []).forEach((s) => {
    (s.specs || []).forEach((spec) => (spec.tests || []).forEach((t) => (t.results || []).forEach((r) => r.attachments.forEach((a) => a && typeof a.path === 'string' && named.add(path.posix.normalize(a.path))))));
    walk(s.suites);
  });
  walk(report.suites);
  for (const file of named) {
    if (!file.startsWith(OUT + '/') || file === OUT + '/report.json') continue;
    const buf = readRegular(file, LIMITS.fileBytes);
    if (buf) send(file, buf);
  }
}
`;

import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';

/** A result an agent made on its own while cut off: delivered later with its original times. */
export interface MadeResult {
  checkId: string;
  location: string;
  slot: number;
  periodMs?: number;
  outcome: Record<string, unknown>;
}

/** A segment is closed (and may be sent) past this size or age. */
const SEGMENT_BYTES = 1024 * 1024;
/** The most results set aside (refused by the service) are kept on disk, oldest removed first. */
const ASIDE_BYTES = 16 * 1024 * 1024;

/** The service refused a batch as a whole (a 400): it is set aside, never sent again, and the drain goes on. */
export class RefusedBatch extends Error {}

/**
 * The agent's bounded on-disk buffer of results made while the service was unreachable. Results are appended
 * as JSON lines to segment files and synced before `add` returns, so a killed agent loses none it had written;
 * past `maxBytes` the oldest segments are removed and their results counted as dropped. Results are what the
 * service would store (secret values already masked); check definitions are never written here.
 */
export class DiskBuffer {
  private readonly dir: string;
  private current?: { file: string; fd: number; bytes: number; lines: number };
  private seq = 0;
  /** Results and bytes held, results dropped for space since start, and results the service refused (set aside). */
  readonly stats = { results: 0, bytes: 0, dropped: 0, setAside: 0 };
  /** The segment a drain is delivering now. */
  private draining: string | undefined;
  private readonly lines = new Map<string, number>();
  private readonly asideDir: string;

  constructor(
    dataDir: string,
    private readonly maxBytes: number,
  ) {
    this.dir = path.join(dataDir, 'buffer');
    this.asideDir = path.join(dataDir, 'refused');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    for (const file of this.segments()) {
      const text = readFileSync(path.join(this.dir, file), 'utf8');
      const n = text.split('\n').filter(Boolean).length;
      this.lines.set(file, n);
      this.stats.results += n;
      this.stats.bytes += Buffer.byteLength(text);
    }
  }

  /** Segment files, oldest first (their names sort by creation). */
  private segments(): string[] {
    return readdirSync(this.dir)
      .filter((f) => /^seg-\d{13}-\d{6}\.jsonl$/.test(f))
      .sort();
  }

  add(results: readonly MadeResult[]): void {
    if (!results.length) return;
    if (!this.current || this.current.bytes >= SEGMENT_BYTES) this.rotate();
    const cur = this.current!;
    const text = results.map((r) => `${JSON.stringify(r)}\n`).join('');
    writeSync(cur.fd, text);
    fsyncSync(cur.fd);
    const bytes = Buffer.byteLength(text);
    cur.bytes += bytes;
    cur.lines += results.length;
    this.lines.set(cur.file, cur.lines);
    this.stats.results += results.length;
    this.stats.bytes += bytes;
    this.trim();
  }

  private rotate(): void {
    this.closeCurrent();
    const file = `seg-${String(Date.now()).padStart(13, '0')}-${String(this.seq++ % 1_000_000).padStart(6, '0')}.jsonl`;
    this.current = { file, fd: openSync(path.join(this.dir, file), 'a', 0o600), bytes: 0, lines: 0 };
    this.lines.set(file, 0);
  }

  private closeCurrent(): void {
    if (!this.current) return;
    closeSync(this.current.fd);
    this.current = undefined;
  }

  /**
   * Removes the oldest segments while over the limit, counting what they held. The segment a drain is delivering is
   * not one of them: its results are on their way (the buffer may hold one segment more than its limit meanwhile).
   */
  private trim(): void {
    for (const file of this.segments()) {
      if (this.stats.bytes <= this.maxBytes) return;
      if (file === this.draining) continue;
      if (this.current?.file === file) this.closeCurrent();
      this.remove(file, true);
    }
  }

  private remove(file: string, dropped: boolean): void {
    const full = path.join(this.dir, file);
    let size = 0;
    try {
      size = statSync(full).size;
    } catch {
      // already gone
    }
    rmSync(full, { force: true });
    const n = this.lines.get(file) ?? 0;
    this.lines.delete(file);
    this.stats.results -= n;
    this.stats.bytes -= size;
    if (dropped) this.stats.dropped += n;
  }

  /**
   * Keeps results the service refused in `refused/` beside the buffer (JSON lines with the reason, for a person to
   * read; at most 16 MiB, oldest first out), counted; they are never sent again.
   */
  setAside(results: readonly MadeResult[], reason: string): void {
    if (!results.length) return;
    mkdirSync(this.asideDir, { recursive: true, mode: 0o700 });
    const at = new Date().toISOString();
    const file = path.join(this.asideDir, `refused-${String(Date.now()).padStart(13, '0')}-${String(this.seq++ % 1_000_000).padStart(6, '0')}.jsonl`);
    const fd = openSync(file, 'a', 0o600);
    try {
      writeSync(fd, results.map((result) => `${JSON.stringify({ at, reason: reason.slice(0, 2000), result })}\n`).join(''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.stats.setAside += results.length;
    const files = readdirSync(this.asideDir)
      .filter((f) => f.startsWith('refused-'))
      .sort();
    let total = files.reduce((sum, f) => sum + statSync(path.join(this.asideDir, f)).size, 0);
    for (const f of files) {
      if (total <= ASIDE_BYTES) break;
      total -= statSync(path.join(this.asideDir, f)).size;
      rmSync(path.join(this.asideDir, f), { force: true });
    }
  }

  /**
   * Hands the results to `deliver`, oldest segment first, in batches of `batch`; a segment is removed once all
   * of it was delivered or set aside. A batch the service refuses as a whole (`deliver` throws RefusedBatch) is
   * set aside and the drain goes on; any other failure stops it (the rest waits for the next try). Lines a crash
   * cut short are skipped. Resolves to how many results were delivered.
   */
  async drain(deliver: (results: MadeResult[]) => Promise<void>, batch = 500): Promise<number> {
    this.closeCurrent();
    let delivered = 0;
    try {
      delivered = await this.drainSegments(deliver, batch);
    } finally {
      this.draining = undefined;
    }
    return delivered;
  }

  private async drainSegments(deliver: (results: MadeResult[]) => Promise<void>, batch: number): Promise<number> {
    let delivered = 0;
    for (const file of this.segments()) {
      // A segment trimmed while an earlier one was delivered is gone (and counted as dropped).
      if (!this.lines.has(file)) continue;
      this.draining = file;
      const results: MadeResult[] = [];
      for (const line of readFileSync(path.join(this.dir, file), 'utf8').split('\n')) {
        if (!line) continue;
        try {
          results.push(JSON.parse(line) as MadeResult);
        } catch {
          // a line cut short by a crash: not a result
        }
      }
      let sent = 0;
      for (let i = 0; i < results.length; i += batch) {
        const part = results.slice(i, i + batch);
        try {
          await deliver(part);
          sent += part.length;
        } catch (err) {
          if (!(err instanceof RefusedBatch)) throw err;
          this.setAside(part, err.message);
        }
      }
      this.remove(file, false);
      delivered += sent;
    }
    return delivered;
  }

  close(): void {
    this.closeCurrent();
  }
}

import { createHash } from 'node:crypto';

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Group commit for the ingest worker: batches that reach a write while another write is running wait and go
 * in together when it ends, as one group of at most `maxRows` rows; an idle worker still writes a lone batch
 * at once. Used for the ClickHouse insert (with the rollup views on, an insert costs a fixed ~100 ms on top
 * of its rows, and the embedded engine runs one query at a time, so under load fewer, larger inserts land
 * several times more rows per second) and for the check-state transaction that follows it (one transaction
 * holds the rows of every check a group names, instead of batches queueing on each other's row locks).
 */
export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private running = false;

  private rows = 0;
  private lingering?: NodeJS.Timeout;
  private hurried = false;

  /**
   * `lingerMs`: how long an idle group waits for more items before it writes (0: it writes in the next turn of
   * the event loop); a group that reaches `maxRows` writes at once.
   */
  constructor(
    private readonly write: (group: T[]) => Promise<void>,
    private readonly rowsOf: (item: T) => number,
    private readonly maxRows: number,
    private readonly lingerMs = 0,
  ) {}

  /**
   * Resolves once the item's group is written; rejects with the group's error. `soon`: someone waits for this item
   * (a check session's result): its group does not linger, and takes the items lingering before it along.
   */
  add(item: T, soon = false): Promise<void> {
    const now = soon || this.hurried;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.rows += this.rowsOf(item);
      if (this.running) return;
      if (this.lingering && (now || this.rows >= this.maxRows)) this.endLinger(now);
      else if (!this.lingering) {
        if (this.lingerMs > 0 && !now && this.rows < this.maxRows)
          this.lingering = setTimeout(() => ((this.lingering = undefined), this.start()), this.lingerMs);
        // Items handed over in the same turn of the event loop share the first write too.
        else this.start(true);
      }
    });
  }

  /** From now on nothing lingers (the process is stopping): a lingering group is written at once. */
  hurry(): void {
    this.hurried = true;
    if (this.lingering && !this.running) this.endLinger(true);
  }

  /** The lingering group is written now (`nextTurn`: with what else is handed over in this turn). */
  private endLinger(nextTurn: boolean): void {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.start(nextTurn);
  }

  private start(nextTurn = false): void {
    this.running = true;
    if (nextTurn) setImmediate(() => void this.drain());
    else void this.drain();
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const group = this.take();
      try {
        await this.write(group.map((w) => w.item));
        for (const w of group) w.resolve();
      } catch (err) {
        for (const w of group) w.reject(err as Error);
      }
    }
    this.running = false;
  }

  /** The next group: waiting items in arrival order up to maxRows (always at least one). */
  private take(): Waiting<T>[] {
    let rows = 0;
    let n = 0;
    while (n < this.waiting.length && (n === 0 || rows + this.rowsOf(this.waiting[n].item) <= this.maxRows)) {
      rows += this.rowsOf(this.waiting[n].item);
      n++;
    }
    this.rows -= rows;
    return this.waiting.splice(0, n);
  }
}

/**
 * The deduplication token of an insert: a lone batch keeps its id, a group gets a digest of its sorted ids.
 * A batch retried alone after its group landed finds its rows stored (ResultDedup) and inserts nothing, so
 * the token only matters when the same insert is repeated whole.
 */
export function tokenOf(batchIds: readonly string[]): string {
  if (batchIds.length === 1) return batchIds[0];
  return `group-${createHash('sha256')
    .update([...batchIds].sort().join('\n'))
    .digest('hex')}`;
}

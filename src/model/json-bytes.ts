import { clickHouseTimeMs } from './time.js';

/**
 * Many rows as JSON in UTF-8 bytes: `prefix`, the rows' JSON separated by commas, `suffix`. For a queued batch and an
 * insert's rows. One JSON.stringify of a thousand rows makes a string of parts V8 must then flatten, and a Buffer made
 * from it measures its UTF-8 length in a pass of its own: 2–3.5 ms for a batch of 1,000 API results on this machine.
 * A row at a time, written where the last one ended, takes about 1 ms (bench/README.md, "Ingest: where the main
 * thread's time goes").
 */
export function jsonRowsBytes(rows: readonly unknown[], prefix = '', suffix = '', where?: RowPlaces): Buffer {
  // Room for rows about as long as the first (a fifth more), so that a batch is seldom copied to grow; at most
  // FIRST_ROOM, since one long first row (a 64 KB detail) says nothing of the rest.
  const first = rows.length ? (JSON.stringify(rows[0]) ?? 'null') : '';
  const guess = Math.min(FIRST_ROOM, Math.ceil((first.length + 1) * rows.length * 1.2));
  let buf = Buffer.allocUnsafe(prefix.length * 3 + guess + suffix.length * 3 + 64);
  let at = 0;
  const put = (text: string) => {
    // At most 3 bytes a UTF-16 unit: with that much room the write is whole.
    if (buf.length - at < text.length * 3 + 1) {
      const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, at + text.length * 3 + 1));
      buf.copy(bigger, 0, 0, at);
      buf = bigger;
    }
    at += buf.write(text, at, 'utf8');
  };
  put(prefix);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) put(',');
    where?.starts.push(at);
    // As in an array: what JSON has no form for is null.
    put(i === 0 ? first : (JSON.stringify(rows[i]) ?? 'null'));
    where?.ends.push(at);
  }
  put(suffix);
  // Far more room than text (a guess too long, or the last doubling): the bytes alone, not the room, are kept.
  return buf.length > 1024 * 1024 && buf.length > at * 2 ? Buffer.from(buf.subarray(0, at)) : buf.subarray(0, at);
}

const FIRST_ROOM = 8 * 1024 * 1024;

/**
 * `value` as JSON in UTF-8 bytes, its `rows` (a long array) written a row at a time (jsonRowsBytes); `where`, when
 * given, is told where each row is.
 */
export function jsonWithRowsBytes<T extends { rows?: unknown }>(value: T, where?: RowPlaces): Buffer {
  const { rows, ...rest } = value;
  if (!Array.isArray(rows)) return Buffer.from(JSON.stringify(value), 'utf8');
  const head = JSON.stringify(rest);
  return jsonRowsBytes(rows, `${head.slice(0, -1)}${head === '{}' ? '' : ','}"rows":[`, ']}', where);
}

/** Where each row's JSON is in the bytes jsonRowsBytes wrote: from `starts[i]` up to, not including, `ends[i]`. */
export interface RowPlaces {
  starts: number[];
  ends: number[];
}

/**
 * Rows of an insert as the JSON they were written in once (a batch's copy in Redis): an insert copies each row's
 * bytes instead of encoding the row again, and columns added to every row on the way (ingest's `in_maintenance`,
 * the rollup ticks' `late_batch`) are written after its own values. Rows taken without bytes (a batch read back from
 * Redis) are encoded only when bytes are asked for; rows taken as bytes alone (a batch its own process held: the
 * values are not kept, so that batches waiting for an insert hold little the collector must copy) are read back one
 * by one only when a value is asked for (`row`, `arrays`: a store that takes arrays, whose client encodes them
 * itself). Their start times, asked for by the rollup ticks, come from the runs given with them.
 */
export class JsonRows {
  private constructor(
    /** Per row: its values, or undefined when only its bytes were taken. */
    private readonly values: readonly (readonly unknown[] | undefined)[],
    private readonly sources: readonly Buffer[],
    /** Per row: which source (-1: none, encode the row), and where its JSON array is in it. */
    private readonly sourceOf: readonly number[],
    private readonly starts: readonly number[],
    private readonly ends: readonly number[],
    /** Per row: its start (epoch ms) when taken with its run, else NaN. */
    private readonly startedAt: readonly number[],
    /** Columns added to every row, each a value a row. */
    private readonly added: readonly (readonly unknown[])[],
  ) {}

  get length(): number {
    return this.values.length;
  }

  /** An empty set to fill with `take`. */
  static collect(): JsonRowsCollector {
    const values: (readonly unknown[] | undefined)[] = [];
    const sources: Buffer[] = [];
    const sourceOf: number[] = [];
    const starts: number[] = [];
    const ends: number[] = [];
    const startedAt: number[] = [];
    return {
      take({ rows, written, runs }, keep) {
        if (!rows && !written) throw new Error('rows are taken as values, as bytes, or both');
        const n = rows ? rows.length : written!.starts.length;
        let source = -1;
        for (let i = 0; i < n; i++) {
          if (keep && !keep(i)) continue;
          if (written && source < 0) source = sources.push(written.bytes) - 1;
          values.push(rows?.[i]);
          sourceOf.push(source);
          starts.push(written ? written.starts[i]! : 0);
          ends.push(written ? written.ends[i]! : 0);
          startedAt.push(runs ? runs[i]!.startedAt : Number.NaN);
        }
      },
      done: () => new JsonRows(values, sources, sourceOf, starts, ends, startedAt, []),
    };
  }

  /** Row `i`'s values (without the added columns), read back from its bytes when only those were taken. */
  row(i: number): readonly unknown[] {
    return this.values[i] ?? writtenRow({ bytes: this.sources[this.sourceOf[i]!]!, starts: this.starts, ends: this.ends }, i);
  }

  /** Row `i`'s start (epoch ms): its run's when it was taken with one, else read from its `started_at` value (at `column`). */
  startedAtMs(i: number, column: number): number {
    const known = this.startedAt[i]!;
    return Number.isNaN(known) ? clickHouseTimeMs(this.row(i)[column]) : known;
  }

  /** These rows with one more column, its value for each row (by index, in row order). */
  withColumn(value: (index: number) => unknown): JsonRows {
    const column = Array.from({ length: this.length }, (_, i) => value(i));
    return new JsonRows(this.values, this.sources, this.sourceOf, this.starts, this.ends, this.startedAt, [...this.added, column]);
  }

  /** The rows as arrays, added columns last (for a store that takes values). */
  arrays(): unknown[][] {
    return this.values.map((_, i) => [...this.row(i), ...this.added.map((column) => column[i])]);
  }

  /**
   * The rows' JSON separated by commas, in UTF-8 (what JSONCompactEachRow reads): each row's own bytes without its
   * closing bracket, then its added values, then the bracket.
   */
  bytes(): Buffer {
    const n = this.values.length;
    // The added values' JSON, column by column (no text made per row beyond each value's own).
    const texts = this.added.map((column) => column.map((value) => JSON.stringify(value) ?? 'null'));
    // Rows taken without bytes, encoded here once; every row's length in bytes, brackets included.
    const own = new Array<string | undefined>(n);
    const lengths = new Array<number>(n);
    let size = Math.max(0, n - 1);
    for (let i = 0; i < n; i++) {
      if (this.sourceOf[i]! < 0) {
        own[i] = JSON.stringify(this.values[i]);
        lengths[i] = Buffer.byteLength(own[i]!);
      } else lengths[i] = this.ends[i]! - this.starts[i]!;
      // A row's bytes without its bracket, a comma before each added value (none before the first when the row had
      // no values), then the bracket.
      size += lengths[i]! + (lengths[i]! <= 2 ? Math.max(0, texts.length - 1) : texts.length);
      for (const column of texts) size += Buffer.byteLength(column[i]!);
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = 0; i < n; i++) {
      if (i > 0) out[at++] = 0x2c;
      // All but the closing bracket (one byte, last): a length one short of the row's writes exactly that.
      const text = own[i];
      at +=
        text === undefined ? this.sources[this.sourceOf[i]!]!.copy(out, at, this.starts[i]!, this.ends[i]! - 1) : out.write(text, at, lengths[i]! - 1, 'utf8');
      const bare = lengths[i]! <= 2;
      for (let c = 0; c < texts.length; c++) {
        if (c > 0 || !bare) out[at++] = 0x2c;
        at += out.write(texts[c]![i]!, at, 'utf8');
      }
      out[at++] = 0x5d;
    }
    return at === size ? out : out.subarray(0, at);
  }
}

/** Row `i` of rows jsonRowsBytes wrote, read back from its bytes. */
export function writtenRow(written: { bytes: Buffer; readonly starts: readonly number[]; readonly ends: readonly number[] }, i: number): unknown[] {
  return JSON.parse(written.bytes.toString('utf8', written.starts[i], written.ends[i]));
}

/** Rows' bytes as jsonRowsBytes wrote them, and where each row is in them. */
export type WrittenRows = { bytes: Buffer } & RowPlaces;

export interface JsonRowsCollector {
  /**
   * Rows, all of them or those `keep` keeps by index: as values, as the bytes they were written in once, or both;
   * `runs`, when given, are theirs in row order (their start times are kept).
   */
  take(
    batch: { rows?: readonly (readonly unknown[])[]; written?: WrittenRows; runs?: readonly { startedAt: number }[] },
    keep?: (index: number) => boolean,
  ): void;
  done(): JsonRows;
}

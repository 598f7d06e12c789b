/**
 * Many rows as JSON in UTF-8 bytes: `prefix`, the rows' JSON separated by commas, `suffix`. For a queued batch and an
 * insert's rows. One JSON.stringify of a thousand rows makes a string of parts V8 must then flatten, and a Buffer made
 * from it measures its UTF-8 length in a pass of its own: 2–3.5 ms for a batch of 1,000 API results on this machine.
 * A row at a time, written where the last one ended, takes about 1 ms (bench/README.md, "Ingest: where the main
 * thread's time goes").
 */
export function jsonRowsBytes(rows: readonly unknown[], prefix = '', suffix = ''): Buffer {
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
    // As in an array: what JSON has no form for is null.
    put(i === 0 ? first : (JSON.stringify(rows[i]) ?? 'null'));
  }
  put(suffix);
  // Far more room than text (a guess too long, or the last doubling): the bytes alone, not the room, are kept.
  return buf.length > 1024 * 1024 && buf.length > at * 2 ? Buffer.from(buf.subarray(0, at)) : buf.subarray(0, at);
}

const FIRST_ROOM = 8 * 1024 * 1024;

/** `value` as JSON in UTF-8 bytes, its `rows` (a long array) written a row at a time (jsonRowsBytes). */
export function jsonWithRowsBytes<T extends { rows?: unknown }>(value: T): Buffer {
  const { rows, ...rest } = value;
  if (!Array.isArray(rows)) return Buffer.from(JSON.stringify(value), 'utf8');
  const head = JSON.stringify(rest);
  return jsonRowsBytes(rows, `${head.slice(0, -1)}${head === '{}' ? '' : ','}"rows":[`, ']}');
}

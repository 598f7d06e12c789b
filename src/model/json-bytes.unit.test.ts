import { describe, expect, it } from 'vitest';
import { jsonRowsBytes, jsonWithRowsBytes } from './json-bytes.js';

describe('jsonRowsBytes', () => {
  const rows = [['a', 1, null, true, '{"timings":{"dns":8}}'], ['é€😀 and a "quote"\n', 2.5, false, undefined], []];
  it('writes the rows as one JSON array without its brackets would read, with prefix and suffix', () => {
    expect(jsonRowsBytes(rows).toString('utf8')).toBe(JSON.stringify(rows).slice(1, -1));
    expect(JSON.parse(jsonRowsBytes(rows, '[', ']').toString('utf8'))).toEqual(JSON.parse(JSON.stringify(rows)));
    expect(jsonRowsBytes([]).length).toBe(0);
  });

  it('grows past its first guess: long rows, mostly multi-byte text', () => {
    const long = Array.from({ length: 50 }, (_, i) => ['€'.repeat(2_000 + i), 'x'.repeat(5_000)]);
    const bytes = jsonRowsBytes(long, '[', ']');
    expect(bytes.equals(Buffer.from(JSON.stringify(long), 'utf8'))).toBe(true);
  });

  it('keeps no more than its bytes when the first row is far longer than the rest', () => {
    const rows = [['x'.repeat(64 * 1024)], ...Array.from({ length: 20_000 }, () => ['y'])];
    const bytes = jsonRowsBytes(rows);
    expect(bytes.equals(Buffer.from(JSON.stringify(rows).slice(1, -1)))).toBe(true);
    expect(bytes.buffer.byteLength).toBeLessThan(2 * bytes.length + 64 * 1024);
  });

  it('gives an object with rows the JSON JSON.stringify gives (rows last), whatever else it holds', () => {
    for (const value of [{ v: 2, batchId: 'b', columns: ['a', 'b'], rows, spans: { x: [1, 2] } }, { rows }, { rows: 'not rows', v: 1 }, { batchId: 'only' }]) {
      expect(JSON.parse(jsonWithRowsBytes(value).toString('utf8')), JSON.stringify(value)).toEqual(JSON.parse(JSON.stringify(value)));
    }
  });
});

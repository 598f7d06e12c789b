import { describe, expect, it } from 'vitest';
import { JsonRows, jsonRowsBytes, jsonWithRowsBytes, type RowPlaces } from './json-bytes.js';

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

describe('JsonRows', () => {
  const batchA = [
    ['a', 1, null, true, '{"x":"é€😀"}'],
    ['b', 2.5, false, 'quote " and \n'],
  ];
  const batchB = [['c', 3, null, false, ''], [], ['d', -1, null, true, 'x']];
  const written = (rows: unknown[][]) => {
    const where: RowPlaces = { starts: [], ends: [] };
    return { bytes: jsonWithRowsBytes({ v: 2, rows }, where), ...where };
  };

  it('writes the rows it copies, with the columns added, as encoding the extended rows would', () => {
    const collect = JsonRows.collect();
    collect.take({ rows: batchA, written: written(batchA) });
    collect.take({ rows: batchB, written: written(batchB) }, (i) => i !== 2);
    // A batch read back from Redis: no bytes kept, its rows encoded when the insert asks.
    const batchC = [['e', 'ü “x”', null], [], ['f', Number.NaN, undefined]];
    collect.take({ rows: batchC }, (i) => i !== 0);
    collect.take({ rows: batchC.slice(0, 1) });
    // A batch its process held as bytes alone: its values read back only when asked for.
    const batchD = [
      ['g', 4, true, 'ø'],
      ['h', 5, false, ''],
    ];
    collect.take({ written: written(batchD) });
    const all = collect.done();
    const rows = all.withColumn((i) => i % 2 === 0).withColumn((i) => (all.row(i).length ? `late ${String(all.row(i)[0])}` : ''));
    const expected = [...batchA, batchB[0]!, batchB[1]!, batchC[1]!, batchC[2]!, batchC[0]!, ...batchD].map((row, i) => [
      ...row,
      i % 2 === 0,
      row.length ? `late ${String(row[0])}` : '',
    ]);
    expect(rows.length).toBe(9);
    expect(rows.bytes().toString('utf8')).toBe(jsonRowsBytes(expected).toString('utf8'));
    expect(rows.arrays()).toEqual(expected);
    expect(rows.row(8)).toEqual(batchD[1]);
  });

  it("gives each row's start from the runs taken with it, else from its started_at value", () => {
    const rows = [
      ['r1', '2026-11-30 10:00:00.000'],
      ['r2', '2026-11-30 10:00:01.500'],
    ];
    const collect = JsonRows.collect();
    // Runs whose times differ from the rows' show which was read.
    collect.take({ written: written(rows), runs: [{ startedAt: 1 }, { startedAt: 2 }] }, (i) => i === 1);
    collect.take({ rows });
    const all = collect.done();
    expect([0, 1, 2].map((i) => all.startedAtMs(i, 1))).toEqual([2, Date.UTC(2026, 10, 30, 10), Date.UTC(2026, 10, 30, 10, 0, 1, 500)]);
  });

  it('copies rows as they are without added columns, and writes nothing for none', () => {
    const collect = JsonRows.collect();
    collect.take({ rows: batchA, written: written(batchA) });
    expect(collect.done().bytes().equals(jsonRowsBytes(batchA))).toBe(true);
    const none = JsonRows.collect();
    none.take({ written: written(batchA) }, () => false);
    expect(none.done().bytes().length).toBe(0);
  });
});

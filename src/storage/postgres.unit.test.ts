import { describe, expect, it } from 'vitest';
import { insertSlices } from './postgres.js';

describe('insertSlices', () => {
  it('cuts a multi-row insert so no statement carries more than 60,000 bind parameters, keeping the rows in order', () => {
    // The state of 5,000 checks: 16 columns a row, 80,000 parameters in one statement (Postgres refuses past 65,535).
    const rows = Array.from({ length: 5000 }, (_, i) => Object.fromEntries(Array.from({ length: 16 }, (_, c) => [`c${c}`, i])));
    const slices = insertSlices(rows);
    expect(slices.map((s) => s.length)).toEqual([3750, 1250]);
    for (const slice of slices) expect(slice.length * 16).toBeLessThanOrEqual(60_000);
    expect(slices.flat()).toEqual(rows);
    expect(insertSlices([{ a: 1 }, { a: 2 }])).toEqual([[{ a: 1 }, { a: 2 }]]);
    expect(insertSlices([])).toEqual([]);
  });
});

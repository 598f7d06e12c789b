import { describe, expect, it } from 'vitest';
import { groupBy } from './collections.js';

describe('groupBy', () => {
  it('groups items by key in their order, optionally mapping each to a value', () => {
    const rows = [
      { account: 'a', id: 1 },
      { account: 'b', id: 2 },
      { account: 'a', id: 3 },
    ];
    expect([...groupBy(rows, (r) => r.account)]).toEqual([
      ['a', [rows[0], rows[2]]],
      ['b', [rows[1]]],
    ]);
    expect(
      groupBy(
        rows,
        (r) => r.account,
        (r) => r.id,
      ).get('a'),
    ).toEqual([1, 3]);
    expect(groupBy([], (r: { account: string }) => r.account).size).toBe(0);
  });
});

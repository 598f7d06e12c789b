import { describe, expect, it } from 'vitest';
import { groupBy, overlay } from './collections.js';

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

describe('overlay', () => {
  it('is { ...base, ...fields }: own enumerable keys, in their order, a field winning over the base', () => {
    const proto = { inherited: 1 };
    const base = Object.assign(Object.create(proto), { a: 1, b: 2, c: { deep: true } });
    Object.defineProperty(base, 'hidden', { value: 3, enumerable: false });
    const out = overlay(base, { b: 20, d: undefined });
    expect(out).toEqual({ ...base, ...{ b: 20, d: undefined } });
    expect(Object.keys(out)).toEqual(['a', 'b', 'c', 'd']);
    expect(Object.hasOwn(out, 'd')).toBe(true);
    expect('inherited' in out).toBe(false);
    expect(out.c).toBe(base.c);
    expect(base.b).toBe(2);
  });

  it('keeps a __proto__ key as an own property, as a spread does, and never changes the prototype of the copy', () => {
    const parsed = JSON.parse('{"__proto__": {"activated": true}, "name": "x"}') as Record<string, unknown>;
    const out = overlay(parsed, { muted: false }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.activated).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ activated: true });
    expect(Object.keys(out)).toEqual(Object.keys({ ...parsed, muted: false }));
  });
});

/**
 * Items grouped by a key, in their order, each group's values in a list grown in place (what `Map.groupBy` does;
 * Node 20 has none). Spreading a group's list into a new one for each item costs a copy of the group per item: for
 * a run batch of 1,000 results of one account, half a million copies.
 */
export function groupBy<T, K, V = T>(items: Iterable<T>, key: (item: T) => K, value?: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const k = key(item);
    const v = value ? value(item) : (item as unknown as V);
    const list = groups.get(k);
    if (list) list.push(v);
    else groups.set(k, [v]);
  }
  return groups;
}

/**
 * `{ ...base, ...fields }` (own enumerable string keys; a later key wins), made so that Node 20 stays on its fast
 * path: there, an object made by a spread and then given more properties (`{ ...a, b: 1 }`, `{ ...a, ...b }`) costs
 * about 2 µs a property added (15–30 µs for a result item with ten fields), against a few hundred nanoseconds for
 * properties set one by one on a new object (docs/performance.md, "Spreads on Node 20"). A `__proto__` key stays an
 * own property, as a spread keeps it: the copy's prototype is never changed by what it copies.
 */
export function overlay<B extends object, F extends object>(base: B, fields: F): Omit<B, keyof F> & F {
  const out: Record<string, unknown> = {};
  copyInto(out, base as Record<string, unknown>);
  copyInto(out, fields as Record<string, unknown>);
  return out as Omit<B, keyof F> & F;
}

function copyInto(out: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const key in from) {
    if (!Object.hasOwn(from, key)) continue;
    if (key === '__proto__') Object.defineProperty(out, key, { value: from[key], writable: true, enumerable: true, configurable: true });
    else out[key] = from[key];
  }
}

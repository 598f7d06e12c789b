import { describe, expect, it } from 'vitest';
import type { ResultRow } from '../model/results.js';
import { GroupCommit, tokenOf } from './group-commit.js';

type Batch = { id: string; rows: ResultRow[] };
const rows = (n: number, tag: string): ResultRow[] => Array.from({ length: n }, (_, i) => [`${tag}-${i}`]);

/** Writes as the worker does: the group's rows in one insert, token from the batch ids. */
function recorder(opts: { failOn?: number; delayMs?: number } = {}) {
  const inserts: { rows: ResultRow[]; token: string }[] = [];
  const write = async (group: Batch[]) => {
    inserts.push({ rows: group.flatMap((b) => b.rows), token: tokenOf(group.map((b) => b.id)) });
    await new Promise((resolve) => setTimeout(resolve, opts.delayMs ?? 5));
    if (inserts.length === opts.failOn) throw new Error('insert refused');
  };
  return { inserts, write };
}

describe('group commit', () => {
  it('inserts a lone batch at once with its own id as the token', async () => {
    const { inserts, write } = recorder();
    await new GroupCommit<Batch>(write, (b) => b.rows.length, 100).add({ id: 'batch-a', rows: rows(3, 'a') });
    expect(inserts).toEqual([{ rows: rows(3, 'a'), token: 'batch-a' }]);
  });

  it('batches arriving while an insert runs go in together, in arrival order, up to the row limit', async () => {
    const { inserts, write } = recorder({ delayMs: 20 });
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 5);
    const first = c.add({ id: 'a', rows: rows(2, 'a') });
    await new Promise((r) => setTimeout(r, 5)); // the first insert is running
    const rest = [c.add({ id: 'b', rows: rows(2, 'b') }), c.add({ id: 'c', rows: rows(2, 'c') }), c.add({ id: 'd', rows: rows(4, 'd') })];
    await Promise.all([first, ...rest]);
    expect(inserts.map((i) => i.rows.map((r) => r[0]))).toEqual([
      ['a-0', 'a-1'],
      ['b-0', 'b-1', 'c-0', 'c-1'],
      ['d-0', 'd-1', 'd-2', 'd-3'],
    ]);
    expect(inserts[1].token).toBe(tokenOf(['c', 'b']));
    expect(inserts[1].token).toMatch(/^group-[0-9a-f]{64}$/);
    expect(inserts[2].token).toBe('d');
  });

  it('a batch larger than the limit still goes in (alone)', async () => {
    const { inserts, write } = recorder();
    await new GroupCommit<Batch>(write, (b) => b.rows.length, 2).add({ id: 'big', rows: rows(7, 'big') });
    expect(inserts).toHaveLength(1);
    expect(inserts[0].rows).toHaveLength(7);
  });

  it('a failed insert fails every batch in it and only those; the next insert goes on', async () => {
    const { inserts, write } = recorder({ failOn: 2, delayMs: 10 });
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 100);
    const a = c.add({ id: 'a', rows: rows(1, 'a') });
    await new Promise((r) => setTimeout(r, 2));
    const b = c.add({ id: 'b', rows: rows(1, 'b') });
    const d = c.add({ id: 'd', rows: rows(1, 'd') });
    await expect(a).resolves.toBeUndefined();
    await expect(b).rejects.toThrow('insert refused');
    await expect(d).rejects.toThrow('insert refused');
    await expect(c.add({ id: 'e', rows: rows(1, 'e') })).resolves.toBeUndefined();
    expect(inserts.map((i) => i.token)).toEqual(['a', tokenOf(['b', 'd']), 'e']);
  });

  it('the same set of batches always gets the same token', () => {
    expect(tokenOf(['x', 'y', 'z'])).toBe(tokenOf(['z', 'x', 'y']));
    expect(tokenOf(['x', 'y'])).not.toBe(tokenOf(['x', 'z']));
  });
  it('with a linger, batches handed over within it go in one insert; a full group does not wait', async () => {
    const { inserts, write } = recorder();
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 6, 60_000);
    const first = [c.add({ id: 'a', rows: rows(2, 'a') })];
    await new Promise((r) => setTimeout(r, 20));
    expect(inserts).toEqual([]); // lingering: nothing written yet
    first.push(c.add({ id: 'b', rows: rows(2, 'b') }), c.add({ id: 'c', rows: rows(2, 'c') }));
    await Promise.all(first); // six rows: written at once, not after the minute
    expect(inserts.map((i) => i.rows.length)).toEqual([6]);
  });

  it('a lingering group is written when the linger ends', async () => {
    const { inserts, write } = recorder();
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 100, 50);
    const both = Promise.all([c.add({ id: 'a', rows: rows(1, 'a') }), c.add({ id: 'b', rows: rows(1, 'b') })]);
    await new Promise((r) => setImmediate(r));
    expect(inserts).toEqual([]);
    await both;
    expect(inserts.map((i) => i.rows.map((r) => r[0]))).toEqual([['a-0', 'b-0']]);
    await c.add({ id: 'c', rows: rows(1, 'c') }); // idle again: lingers again, alone
    expect(inserts.map((i) => i.token)).toEqual([tokenOf(['a', 'b']), 'c']);
  });

  it('an item someone waits for (soon) is written at once, with the items lingering before it', async () => {
    const { inserts, write } = recorder();
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 100, 60_000);
    const lingering = c.add({ id: 'a', rows: rows(1, 'a') });
    await new Promise((r) => setTimeout(r, 20));
    expect(inserts).toEqual([]);
    await Promise.all([lingering, c.add({ id: 'b', rows: rows(1, 'b') }, true)]);
    expect(inserts.map((i) => i.rows.map((r) => r[0]))).toEqual([['a-0', 'b-0']]);
    await c.add({ id: 'c', rows: rows(1, 'c') }, true); // idle: no linger at all
    expect(inserts.map((i) => i.token)).toEqual([tokenOf(['a', 'b']), 'c']);
  });

  it('hurried (the process is stopping), a lingering group is written at once and nothing lingers after', async () => {
    const { inserts, write } = recorder();
    const c = new GroupCommit<Batch>(write, (b) => b.rows.length, 100, 60_000);
    const lingering = c.add({ id: 'a', rows: rows(1, 'a') });
    await new Promise((r) => setTimeout(r, 20));
    expect(inserts).toEqual([]);
    c.hurry();
    await lingering;
    await c.add({ id: 'b', rows: rows(1, 'b') });
    expect(inserts.map((i) => i.token)).toEqual(['a', 'b']);
  });
});

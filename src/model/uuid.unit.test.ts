import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { randomUuid, uuidText } from './uuid.js';

describe('uuids', () => {
  it('randomUuid answers version 4 uuids, none twice across many pools of random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = randomUuid();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(100_000);
  });

  it('randomUuid spreads its random digits evenly (no position stuck, each hex digit about as often)', () => {
    const counts = Array.from({ length: 36 }, () => new Map<string, number>());
    for (let i = 0; i < 32_000; i++) {
      const id = randomUuid();
      for (let p = 0; p < 36; p++) counts[p].set(id[p], (counts[p].get(id[p]) ?? 0) + 1);
    }
    for (const p of [0, 7, 9, 15, 20, 24, 35]) {
      expect(counts[p].size).toBe(16);
      for (const n of counts[p].values()) expect(Math.abs(n - 2000)).toBeLessThan(300);
    }
  });

  it('uuidText writes the bytes as a hex string cut 8-4-4-4-12, with the version and variant set', () => {
    const name = 'check|42|eu-west-1';
    const h = createHash('sha256').update(name).digest();
    const copy = Buffer.from(h);
    copy[6] = (copy[6] & 0x0f) | 0x50;
    copy[8] = (copy[8] & 0x3f) | 0x80;
    const x = copy.subarray(0, 16).toString('hex');
    expect(uuidText(h, 0, 5)).toBe(`${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`);
    expect(uuidText(Buffer.alloc(20, 0xff), 2, 4)).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(uuidText(Buffer.alloc(16), 0, 4)).toBe('00000000-0000-4000-8000-000000000000');
  });
});

import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** A seeded source of the few distributions the generator needs; the same seed gives the same stream. */
export class Random {
  private readonly rng;
  private spare: number | undefined;

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed | 0);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return uniformFloat64(this.rng);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, max: number): number {
    return Math.floor(this.between(min, max + 1));
  }

  /** Standard normal (Box-Muller, keeping the second value for the next call). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const u = 1 - this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median and shape (sigma of the underlying normal). */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** A v4-shaped UUID drawn from this stream (deterministic, unlike crypto.randomUUID). */
  uuid(): string {
    const hex = (n: number) =>
      Math.floor(this.next() * 16 ** n)
        .toString(16)
        .padStart(n, '0');
    const variant = (8 + Math.floor(this.next() * 4)).toString(16);
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
  }
}

/** Mixes a seed with an index so each check gets its own independent stream. */
export function deriveSeed(seed: number, index: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (index + 0x85ebca6b), 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h | 0;
}

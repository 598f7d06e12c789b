import { describe, expect, it } from 'vitest';
import { figure, percentage } from './figures.js';

describe('figures', () => {
  it('rounds measurements to 2 decimals and percentages to 4, without float noise', () => {
    expect(figure(29.705399999999997)).toBe(29.71);
    expect(figure(1.005)).toBe(1.01);
    expect(figure(-2.345)).toBe(-2.35);
    expect(figure(300)).toBe(300);
    expect(figure('12.3456')).toBe(12.35);
    expect(percentage(99.995)).toBe(99.995);
    expect(percentage((100 * 19_999) / 20_000)).toBe(99.995);
    expect(percentage(100 * (2 / 3))).toBe(66.6667);
  });

  it('keeps no value as no value, never 0', () => {
    for (const v of [null, undefined, NaN, Infinity, -Infinity, '']) {
      expect(figure(v as number)).toBeNull();
      expect(percentage(v as number)).toBeNull();
    }
    expect(figure(0)).toBe(0);
    expect(Object.is(figure(-0.001), -0)).toBe(false);
  });
});

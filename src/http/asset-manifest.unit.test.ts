import { describe, expect, it } from 'vitest';
import { assetManifest, globMatcher } from './asset-manifest.js';

describe('asset name globs', () => {
  it('match whole names case-insensitively with * and ?', () => {
    const m = globMatcher('shot-?.PNG');
    expect(m('Shot-1.png')).toBe(true);
    expect(m('shot-12.png')).toBe(false);
    expect(globMatcher('*.zip')('trace.zip')).toBe(true);
    expect(globMatcher('*.zip')('trace.zip.png')).toBe(false);
    expect(globMatcher('a*b*c')('axxbyyc')).toBe(true);
    expect(globMatcher('a*b*c')('axxbyy')).toBe(false);
    expect(globMatcher('*')('')).toBe(true);
    expect(globMatcher('')('x')).toBe(false);
    // Regular-expression characters are literal.
    expect(globMatcher('a.b')('axb')).toBe(false);
    expect(globMatcher('(x)+')('(x)+')).toBe(true);
  });

  it('a pattern of many stars against a long name that almost matches answers at once (no backtracking blow-up)', () => {
    // `^.*a.*a…b$` as a regular expression takes exponential time on a name of only `a`s.
    const pattern = `${'*a'.repeat(49)}b`;
    expect(pattern.length).toBeLessThanOrEqual(100);
    const name = 'a'.repeat(255);
    const manifest = assetManifest(
      [{ type: 'screenshot', name, contentType: 'image/png', key: 'k', size: 1 }],
      { name: pattern },
      { url: (n) => `/x/${n}`, source: { type: 'check-result', checkName: 'c', checkType: 'BROWSER', resultId: 'r' } },
    );
    expect(manifest.assets).toEqual([]);
    expect(globMatcher(pattern)(`${name}b`)).toBe(true);
  });
});

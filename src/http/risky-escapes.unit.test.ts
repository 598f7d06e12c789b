import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasRiskyEscape } from './risky-escapes.js';

describe('hasRiskyEscape', () => {
  it('finds a whole \\u0000 or \\uD… escape anywhere in the text, and nothing else', () => {
    // Texts over the characters escapes are made of.
    const text = fc.string({ unit: fc.constantFrom('\\', 'u', '0', 'd', 'D', 'a', '"', 'x'), maxLength: 40 });
    fc.assert(
      fc.property(text, (t) => {
        expect(hasRiskyEscape(Buffer.from(t, 'latin1'))).toBe(/\\u(?:0000|[dD][\s\S]{3})/.test(t));
      }),
      { numRuns: 20_000 },
    );
  });

  it('finds none in a JSON text whose strings have no NUL and no lone surrogate, and one in every text that has them', () => {
    const strings = fc.string({
      unit: fc.oneof(fc.constantFrom('\u0000', '\ud800', '\udfff', '\ud83d\ude00', '"', '\\', 'é'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    });
    const value = fc.dictionary(strings, fc.oneof(strings, fc.array(strings), fc.integer()));
    const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();
    fc.assert(
      fc.property(value, (v) => {
        const json = JSON.stringify(v);
        const hasBad = Object.entries(v).some(([k, x]) => bad(k) || (typeof x === 'string' && bad(x)) || (Array.isArray(x) && x.some(bad)));
        const found = hasRiskyEscape(Buffer.from(json, 'utf8'));
        // JSON.stringify escapes U+0000 and lone surrogates only: found exactly when the value has one, but for a
        // backslash of the text written before a `u` (`\\u0000`), which the search counts and the walk then clears.
        if (hasBad) expect(found).toBe(true);
        else expect(found).toBe(/\\\\u(?:0000|[dD][\s\S]{3})/.test(json));
      }),
      { numRuns: 5_000 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RiskyEscapes, Utf8Check } from './utf8-check.js';

const fatal = (bytes: Uint8Array) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** `bytes` fed to `sink` in the chunks `cuts` makes (positions in the bytes). */
const feedIn = <T extends { feed(chunk: Buffer): void }>(sink: T, bytes: Uint8Array, cuts: number[]): T => {
  let from = 0;
  for (const at of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    sink.feed(Buffer.from(bytes.subarray(from, at)));
    from = at;
  }
  sink.feed(Buffer.from(bytes.subarray(from)));
  return sink;
};
const checked = (bytes: Uint8Array, cuts: number[]) => feedIn(new Utf8Check(), bytes, cuts).end();

describe('Utf8Check', () => {
  it('takes valid text cut anywhere, a character split between chunks included', () => {
    const text = Buffer.from('a ü € 😀 \ufffd z', 'utf8');
    for (let at = 0; at <= text.length; at++) expect(checked(text, [at]), `cut at ${at}`).toBe(true);
    for (let a = 0; a <= text.length; a++) for (let b = a; b <= text.length; b++) expect(checked(text, [a, b])).toBe(true);
  });

  it.each([
    ['a raw 0xff byte', [0x61, 0xff, 0x62]],
    ['an overlong "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['a body that ends inside a character', [0x61, 0xe2, 0x82]],
    ['a lead byte followed by ASCII', [0xe2, 0x41, 0x42]],
    ['a continuation byte alone', [0x80]],
  ])('refuses %s, however it is cut', (_what, bytes) => {
    const all = Uint8Array.from(bytes);
    for (let at = 0; at <= all.length; at++) expect(checked(all, [at]), `cut at ${at}`).toBe(false);
  });

  it('takes any well-formed text in any chunks', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) =>
        checked(Buffer.from(text, 'utf8'), cuts),
      ),
      { numRuns: 5_000 },
    );
  });

  it('agrees with a fatal TextDecoder on any bytes in any chunks', () => {
    // Bytes drawn mostly from the ranges that make and break multi-byte characters.
    const byte = fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0x80, max: 0xbf }), fc.integer({ min: 0xc0, max: 0xff }));
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 24 }), fc.array(fc.nat(), { maxLength: 5 }), (bytes, cuts) => {
        const all = Uint8Array.from(bytes);
        return checked(all, cuts) === fatal(all);
      }),
      { numRuns: 20_000 },
    );
  });
});

const escapesFound = (bytes: Uint8Array, cuts: number[]) => feedIn(new RiskyEscapes(), bytes, cuts).found();

describe('RiskyEscapes', () => {
  it('finds a whole \\u0000 or \\uD… escape wherever chunks cut the text, and nothing else', () => {
    // Texts over the characters escapes are made of, cut in up to four places (chunks of one byte included).
    const text = fc.string({ unit: fc.constantFrom('\\', 'u', '0', 'd', 'D', 'a', '"', 'x'), maxLength: 40 });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 4 }), (t, cuts) => {
        expect(escapesFound(Buffer.from(t, 'latin1'), cuts)).toBe(/\\u(?:0000|[dD][\s\S]{3})/.test(t));
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
      fc.property(value, fc.array(fc.nat(), { maxLength: 3 }), (v, cuts) => {
        const json = JSON.stringify(v);
        const hasBad = Object.entries(v).some(([k, x]) => bad(k) || (typeof x === 'string' && bad(x)) || (Array.isArray(x) && x.some(bad)));
        const found = escapesFound(Buffer.from(json, 'utf8'), cuts);
        // JSON.stringify escapes U+0000 and lone surrogates only: found exactly when the value has one, but for a
        // backslash of the text written before a `u` (`\\u0000`), which the search counts and the walk then clears.
        if (hasBad) expect(found).toBe(true);
        else expect(found).toBe(/\\\\u(?:0000|[dD][\s\S]{3})/.test(json));
      }),
      { numRuns: 5_000 },
    );
  });
});

import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { findBadText, parseStrings } from './validation.js';

describe('parseStrings', () => {
  const schema = Type.Object({
    n: Type.Integer(),
    x: Type.Number(),
    b: Type.Boolean(),
    s: Type.String(),
    list: Type.Array(Type.String()),
    ints: Type.Array(Type.Integer()),
  });

  it('converts values written exactly in their type', () => {
    expect(parseStrings(schema, { n: '-12', x: '1.5', b: 'false', s: '007', list: ['a,b', 'c'], ints: '1,2' })).toEqual({
      n: -12,
      x: 1.5,
      b: false,
      s: '007',
      list: ['a', 'b', 'c'],
      ints: [1, 2],
    });
  });

  it.each(['Infinity', '-Infinity', 'NaN', ' 5', '5 ', '+5', '1e3', '0x10', '5.0', '', '99999999999999999'])(
    'leaves the integer text %j a string, for validation to refuse',
    (text) => {
      expect(parseStrings(schema, { n: text }).n).toBe(text);
    },
  );

  it('leaves booleans other than true/false as strings', () => {
    expect(parseStrings(schema, { b: '1' }).b).toBe('1');
    expect(parseStrings(schema, { b: 'True' }).b).toBe('True');
  });
});

describe('findBadText', () => {
  it('names every NUL and unpaired surrogate by its path, keys included', () => {
    const errors = findBadText({ a: 'ok', b: ['x\u0000'], c: { d: 'a\ud800' }, 'e\u0000': 1, f: '😀' }, 'body');
    expect(errors).toEqual([
      { field: 'body.b[0]', rule: 'characters', message: 'must not contain the NUL character (U+0000)' },
      { field: 'body.c.d', rule: 'unicode', message: 'must be well-formed Unicode (it has an unpaired surrogate)' },
      { field: 'body.e\\u0000', rule: 'characters', message: 'is not an allowed property name' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { evaluate } from './assertions.js';

describe('assertions', () => {
  it('take a numeric target as the anchor sends it (`target: 200`), compared as its text', () => {
    const [status, flag, text] = evaluate(
      [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: 200 },
        { source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 1 },
        { source: 'TEXT_BODY', comparison: 'EQUALS', target: 42 },
      ],
      (a) => (a.source === 'STATUS_CODE' ? [200] : a.source === 'JSON_BODY' ? [true] : ['42']),
    );
    expect(status!.error).toBeUndefined();
    // A boolean against 1 is a plain mismatch, not a runner error.
    expect(flag!.error).toMatch(/expected true to equal "1"|equal/);
    expect(text!.error).toBeUndefined();
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretUnreadable } from './secret-box.js';

describe('the secret box', () => {
  const key = randomBytes(32);

  it('seals a value so that only its key opens it, with a new IV every time', () => {
    const box = new SecretBox(key);
    const a = box.seal('pd-routing-key-123');
    const b = box.seal('pd-routing-key-123');
    expect(a).not.toBe(b);
    expect(a).not.toContain('pd-routing-key');
    expect(a).toMatch(new RegExp(`^enc1\\.${box.currentId}\\.`));
    expect(box.open(a)).toBe('pd-routing-key-123');
    expect(() => new SecretBox(randomBytes(32)).open(a)).toThrow(SecretUnreadable);
  });

  it('refuses a sealed value that was changed', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('secret');
    const body = Buffer.from(sealed.split('.')[2]!, 'base64url');
    body[body.length - 1]! ^= 1;
    expect(() => box.open(`enc1.${box.currentId}.${body.toString('base64url')}`)).toThrow(/does not open/);
  });

  it('answers a value stored before sealing as it is, and reseals old and plain values under the current key', () => {
    const old = new SecretBox(key);
    const sealedOld = old.seal('token');
    const next = new SecretBox(randomBytes(32), [key]);
    expect(next.open('plain text')).toBe('plain text');
    expect(next.open(sealedOld)).toBe('token');
    const moved = next.reseal(sealedOld);
    expect(SecretBox.sealedWith(moved)).toBe(next.currentId);
    expect(next.open(moved)).toBe('token');
    expect(next.reseal(moved)).toBe(moved);
    expect(next.open(next.reseal('plain'))).toBe('plain');
    expect(next.opens('enc1.00000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { ForgetClock } from './announcements.js';

describe('ForgetClock', () => {
  it('keeps a read only when its account (or everything) was not forgotten since it began', () => {
    const clock = new ForgetClock();
    const a = clock.mark();
    expect(clock.keeps('acct-1', a)).toBe(true);
    expect(clock.forget('acct-1')).toBe(false);
    expect(clock.keeps('acct-1', a)).toBe(false);
    expect(clock.keeps('acct-2', a)).toBe(true);
    const b = clock.mark();
    expect(clock.keeps('acct-1', b)).toBe(true);
    expect(clock.forget()).toBe(true);
    expect(clock.keeps('acct-2', b)).toBe(false);
    expect(clock.keeps('acct-2', clock.mark())).toBe(true);
  });

  it('forgets everything once it would remember more accounts than its bound', () => {
    const clock = new ForgetClock(2);
    const mark = clock.mark();
    expect(clock.forget('a')).toBe(false);
    expect(clock.forget('b')).toBe(false);
    expect(clock.keeps('c', mark)).toBe(true);
    expect(clock.forget('c')).toBe(true);
    expect(clock.keeps('z', mark)).toBe(false);
  });
});

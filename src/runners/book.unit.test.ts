import { describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { SkipLog, TOO_LATE } from './book.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runs too late to make', () => {
  it('are logged as a count per location: the first of a quiet spell at once, then a line per location per interval', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = new SkipLog(createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) }), TOO_LATE, 100);
    log.add('eu-west-1', 16_400, 'check-1');
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'runs too late to make; skipped', location: 'eu-west-1', runs: 1, checkId: 'check-1', lateSeconds: 16 }),
    ]);
    for (let i = 0; i < 500; i++) log.add(i % 5 ? 'eu-west-1' : 'us-east-1', 15_000 + i * 10, `check-${i}`);
    expect(lines).toHaveLength(1);
    await sleep(150);
    expect(lines.slice(1).map(({ location, runs, lateSeconds, checkId }) => ({ location, runs, lateSeconds, checkId }))).toEqual([
      { location: 'us-east-1', runs: 100, lateSeconds: [15, 20], checkId: undefined },
      { location: 'eu-west-1', runs: 400, lateSeconds: [15, 20], checkId: undefined },
    ]);
    // Nothing more: no line, and the next skip is a quiet spell's first, logged at once.
    await sleep(400);
    expect(lines).toHaveLength(3);
    log.add('us-east-1', 30_000, 'check-x');
    expect(lines[3]).toMatchObject({ location: 'us-east-1', runs: 1, checkId: 'check-x', lateSeconds: 30 });
  });

  it('say what their owner gives: the message and the name of the lateness field', () => {
    const lines: Record<string, unknown>[] = [];
    const log = new SkipLog(
      createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) }),
      { message: 'runs waited too long for an agent; dropped', seconds: 'waitedSeconds' },
      100,
    );
    log.add('dc-1', 125_000, 'check-a');
    log.add('dc-1', 130_000, 'check-b');
    log.add('dc-1', 140_000, 'check-c');
    log.flush();
    expect(lines.map(({ msg, location, runs, waitedSeconds, lateSeconds }) => ({ msg, location, runs, waitedSeconds, lateSeconds }))).toEqual([
      { msg: 'runs waited too long for an agent; dropped', location: 'dc-1', runs: 1, waitedSeconds: 125, lateSeconds: undefined },
      { msg: 'runs waited too long for an agent; dropped', location: 'dc-1', runs: 2, waitedSeconds: [130, 140], lateSeconds: undefined },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { StoreError, storeCall } from './errors.js';

describe('StoreError', () => {
  it('reads the code from either backend and from the message', () => {
    // chdb: a numeric clickhouseCode
    expect(StoreError.from(Object.assign(new Error('boom'), { clickhouseCode: 241 }), 'query').overBudget).toBe('memory');
    // @clickhouse/client: the code as text
    expect(StoreError.from(Object.assign(new Error('slow'), { code: '159' }), 'query').overBudget).toBe('time');
    // only in the message
    const e = StoreError.from(new Error('Code: 62. DB::Exception: Syntax error'), 'command');
    expect([e.code, e.operation, e.overBudget]).toEqual([62, 'command', undefined]);
    // a socket error's text code is not a ClickHouse code
    expect(StoreError.from(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), 'insert').code).toBeUndefined();
  });

  it('keeps the cause, says when the caller gave up, and is made once', async () => {
    const controller = new AbortController();
    controller.abort();
    const cause = new Error('aborted');
    const err = await storeCall('query', () => Promise.reject(cause), controller.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).cause).toBe(cause);
    expect((err as StoreError).aborted).toBe(true);
    expect(StoreError.from(err, 'insert')).toBe(err);
  });
});

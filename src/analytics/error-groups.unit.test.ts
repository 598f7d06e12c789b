import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESULT_DETAIL_KEYS } from '../model/results.js';

describe('the error-groups view', () => {
  it("reads the first error of every type's result object (a new type's key in CHECK_TYPE_FACTS needs a line there)", () => {
    const ddl = readFileSync(new URL('../../sql/clickhouse/0009_error_groups.sql', import.meta.url), 'utf8');
    const read = [...ddl.matchAll(/'(\w+CheckResult)', 'errors', 1, 'message'/g)].map((m) => m[1]);
    expect([...RESULT_DETAIL_KEYS].sort()).toEqual([...new Set(read)].sort());
  });
});

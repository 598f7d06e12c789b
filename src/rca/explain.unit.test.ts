import { describe, expect, it } from 'vitest';
import type { Evidence, RunView } from './evidence.js';
import { bodyDiff, explain } from './explain.js';

const run = (over: Partial<RunView>): RunView => ({
  id: 'r1',
  startedAt: '2026-11-29T10:00:00.000Z',
  location: 'eu-west-1',
  failed: true,
  error: 'x',
  ...over,
});
const evidence = (over: Partial<Evidence>): Evidence => ({
  check: { id: 'c1', name: 'Shop', type: 'API', url: 'https://shop.test/', host: 'shop.test' },
  group: { id: 'g1', message: 'x', firstSeen: '2026-11-29T10:00:00.000Z', lastSeen: '2026-11-29T10:05:00.000Z', occurrences: 3, kind: 'check' },
  failing: null,
  passing: null,
  locations: [],
  sequence: [],
  sameHost: [],
  sameError: [],
  changes: [],
  maintenance: [],
  links: [],
  ...over,
});

describe('the analysis rules', () => {
  it('reads how two JSON bodies differ by path, and text bodies by their first different line', () => {
    expect(bodyDiff('{"a":{"b":1},"c":2}', '{"a":{"b":2},"d":3}')).toEqual(['$.a.b: 1 → 2', '$.c is gone (was 2)', '$.d is new (3)']);
    expect(bodyDiff('one\ntwo', 'one\nthree')).toEqual(['from line 2: two → three']);
    expect(bodyDiff('same', 'same')).toEqual([]);
  });

  it('names the timing phase that grew, as a network cause when it is the connection', () => {
    const a = explain(
      evidence({
        failing: run({
          status: 200,
          timings: { dns: 2, tcp: 2400, firstByte: 30 },
          assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '1000', actual: 2432, error: 'slow' }],
        }),
        passing: run({ id: 'r0', failed: false, status: 200, timings: { dns: 2, tcp: 3, firstByte: 30 } }),
      }),
    );
    expect(a.classification).toBe('NETWORK ERROR');
    expect(a.rootCause).toContain('the TCP connect took 2400 ms against 3 ms');
  });

  it('names a private location with no agent online', () => {
    const a = explain(
      evidence({
        failing: run({ location: 'office', requestError: 'The run expired: no agent took it' }),
        locations: [{ location: 'office', runs: 4, failed: 4, private: true, agentsOnline: 0 }],
      }),
    );
    expect(a.evidence?.map((e) => e.description).join('\n')).toContain('The private location office had no agent online');
    expect(a.codeFix).toContain('Start an agent');
  });

  it('says maintenance was on, yet names the cause over it', () => {
    const a = explain(
      evidence({
        failing: run({ requestError: 'connect ECONNREFUSED 10.0.0.1:443' }),
        maintenance: [{ id: 7, name: 'DB upgrade', startsAt: '2026-11-29T09:00:00.000Z', endsAt: '2026-11-29T11:00:00.000Z' }],
      }),
    );
    expect(a.classification).toBe('INFRA ERROR');
    expect(a.rootCause).toContain('Nothing accepted the connection to shop.test');
    expect(a.rootCause).toContain('maintenance window was on');
  });

  it('names a failed status assertion when the status is no error (a redirect where a 200 was asked)', () => {
    const a = explain(
      evidence({
        failing: run({
          status: 301,
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', actual: 301, error: 'expected 301 to equal 200' }],
        }),
        passing: run({ id: 'r0', failed: false, status: 200, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', actual: 200 }] }),
      }),
    );
    expect(a.classification).toBe('APPLICATION ERROR');
    expect(a.rootCause).toContain('the actual value is 301; at the last passing run it was 200');
  });

  it('does not guess: no difference, no cause', () => {
    const same = { status: 200, body: '{}', headers: { 'content-type': 'application/json' } };
    const a = explain(evidence({ failing: run(same), passing: run({ ...same, id: 'r0', failed: false }) }));
    expect(a.classification).toBe('UNKNOWN');
    expect(a.codeFix).toBeNull();
    expect(a.rootCause).toMatch(/^The evidence does not show a cause/);
  });
});

import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  boundedForGeneration,
  changeCount,
  compileDocumentedSchema,
  fixtureIds,
  installChangeCounter,
  type Operation,
  operationsOf,
} from '../../test/support/openapi-fuzz.js';
import { rawRequest, requestHead } from '../../test/support/raw-http.js';
import { startTestService, type TestService } from '../../test/support/service.js';
import { setAccountRateLimit } from '../accounts/repository.js';
import { deploysSettled } from '../projects/deployments.js';

/**
 * Every operation of the service's own /openapi.json gets generated requests, valid (json-schema-faker, seeded
 * from fast-check) and hostile (fast-check arbitraries mutating them): never a 5xx, every status documented,
 * every JSON answer valid against its documented schema, and a refused request changes nothing.
 * FUZZ_RUNS (requests per operation, default 50) and FUZZ_SEED set the size and the stream.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 50);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

const hostileString = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\u202e', '😀'.repeat(300), 'Infinity', '-1', '1e309', '../../etc', "' OR 1=1 --", '{{7*7}}', ''),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 5000, maxLength: 70_000, unit: 'grapheme-ascii' }),
);
const hostileNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 0.1, -0, 4294967296),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((n) => Number(n)),
);
const hostileValue = fc.oneof(hostileString, hostileNumber, fc.jsonValue({ maxDepth: 3 }), fc.constant(null), fc.boolean());
/** JSON text the service must refuse whole: too deep, unparsable numbers, broken UTF-8. */
const hostileRawBody = fc.oneof(
  fc.integer({ min: 500, max: 5000 }).map((depth) => Buffer.from('['.repeat(depth) + ']'.repeat(depth))),
  fc.constantFrom('{"a":1e400}', '{"name":"x","name":"y"}', '{"a":', '[]', 'null', '"str"', '{}').map((t) => Buffer.from(t)),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')])),
);

type Mutation =
  | { kind: 'none' }
  | { kind: 'bodyValue'; pick: number; value: unknown }
  | { kind: 'bodyExtra'; name: string; value: unknown }
  | { kind: 'bodyDrop'; pick: number }
  | { kind: 'bodyRaw'; bytes: Buffer }
  | { kind: 'query'; pick: number; value: string }
  | { kind: 'path'; pick: number; value: string }
  | { kind: 'header'; name: 'x-service-account' | 'x-checkly-account' | 'idempotency-key' | 'content-type'; value: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({ kind: fc.constant('bodyValue' as const), pick: fc.nat(), value: hostileValue }),
  fc.record({
    kind: fc.constant('bodyExtra' as const),
    name: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'id')),
    value: hostileValue,
  }),
  fc.record({ kind: fc.constant('bodyDrop' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('bodyRaw' as const), bytes: hostileRawBody }),
  fc.record({ kind: fc.constant('query' as const), pick: fc.nat(), value: fc.oneof(hostileString, hostileNumber.map(String)) }),
  fc.record({ kind: fc.constant('path' as const), pick: fc.nat(), value: fc.oneof(hostileString, hostileNumber.map(String)) }),
  fc.record({
    kind: fc.constant('header' as const),
    name: fc.constantFrom('x-service-account' as const, 'x-checkly-account' as const, 'idempotency-key' as const, 'content-type' as const),
    value: fc.oneof(
      fc.string({ unit: 'grapheme-ascii', maxLength: 300 }),
      fc.constantFrom('application/json; charset=utf-16', 'text/plain', 'application/json'),
    ),
  }),
);

/** Every byte but the unreserved ones as %XX; a lone surrogate goes out as the bytes of U+FFFD, as a client's would. */
function percentEncode(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`))
    .join('');
}

/** Leaves of a JSON value, as paths; a mutation picks one by index. */
function leaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.length ? value.flatMap((v, i) => leaves(v, [...path, i])) : [path];
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length ? entries.flatMap(([k, v]) => leaves(v, [...path, k])) : [path];
  }
  return [path];
}

function setAt(root: unknown, path: (string | number)[], value: unknown, drop = false): unknown {
  if (!path.length) return drop ? undefined : value;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  const [head, ...rest] = path;
  if (!rest.length && drop) {
    if (Array.isArray(copy)) copy.splice(head as number, 1);
    else delete copy[head];
  } else {
    copy[head] = setAt(copy[head], rest, value, drop);
  }
  return copy;
}

describe('generated requests against every documented operation', () => {
  let svc: TestService;
  let operations: Operation[];
  let ids: Record<string, string[]>;
  let requests = 0;
  const statuses = new Map<number, number>();

  /** The change count after the last request: what the next request starts from. */
  let lastDigest = '';

  beforeAll(async () => {
    svc = await startTestService();
    await setAccountRateLimit(svc.deps.sql, svc.defaultAccountId, { points: 10_000_000, windowSeconds: 60 });
    const doc = (await svc.call('GET', '/openapi.json')).body;
    operations = operationsOf(doc);
    ids = await fixtureIds(svc);
    await installChangeCounter(svc);
    lastDigest = await changeCount(svc);
  }, 120_000);
  afterAll(async () => {
    // The counts CI reports for this suite.
    console.log(
      `fuzz: ${operations?.length ?? 0} operations, ${requests} requests (${RUNS} per operation, seed ${SEED}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    await svc?.stop();
  });

  it('the digest it compares sees a row change, and not a change undone', async () => {
    const before = await changeCount(svc);
    await svc.deps.sql`update variables set value = 'changed' where key = 'FUZZ'`;
    const changed = await changeCount(svc);
    expect(changed).not.toBe(before);
    await svc.deps.sql`update variables set value = 'x' where key = 'FUZZ'`;
    expect(await changeCount(svc)).toBe(before);
    await svc.deps.sql`update api_keys set last_used_at = now()`;
    expect(await changeCount(svc)).toBe(before);
    lastDigest = await changeCount(svc);
  });

  it('never answers 5xx, answers only documented statuses and shapes, and a refused request changes nothing', async () => {
    expect(operations.length).toBeGreaterThan(40);
    for (const op of operations) {
      const validators = new Map([...Object.entries(op.responses)].map(([status, schema]) => [status, schema && compileDocumentedSchema(schema)]));
      const generated = {
        path: Object.fromEntries(op.pathParams.map((p) => [p.name, boundedForGeneration(p.schema)])),
        query: op.query && boundedForGeneration(op.query),
        body: op.body && boundedForGeneration(op.body),
      };
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.nat(), mutation, async (seed, idPick, mut) => {
          // A valid request from the operation's own schemas.
          const params: Record<string, string> = {};
          for (const p of op.pathParams) {
            const pool = ids[p.name] ?? [];
            params[p.name] = pool.length && idPick % 3 !== 0 ? pool[idPick % pool.length] : String(generateSync(generated.path[p.name] as never, { seed }));
          }
          const query = generated.query ? (generateSync(generated.query as never, { seed, optionalsProbability: 0.3 }) as Record<string, unknown>) : {};
          // A long poll is asked to wait its shortest (1 s) unless a mutation says otherwise: its 30 s default would make each
          // request against a running session wait out the whole window.
          if (op.queryNames.includes('maxWaitSeconds')) query.maxWaitSeconds = 1;
          let body: unknown = generated.body ? generateSync(generated.body as never, { seed, optionalsProbability: 0.5 }) : undefined;
          const headers: [string, string][] = [['Authorization', `Bearer ${svc.adminKey}`]];
          let raw: Buffer | undefined;
          // One hostile change.
          if (mut.kind === 'bodyValue' && body !== undefined) {
            const spots = leaves(body);
            body = setAt(body, spots[mut.pick % spots.length], mut.value);
          } else if (mut.kind === 'bodyExtra' && body !== null && typeof body === 'object' && !Array.isArray(body)) {
            body = { ...body, [mut.name]: mut.value };
          } else if (mut.kind === 'bodyDrop' && body !== undefined) {
            const spots = leaves(body);
            body = setAt(body, spots[mut.pick % spots.length], undefined, true);
          } else if (mut.kind === 'bodyRaw' && op.body) {
            raw = mut.bytes;
          } else if (mut.kind === 'query' && op.queryNames.length) {
            query[op.queryNames[mut.pick % op.queryNames.length]] = mut.value;
          } else if (mut.kind === 'path' && op.pathParams.length) {
            params[op.pathParams[mut.pick % op.pathParams.length].name] = mut.value;
          } else if (mut.kind === 'header') {
            headers.push([mut.name, mut.value.replace(/[\r\n]/g, ' ')]);
          }
          const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => percentEncode(params[name] ?? ''));
          const search = new URLSearchParams();
          for (const [k, v] of Object.entries(query)) {
            for (const item of Array.isArray(v) ? v : [v]) if (item !== undefined) search.append(k, typeof item === 'string' ? item : JSON.stringify(item));
          }
          const target = search.size ? `${path}?${search}` : path;
          const payload = raw ?? (body === undefined ? undefined : Buffer.from(JSON.stringify(body) ?? 'null'));
          if (payload) {
            if (!headers.some(([k]) => k === 'content-type')) headers.push(['Content-Type', 'application/json']);
            headers.push(['Content-Length', String(payload.length)]);
          }
          const res = await rawRequest(svc.url, requestHead(op.method, target, headers), payload);
          requests++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const what = `${op.method} ${target.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          expect(Object.keys(op.responses), what).toContain(String(res.status));
          const validate = validators.get(String(res.status));
          if (validate) expect(validate(res.body), `${what}\n${JSON.stringify(validate.errors)}`).toBe(true);
          // An accepted deploy goes on after its 202: what it does belongs to it, not to the next request.
          await deploysSettled();
          const after = await changeCount(svc);
          if (res.status >= 400) expect(after, `a refused request changed the store: ${what}`).toBe(lastDigest);
          lastDigest = after;
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }
    // The bound is for a hang, not for speed (docs/performance.md has the suite's time).
  }, 1_500_000);
});

import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { conflict, notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, IdempotencyKeys } from '../http/idempotency.js';
import { listReply, pageOffset, PageQuery } from '../http/pagination.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { parseWindow, TimeParam } from '../http/time.js';
import { checkTypesOf, findCheckRow } from '../resources/checks/repository.js';
import { Rules } from '../http/rules.js';
import { StringEnum } from '../http/schemas.js';
import { CHECK_TYPES } from '../resources/checks/enums.js';
import { readResults } from './repository.js';
import { ingestJob } from './queue.js';
import { toRow } from './rows.js';
import { ResultItem, StoredResult } from './schemas.js';

/** Runners' clocks drift; a start further ahead than this is a mistake, not skew. */
const MAX_FUTURE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

const ResultsQuery = Type.Object(
  {
    ...PageQuery.properties,
    from: Type.Optional(TimeParam),
    to: Type.Optional(TimeParam),
    hasFailures: Type.Optional(Type.Boolean()),
    location: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: "The check's type; another type matches no results" })),
    resultType: Type.Optional(
      StringEnum(['FINAL', 'ATTEMPT', 'ALL'] as const, {
        default: 'FINAL',
        description: 'This service stores the final result of each run (retries counted in `attempts`): FINAL and ALL list them, ATTEMPT lists none',
      }),
    ),
  },
  { additionalProperties: false },
);

export function ingestRoutes({ sql, store, config, ingest, redis }: Deps): AnyRoute[] {
  const tag = 'Check results';
  const idempotency = new IdempotencyKeys(redis, `${config.redisPrefix}ingest:`);
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/check-results',
      operationId: 'ingestCheckResults',
      summary: 'Report check-run results (a batch, all or nothing)',
      description:
        'Every item is validated and must name a check of this account with its type; one bad item rejects the ' +
        'whole batch with a 400 naming each index and field. Accepted batches are queued and land in the analytics ' +
        'store shortly after. An item `id` (the run id) is the deduplication key: a run posted again, in this or any ' +
        'later batch, is stored once; one batch may not carry the same `id` twice. With an `Idempotency-Key` header, ' +
        'a repeat of the request within 24 hours answers the first 202 again and queues nothing; the same key with ' +
        'another body is a 409.',
      tag,
      access: 'write',
      errors: [409],
      schema: {
        headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeyHeader) }),
        body: Type.Object(
          { results: Type.Array(ResultItem, { minItems: 1, maxItems: config.ingest.maxBatchSize }) },
          { additionalProperties: false },
        ),
        responses: { 202: Type.Object({ batchId: Type.String({ format: 'uuid' }), count: Type.Integer() }) },
      },
      handler: async ({ principal, body, headers }) => {
        const accountId = principal.account.id;
        const now = Date.now();
        const oldest = now - config.clickhouse.retentionDays * DAY_MS;
        const rules = new Rules();
        const ids = [...new Set(body.results.map((r) => r.checkId))];
        const types = await checkTypesOf(sql, accountId, ids);
        const runIds = new Map<string, number>();
        body.results.forEach((item, i) => {
          const at = `body.results[${i}]`;
          if (item.id !== undefined) {
            const first = runIds.get(item.id.toLowerCase());
            if (first !== undefined) rules.fail(`${at}.id`, 'unique', `repeats the id of results[${first}]`);
            else runIds.set(item.id.toLowerCase(), i);
          }
          const type = types.get(item.checkId);
          if (type === undefined) rules.fail(`${at}.checkId`, 'exists', 'names no check of this account');
          else rules.check(type === item.checkType, `${at}.checkType`, 'match', `must be ${type}, the type of the check`);
          const started = Date.parse(item.startedAt);
          rules.check(Date.parse(item.stoppedAt) >= started, `${at}.stoppedAt`, 'after', 'must not be before startedAt');
          rules.check(started <= now + MAX_FUTURE_MS, `${at}.startedAt`, 'future', 'is in the future');
          rules.check(started >= oldest, `${at}.startedAt`, 'retention', `is older than the ${config.clickhouse.retentionDays}-day retention`);
        });
        rules.throwIfAny();
        const reply = { batchId: randomUUID(), count: body.results.length };
        const key = headers['idempotency-key'];
        if (key !== undefined) {
          const fingerprint = IdempotencyKeys.fingerprint(body);
          const prior = await idempotency.claim(accountId, key, fingerprint, reply);
          if (prior && prior.fingerprint !== fingerprint) {
            throw conflict('This Idempotency-Key was used with another body', { header: 'Idempotency-Key' });
          }
          if (prior) return { status: 202, body: prior.reply };
        }
        const rows = body.results.map((item) => toRow(accountId, item.id?.toLowerCase() ?? randomUUID(), item));
        try {
          await ingest.enqueue(ingestJob(reply.batchId, accountId, rows));
        } catch (err) {
          if (key !== undefined) await idempotency.forget(accountId, key).catch(() => {});
          throw err;
        }
        return { status: 202, body: reply };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-results/{checkId}',
      operationId: 'listCheckResults',
      summary: 'Raw results of one check, newest first',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        query: ResultsQuery,
        responses: { 200: Type.Array(StoredResult) },
      },
      handler: async ({ principal, params, query }) => {
        const accountId = principal.account.id;
        const window = parseWindow(query);
        const check = await findCheckRow(sql, accountId, params.checkId);
        if (!check) throw notFound();
        const filter = { accountId, checkId: check.id, ...window, hasFailures: query.hasFailures, location: query.location };
        const none = (query.checkType !== undefined && query.checkType !== check.check_type) || query.resultType === 'ATTEMPT';
        const { items, total } = none ? { items: [], total: 0 } : await readResults(store, filter, query.limit, pageOffset(query));
        return listReply(items, total, query);
      },
    }),
  ];
}

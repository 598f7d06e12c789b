import { Type } from '@sinclair/typebox';
import { type CheckTypeCache, findCheckRow } from '../checks/index.js';
import { AssetManifest, AssetManifestQuery, assetDownload, assetManifest, linkOrigin } from '../http/asset-manifest.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { conflict, notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, IdempotencyKeys } from '../http/idempotency.js';
import { UUID } from '../http/ids.js';
import { listReply, PageQuery, pageOffset } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { parseWindow, TimeParam } from '../http/time.js';
import { CHECK_TYPES, LOCATIONS } from '../model/checks.js';
import { ingestJob, keptAssetsOf, keptAssetsProblems, MAX_DETAIL_BYTES, RESULT_DETAIL_KEYS } from '../model/results.js';
import { isoTimeMs } from '../model/time.js';
import { randomUuid } from '../model/uuid.js';
import { privateLocationSlugs } from '../private-locations/index.js';
import type { Deps } from '../storage/deps.js';
import { anchorResult, project } from './anchor-view.js';
import { readResult, readResults, readResultsAfter } from './repository.js';
import { toRow } from './result-rows.js';
import { IngestBody, StoredResult } from './schemas.js';

/** Runners' clocks drift; a start further ahead than this is a mistake, not skew. */
const MAX_FUTURE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;
const PUBLIC_LOCATIONS: ReadonlySet<string> = new Set(LOCATIONS);

const ResultFilters = {
  from: Type.Optional({ ...TimeParam, description: 'Runs started at or after this time (unix seconds or ISO 8601)' }),
  to: Type.Optional({ ...TimeParam, description: 'Runs started before this time' }),
  hasFailures: Type.Optional(Type.Boolean()),
  location: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A run location (public or private)' })),
  checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: "The check's type; another type matches no results" })),
  resultType: Type.Optional(
    StringEnum(['FINAL', 'ATTEMPT', 'ALL'] as const, {
      default: 'FINAL',
      description: 'This service stores the final result of each run (retries counted in `attempts`): FINAL and ALL list them, ATTEMPT lists none',
    }),
  ),
};

const ResultsQuery = Type.Object({ ...PageQuery.properties, ...ResultFilters }, { additionalProperties: false });

const RESULT_FIELDS = Object.keys(StoredResult.properties);

const CursorQuery = Type.Object(
  {
    limit: PageQuery.properties.limit,
    ...ResultFilters,
    nextId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The nextId of the previous page' })),
    fields: Type.Optional(
      Type.Array(StringEnum(RESULT_FIELDS), { minItems: 1, maxItems: RESULT_FIELDS.length, description: 'Only these fields of each entry' }),
    ),
  },
  { additionalProperties: false },
);

const CheckIdParams = Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

/** `checkTypes` keeps the types of checks between batches (CheckTypeCache). */
export function ingestRoutes({ sql, store, config, ingest, redis, blobs }: Deps, checkTypes: CheckTypeCache): AnyRoute[] {
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
        "later batch, with the same `startedAt`, is stored once (the lookup is bounded by the batch's times: the same `id` " +
        'posted with other times is stored again); one batch may not carry the same `id` twice. With an `Idempotency-Key` header, ' +
        'a repeat of the request within 24 hours answers the first 202 again and queues nothing; the same key with ' +
        'another body is a 409.',
      tag,
      access: 'write',
      errors: [409, 503],
      schema: {
        headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeyHeader) }),
        body: IngestBody(config.ingest.maxBatchSize),
        responses: { 202: Type.Object({ batchId: Type.String({ format: 'uuid' }), count: Type.Integer() }) },
      },
      handler: async ({ principal, body, headers }) => {
        const accountId = principal.account.id;
        const now = Date.now();
        const oldest = now - config.clickhouse.retentionDays * DAY_MS;
        const rules = new Rules();
        const ids = [...new Set(body.results.map((r) => r.checkId))];
        const needsPrivate = body.results.some((r) => !PUBLIC_LOCATIONS.has(r.runLocation));
        const [types, privateLocations] = await Promise.all([
          checkTypes.typesOf(accountId, ids),
          needsPrivate ? privateLocationSlugs(sql, accountId) : new Set<string>(),
        ]);
        const runIds = new Map<string, number>();
        const detailTexts = new Array<string | undefined>(body.results.length);
        // Field paths are built only for a failed rule: a batch of a thousand good results builds none. (No function
        // is made per item: under tsx each named one costs a defineProperty of its name, 0.2 µs a result.)
        const at = (i: number) => `body.results[${i}]`;
        body.results.forEach((item, i) => {
          if (item.id !== undefined) {
            const first = runIds.get(item.id.toLowerCase());
            if (first !== undefined) rules.fail(`${at(i)}.id`, 'unique', `repeats the id of results[${first}]`);
            else runIds.set(item.id.toLowerCase(), i);
          }
          if (!PUBLIC_LOCATIONS.has(item.runLocation) && !privateLocations.has(item.runLocation)) {
            rules.fail(`${at(i)}.runLocation`, 'exists', 'is neither a public location nor the slugName of a private location of this account');
          }
          const type = types.get(item.checkId);
          if (type === undefined) rules.fail(`${at(i)}.checkId`, 'exists', 'names no check of this account');
          else if (type !== item.checkType) rules.fail(`${at(i)}.checkType`, 'match', `must be ${type}, the type of the check`);
          const started = isoTimeMs(item.startedAt);
          if (!(isoTimeMs(item.stoppedAt) >= started)) rules.fail(`${at(i)}.stoppedAt`, 'after', 'must not be before startedAt');
          if (!(started <= now + MAX_FUTURE_MS)) rules.fail(`${at(i)}.startedAt`, 'future', 'is in the future');
          if (!(started >= oldest)) rules.fail(`${at(i)}.startedAt`, 'retention', `is older than the ${config.clickhouse.retentionDays}-day retention`);
          // Kept files a client lists are held to what a run writes: each names a blob of the account, typed.
          let details: Record<string, unknown> | undefined;
          for (const key of RESULT_DETAIL_KEYS) {
            if (item[key] !== undefined && item[key] !== null) (details ??= {})[key] = item[key];
          }
          if (!details) return;
          for (const p of keptAssetsProblems(details)) rules.fail(`${at(i)}.${p.at}`, p.rule, p.why);
          // The detail column's text, made once: measured here, stored by toRow. A text of at most a third of the
          // limit in UTF-16 units cannot exceed it in UTF-8 bytes, so only longer ones are measured.
          const text = JSON.stringify(details);
          detailTexts[i] = text;
          const detailBytes = text.length * 3 <= MAX_DETAIL_BYTES ? text.length : Buffer.byteLength(text);
          if (detailBytes > MAX_DETAIL_BYTES) {
            rules.fail(
              at(i),
              'detailSize',
              `its result objects (${RESULT_DETAIL_KEYS.filter((k) => item[k]).join(', ')}) hold ${detailBytes} bytes of JSON; at most ${MAX_DETAIL_BYTES}`,
            );
          }
        });
        rules.throwIfAny();
        const reply = { batchId: randomUuid(), count: body.results.length };
        const key = headers['idempotency-key'];
        if (key !== undefined) {
          const fingerprint = IdempotencyKeys.fingerprint(body);
          const prior = await idempotency.claim(accountId, key, fingerprint, reply);
          if (prior && prior.fingerprint !== fingerprint) {
            throw conflict('This Idempotency-Key was used with another body', { header: 'Idempotency-Key' });
          }
          if (prior) return { status: 202, body: prior.reply };
        }
        const rows = body.results.map((item, i) => toRow(accountId, item.id?.toLowerCase() ?? randomUuid(), item, detailTexts[i] ?? ''));
        try {
          await ingest.enqueue(ingestJob(reply.batchId, accountId, rows, undefined, runIds.size === 0));
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
      description:
        "Each item carries the stored fields and the anchor API's result fields. What only a run's detail holds (assertions, steps, errors, the response's statusText) is left out of lists: read one result for it. Without from/to every stored run is listed.",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: CheckIdParams, query: ResultsQuery, responses: { 200: Type.Array(StoredResult) } },
      handler: async ({ principal, params, query }) => {
        const accountId = principal.account.id;
        const window = parseWindow(query);
        const check = await findCheckRow(sql, accountId, params.checkId);
        if (!check) throw notFound();
        const filter = { accountId, checkId: check.id, ...window, hasFailures: query.hasFailures, location: query.location };
        const none = (query.checkType !== undefined && query.checkType !== check.check_type) || query.resultType === 'ATTEMPT';
        const { items, total } = none ? { items: [], total: 0 } : await readResults(store, filter, query.limit, pageOffset(query));
        return listReply(
          items.map((item) => anchorResult(item, check, true, config.traceLinkTemplate)),
          total,
          query,
        );
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v2/check-results/{checkId}',
      operationId: 'listCheckResultsV2',
      summary: 'Raw results of one check, newest first, by cursor',
      description: 'Answers `{length, entries, nextId}`; pass `nextId` back for the next page (null: no more). `fields` keeps only those fields of each entry.',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: CheckIdParams,
        query: CursorQuery,
        responses: {
          200: Type.Object(
            {
              length: Type.Integer({ description: 'Entries in this page' }),
              entries: Type.Array(Type.Partial(StoredResult)),
              nextId: Nullable(Type.String()),
            },
            { additionalProperties: false },
          ),
        },
      },
      handler: async ({ principal, params, query }) => {
        const accountId = principal.account.id;
        const window = parseWindow(query);
        const cursor = query.nextId === undefined ? undefined : decodeCursor(query.nextId);
        const check = await findCheckRow(sql, accountId, params.checkId);
        if (!check) throw notFound();
        const filter = { accountId, checkId: check.id, ...window, hasFailures: query.hasFailures, location: query.location };
        const none = (query.checkType !== undefined && query.checkType !== check.check_type) || query.resultType === 'ATTEMPT';
        const { items, next } = none ? { items: [], next: undefined } : await readResultsAfter(store, filter, query.limit, cursor);
        const entries = items.map((item) => project(anchorResult(item, check, true, config.traceLinkTemplate), query.fields));
        return { status: 200, body: { length: entries.length, entries, nextId: next ? encodeCursor(next) : null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-results/{checkId}/{checkResultId}',
      operationId: 'getCheckResult',
      summary: 'One result of a check, by its run id',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object(
          { checkId: Type.String({ minLength: 1, maxLength: 64 }), checkResultId: Type.String({ minLength: 1, maxLength: 64 }) },
          { additionalProperties: false },
        ),
        responses: { 200: StoredResult },
      },
      handler: async ({ principal, params }) => {
        const check = await findCheckRow(sql, principal.account.id, params.checkId);
        if (!check || !UUID.test(params.checkResultId)) throw notFound();
        const item = await readResult(store, principal.account.id, check.id, params.checkResultId.toLowerCase());
        if (!item) throw notFound();
        return { status: 200, body: anchorResult(item, check, false, config.traceLinkTemplate) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-results/{checkId}/{checkResultId}/assets',
      operationId: 'getCheckResultAssets',
      summary: "The files a result kept (a browser run's screenshots, traces, videos), each with its download URL",
      description: "`type` (repeatable) and `name` (a glob, case-insensitive) narrow the list. The anchor CLI's `checkly assets list|download` read it.",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: ResultAssetParams,
        query: AssetManifestQuery,
        responses: { 200: AssetManifest },
      },
      handler: async ({ principal, params, query, context }) => {
        const { check, assets } = await resultAssets(principal.account.id, params.checkId, params.checkResultId);
        const resultId = params.checkResultId.toLowerCase();
        const body = assetManifest(assets, query, {
          url: (name) => `${linkOrigin(config, context.client)}/v1/check-results/${check.id}/${resultId}/assets/${encodeURIComponent(name)}`,
          source: { type: 'check-result', checkId: check.id, checkName: check.name, checkType: check.check_type, resultId },
        });
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-results/{checkId}/{checkResultId}/assets/{assetName}',
      operationId: 'downloadCheckResultAsset',
      summary: 'One file a result kept (a screenshot, a trace, a video), by its name in the asset list',
      tag,
      access: 'read',
      errors: [404],
      contentType: 'application/octet-stream',
      schema: {
        params: Type.Object({ ...ResultAssetParams.properties, assetName: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
        responses: { 200: Type.String({ format: 'binary' }) },
      },
      handler: async ({ principal, params }) => {
        const { assets } = await resultAssets(principal.account.id, params.checkId, params.checkResultId);
        return assetDownload(blobs, principal.account.id, assets, params.assetName);
      },
    }),
  ];

  /** A stored result's kept files (browser and multi-step runs), after the check and result are found. */
  async function resultAssets(accountId: string, checkId: string, resultId: string) {
    const check = await findCheckRow(sql, accountId, checkId);
    if (!check || !UUID.test(resultId)) throw notFound();
    const item = await readResult(store, accountId, check.id, resultId.toLowerCase());
    if (!item) throw notFound();
    return { check, assets: keptAssetsOf(item) };
  }
}

const ResultAssetParams = Type.Object(
  { checkId: Type.String({ minLength: 1, maxLength: 64 }), checkResultId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import formidable from 'formidable';
import { HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { BlobTooLargeError } from '../storage/blobs.js';
import type { Deps } from '../storage/deps.js';
import { inTransaction, transaction } from '../storage/postgres.js';
import { endSession, findResult, findSession, insertSession, resultRows, type StoredResult, setResultAssets, upsertResult } from './repository.js';

/**
 * The anchor's Playwright reporter (`@checkly/playwright-reporter`): it opens a session with one result, uploads
 * the run's zip (report JSON, traces, screenshots, logs) and closes the result with its status. The zip is kept in
 * the blob store; the entries the reporter lists (byte ranges in the zip) make each file readable on its own.
 */

const tag = 'Test sessions';
const Uuid = Type.String({ format: 'uuid' });
const ResultParams = Type.Object({ testSessionId: Uuid, testResultId: Uuid }, { additionalProperties: false });

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    environment: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    repoInfo: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    startedAt: Type.Optional(
      Type.Union([
        Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description: 'Milliseconds since the epoch (up to 9999-12-31)' }),
        Type.String({ format: 'date-time' }),
      ]),
    ),
    testResults: Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: true }), {
      minItems: 1,
      maxItems: 100,
    }),
    provider: Type.Optional(StringEnum(['PW_REPORTER'] as const)),
  },
  { additionalProperties: false },
);

const AssetEntry = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 4096 }),
    start: Type.Integer({ minimum: 0 }),
    end: Type.Integer({ minimum: -1 }),
    compressionMethod: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

const ResultBody = Type.Object(
  {
    status: StringEnum(['PASSED', 'FAILED'] as const),
    isDegraded: Type.Boolean({ default: false }),
    startedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    stoppedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    responseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 86_400_000 }))),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    assetEntries: Type.Optional(Type.Array(AssetEntry, { maxItems: 100_000 })),
  },
  { additionalProperties: false },
);

interface Assets {
  key: string;
  size: number;
  entries?: { name: string; start: number; end: number; compressionMethod?: number }[];
}

const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webm: 'video/webm',
  zip: 'application/zip',
  html: 'text/html; charset=utf-8',
};

/** The most one zip entry may inflate to: a 1 MB entry that would inflate to 1 GiB is not served. */
export const ENTRY_LIMIT_BYTES = 128 * 1024 * 1024;

/**
 * The size a deflated zip entry inflates to, found by inflating it into nothing (zlib's stream works off the main
 * thread) and stopping past `limit`: undefined then, or when the bytes do not inflate.
 */
async function inflatedSize(raw: Buffer, limit: number): Promise<number | undefined> {
  let size = 0;
  const count = new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      done(size > limit ? new Error('too large') : null);
    },
  });
  try {
    await pipeline(Readable.from([raw]), createInflateRaw(), count);
    return size;
  } catch {
    return undefined;
  }
}

/**
 * What a tenant uploaded is served as a download, never as a live page of this origin: an attachment, the type as
 * sent (nosniff), and a CSP that sandboxes it should a browser render it anyway.
 */
export function downloadHeaders(name: string): Record<string, string> {
  const base = name.split('/').pop() || 'file';
  return {
    'Content-Disposition': `attachment; filename="${base.replace(/[^\w.-]/g, '_')}"`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "sandbox; default-src 'none'",
  };
}

export function reporterRoutes({ sql, blobs, config }: Deps): AnyRoute[] {
  const maxBytes = config.projects.blobLimitBytes;
  const link = (id: string) => `${config.publicUrl ?? ''}/v1/test-sessions/${id}`;

  /** The account's session's result (404 otherwise). */
  async function resultOf(accountId: string, sessionId: string, resultId: string) {
    const row = await findResult(sql, accountId, sessionId, resultId);
    if (!row) throw notFound();
    return row;
  }

  async function keep(accountId: string, sessionId: string, resultId: string, body: Readable): Promise<{ assetId: string }> {
    await resultOf(accountId, sessionId, resultId);
    try {
      const stored = await blobs.put(accountId, 'reports', body, maxBytes);
      await setResultAssets(sql, sessionId, resultId, { key: stored.key, size: stored.size } satisfies Assets);
      return { assetId: stored.key };
    } catch (err) {
      if (err instanceof BlobTooLargeError) throw new HttpError(413, err.message);
      throw err;
    }
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/next/test-sessions/create',
      operationId: 'createReporterTestSession',
      summary: "Open a test session for a Playwright run (the anchor's Playwright reporter)",
      tag,
      access: 'write',
      schema: {
        body: CreateBody,
        responses: {
          200: Type.Object({ testSessionId: Uuid, testResults: Type.Array(Type.Object({ testResultId: Uuid, name: Type.String() })), link: Type.String() }),
        },
      },
      handler: async ({ principal, body }) => {
        const repo = (body.repoInfo ?? {}) as Record<string, unknown>;
        const text = (v: unknown) => (typeof v === 'string' ? v : null);
        const started = typeof body.startedAt === 'number' ? new Date(body.startedAt).toISOString() : (body.startedAt ?? new Date().toISOString());
        const results = body.testResults.map((r) => ({ id: randomUUID(), name: r.name }));
        const id = await transaction(sql, (tx) =>
          inTransaction(tx, async () => {
            const sessionId = await insertSession(
              sql,
              principal.account.id,
              body.name,
              {
                metadata: {
                  ...(body.environment ? { environment: body.environment } : {}),
                  repoUrl: text(repo.repoUrl),
                  commitId: text(repo.commitId),
                  commitOwner: text(repo.commitOwner),
                  commitMessage: text(repo.commitMessage),
                  branchName: text(repo.branchName),
                },
              },
              'PW_REPORTER',
            );
            // Each result is announced now (RUNNING) and closed by the reporter's last call.
            for (const r of results) {
              const data: StoredResult = {
                checkId: r.id,
                checkType: 'PLAYWRIGHT',
                name: r.name,
                runLocation: 'local',
                errorGroupIds: [],
                hasErrors: false,
                hasFailures: false,
                isDegraded: false,
                aborted: false,
                responseTime: null,
                startedAt: started,
                stoppedAt: null,
                pending: true,
              };
              await upsertResult(sql, sessionId, r.id, data);
            }
            return sessionId;
          }),
        );
        return { status: 200, body: { testSessionId: id, testResults: results.map((r) => ({ testResultId: r.id, name: r.name })), link: link(id) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}/upload',
      operationId: 'uploadReporterAssets',
      summary: "Upload a Playwright run's zip (report, traces, screenshots, logs) to its result",
      tag,
      access: 'write',
      errors: [404],
      rawBody: { mediaType: 'application/octet-stream', maxBytes },
      schema: { params: ResultParams, responses: { 200: Type.Object({ assetId: Type.String() }) } },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await keep(principal.account.id, params.testSessionId, params.testResultId, body as Readable),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}/assets',
      operationId: 'uploadReporterAssetsMultipart',
      summary: "The same upload as multipart form data (field `assets`), the reporter's fallback",
      tag,
      access: 'write',
      errors: [404],
      rawBody: { mediaType: 'multipart/form-data', maxBytes: maxBytes + 64 * 1024 },
      schema: { params: ResultParams, responses: { 200: Type.Object({ assetId: Type.String() }) } },
      handler: async ({ principal, params, body }) => {
        await resultOf(principal.account.id, params.testSessionId, params.testResultId);
        const form = formidable({ maxFiles: 1, maxFileSize: maxBytes, maxFields: 10, allowEmptyFiles: false });
        let files: formidable.Files;
        try {
          [, files] = await form.parse(body as IncomingMessage);
        } catch (err) {
          const code = (err as { httpCode?: number }).httpCode;
          throw new HttpError(
            code === 413 ? 413 : 400,
            code === 413 ? `Payload content length greater than maximum allowed: ${maxBytes}` : 'The form has no readable file in `assets`',
          );
        }
        const file = files.assets?.[0];
        if (!file) throw new HttpError(400, 'The form has no file in `assets`');
        try {
          return { status: 200, body: await keep(principal.account.id, params.testSessionId, params.testResultId, createReadStream(file.filepath)) };
        } finally {
          await rm(file.filepath, { force: true });
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}',
      operationId: 'finishReporterResult',
      summary: "Close a Playwright run's result with its status; the session ends when its last result does",
      tag,
      access: 'write',
      errors: [404],
      schema: { params: ResultParams, body: ResultBody, responses: { 204: null } },
      handler: async ({ principal, params, body }) => {
        await transaction(sql, (tx) =>
          inTransaction(tx, async () => {
            const session = await findSession(sql, principal.account.id, params.testSessionId, true);
            const row = await resultOf(principal.account.id, session.id, params.testResultId);
            const errors = ((body.metadata as { errors?: { error?: { message?: string } }[] } | undefined)?.errors ?? []).slice(0, 50);
            const data: StoredResult = {
              ...row.data,
              pending: false,
              hasFailures: body.status === 'FAILED',
              isDegraded: body.isDegraded,
              startedAt: body.startedAt ?? row.data.startedAt ?? null,
              stoppedAt: body.stoppedAt ?? new Date().toISOString(),
              responseTime: body.responseTime ?? null,
              ...(errors.length ? { errors: errors.map((e) => String(e.error?.message ?? '').slice(0, 4000)) } : {}),
            };
            await upsertResult(sql, session.id, row.id, data);
            const assets = row.assets as Assets | null | undefined;
            if (assets && body.assetEntries) await setResultAssets(sql, session.id, row.id, { ...assets, entries: body.assetEntries });
            if (session.status !== 'RUNNING') return;
            const all = await resultRows(sql, [session.id]);
            const done = all.map((r) => (r.id === row.id ? data : r.data));
            if (done.some((d) => d.pending)) return;
            await endSession(sql, session.id, done.some((d) => d.hasFailures || d.hasErrors) ? 'FAILED' : 'PASSED');
          }),
        );
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}/assets',
      operationId: 'listReporterAssets',
      summary: "The files of a result's uploaded zip",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: ResultParams,
        responses: {
          200: Type.Object({ assetId: Type.String(), size: Type.Integer(), files: Type.Array(Type.Object({ name: Type.String(), size: Type.Integer() })) }),
        },
      },
      handler: async ({ principal, params }) => {
        const assets = (await resultOf(principal.account.id, params.testSessionId, params.testResultId)).assets as Assets | null;
        if (!assets) throw notFound();
        return {
          status: 200,
          body: { assetId: assets.key, size: assets.size, files: (assets.entries ?? []).map((e) => ({ name: e.name, size: e.end - e.start + 1 })) },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}/asset',
      operationId: 'getReporterAsset',
      summary: "One file of a result's uploaded zip, by its name (`output/checkly-report.json`, a trace, a screenshot)",
      tag,
      access: 'read',
      errors: [404],
      contentType: 'application/octet-stream',
      schema: {
        params: ResultParams,
        query: Type.Object({ name: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
        responses: { 200: Type.String({ format: 'binary' }) },
      },
      handler: async ({ principal, params, query }) => {
        const assets = (await resultOf(principal.account.id, params.testSessionId, params.testResultId)).assets as Assets | null;
        const entry = assets?.entries?.find((e) => e.name === query.name);
        if (!assets || !entry) throw notFound();
        const blob = await blobs.open(principal.account.id, assets.key);
        if (!blob) throw notFound();
        const zip = await buffer(blob.stream);
        if (entry.start > entry.end + 1 || entry.end >= zip.length) throw new HttpError(404, 'The file is not where the zip said it is');
        const raw = zip.subarray(entry.start, entry.end + 1);
        if (entry.compressionMethod && entry.compressionMethod !== 8) throw new HttpError(404, 'The file is compressed in a way this service does not read');
        const ext = entry.name.split('.').pop()?.toLowerCase() ?? '';
        const headers = { ...downloadHeaders(entry.name), 'Content-Type': CONTENT_TYPES[ext] ?? 'application/octet-stream' };
        if (entry.compressionMethod !== 8) return { status: 200, body: raw, headers };
        // Inflated twice, both off the main thread: once to know it fits (and its length), then as it is sent.
        const size = await inflatedSize(raw, ENTRY_LIMIT_BYTES);
        if (size === undefined) throw new HttpError(404, `The file in the zip cannot be read, or inflates to more than ${ENTRY_LIMIT_BYTES} bytes`);
        return { status: 200, body: Readable.from([raw]).pipe(createInflateRaw()), headers: { ...headers, 'Content-Length': String(size) } };
      },
    }),
  ];
}

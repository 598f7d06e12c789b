import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { type BlobKind, BlobTooLargeError } from '../storage/blobs.js';
import type { Deps } from '../storage/deps.js';

const Stored = Type.Object({ key: Type.String() }, { additionalProperties: false });
const KeyBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/**
 * The anchor's CLI uploads Playwright code bundles and browser-check snapshots here before a deploy, and
 * downloads snapshots (`checkly test --update-snapshots`). Blobs are content-addressed and per account.
 */
export function storageRoutes({ blobs, config }: Deps): AnyRoute[] {
  const tag = 'Projects';
  const maxBytes = config.projects.blobLimitBytes;

  const upload = (path: string, kind: BlobKind, operationId: string, summary: string) =>
    defineRoute({
      method: 'POST',
      path,
      operationId,
      summary,
      description: `The body is the file's bytes (at most ${maxBytes} bytes: larger is a 413 whose message says "maximum allowed: <bytes>", as the CLI reads it).`,
      tag,
      access: 'write',
      rawBody: { mediaType: 'application/octet-stream', maxBytes },
      schema: { responses: { 200: Stored } },
      handler: async ({ principal, body }) => {
        try {
          const stored = await blobs.put(principal.account.id, kind, body as Readable, maxBytes);
          return { status: 200, body: { key: stored.key } };
        } catch (err) {
          if (err instanceof BlobTooLargeError) throw new HttpError(413, err.message);
          throw err;
        }
      },
    });

  return [
    upload(
      '/next/checkly-storage/upload-code-bundle',
      'code-bundles',
      'uploadCodeBundle',
      'Upload a Playwright code bundle (a .tar.gz); the key goes in the check as codeBundlePath',
    ),
    upload('/next/checkly-storage/upload', 'snapshots', 'uploadStorageFile', "Upload a browser check's snapshot; the key goes in the check's snapshots"),
    defineRoute({
      method: 'POST',
      path: '/next/checkly-storage/download',
      operationId: 'downloadStorageFile',
      summary: 'Download a file this account uploaded, by its key',
      tag,
      access: 'read',
      errors: [404],
      contentType: 'application/octet-stream',
      schema: { body: KeyBody, responses: { 200: Type.String({ format: 'binary' }) } },
      handler: async ({ principal, body }) => {
        const blob = await blobs.open(principal.account.id, body.key);
        if (!blob) throw new HttpError(404, 'No file with this key');
        return { status: 200, body: blob.stream, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(blob.size) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next/checkly-storage/peek-code-bundle',
      operationId: 'peekCodeBundle',
      summary: 'Whether this account has the code bundle under a key, and its size',
      tag,
      access: 'read',
      errors: [404],
      schema: { body: KeyBody, responses: { 200: Type.Object({ key: Type.String(), size: Type.Integer() }) } },
      handler: async ({ principal, body }) => {
        const blob = await blobs.open(principal.account.id, body.key);
        if (!blob) throw new HttpError(404, 'No code bundle with this key');
        blob.stream.destroy();
        return { status: 200, body: { key: body.key, size: blob.size } };
      },
    }),
  ];
}

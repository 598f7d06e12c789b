import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';

/** The kinds of blob the service keeps, each under its own key prefix (the anchor's `code-bundles/…` form). */
export const BLOB_KINDS = {
  'code-bundles': '.tar.gz',
  snapshots: '',
  /** The Playwright reporter's zips of a run. */
  reports: '.zip',
  /** What browser and multi-step runs keep (docs/browser-checks.md). */
  screenshots: '.png',
  traces: '.zip',
  videos: '.webm',
} as const;
export type BlobKind = keyof typeof BLOB_KINDS;

/** What runs keep per result, swept after ASSET_RETENTION_DAYS (code bundles, snapshots and reports are not). */
export const RUN_ASSET_KINDS: readonly BlobKind[] = ['screenshots', 'traces', 'videos'];

/**
 * A blob larger than the store accepts; `limit` is the most it takes, in bytes. Its status is 413 and its message
 * is said to the client (what the anchor's CLI reads: "maximum allowed: <bytes>"), wherever a route lets it through.
 */
export class BlobTooLargeError extends Error {
  readonly status = 413;
  readonly expose = true;
  constructor(readonly limit: number) {
    super(`Payload content length greater than maximum allowed: ${limit}`);
    this.name = 'BlobTooLargeError';
  }
}

export interface StoredBlob {
  key: string;
  size: number;
}

/**
 * Content-addressed blobs per account (code bundles, snapshots): a key is `<kind>/<sha256><ext>`, so the same
 * bytes are stored once and a key names exactly one content. One account's keys never reach another's blobs.
 */
export interface BlobStore {
  put(accountId: string, kind: BlobKind, body: Readable, maxBytes: number): Promise<StoredBlob>;
  /** The blob's bytes, or undefined when the account has no blob under `key` (or `key` is not a key). */
  open(accountId: string, key: string): Promise<{ stream: Readable; size: number } | undefined>;
  has(accountId: string, key: string): Promise<boolean>;
  /**
   * Removes the blobs of `kinds` (every account's) last written before `before`; answers how many. Putting the
   * same bytes again writes them again, so a blob still in use by newer results stays.
   */
  sweep(kinds: readonly BlobKind[], before: Date): Promise<number>;
  /** Lets go of connections (at shutdown). */
  close?(): void;
}

const KEY = /^(code-bundles|snapshots|reports|screenshots|traces|videos)\/[0-9a-f]{64}(\.tar\.gz|\.zip|\.png|\.webm)?$/;
const ACCOUNT = /^[0-9a-f-]{36}$/;

/** Whether `key` has the form of a blob key (checked before it touches a path). */
export function isBlobKey(key: string): boolean {
  const match = KEY.exec(key);
  return match !== null && (match[2] ?? '') === BLOB_KINDS[match[1] as BlobKind];
}

/** Counts and hashes the bytes passing through, failing once more than `maxBytes` have passed. */
function meter(maxBytes: number) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new BlobTooLargeError(maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, size: () => size, digest: () => hash.digest('hex') };
}

/**
 * Writes `body` through `counted` into `file`. The body (often the HTTP request) is never destroyed on the way: past
 * the limit it is only let go, so the route can still answer 413 on its connection (the rest of the body is read
 * and dropped by the server, for a bounded time).
 */
async function meteredCopy(body: Readable, counted: ReturnType<typeof meter>, file: string): Promise<void> {
  const fail = (err: Error) => counted.stream.destroy(err);
  body.once('error', fail);
  body.pipe(counted.stream);
  try {
    await pipeline(counted.stream, createWriteStream(file, { mode: 0o600 }));
  } finally {
    body.off('error', fail);
    body.unpipe(counted.stream);
  }
}

/** Blobs as files under `<root>/<account>/<kind>/<sha256><ext>`, written to a temporary name and renamed into place. */
export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(accountId: string, key: string): string | undefined {
    if (!ACCOUNT.test(accountId) || !isBlobKey(key)) return undefined;
    return path.join(this.root, accountId, key);
  }

  async put(accountId: string, kind: BlobKind, body: Readable, maxBytes: number): Promise<StoredBlob> {
    if (!ACCOUNT.test(accountId)) throw new Error('not an account id');
    const dir = path.join(this.root, accountId, kind);
    await mkdir(dir, { recursive: true });
    const temp = path.join(dir, `.upload-${randomUUID()}`);
    const counted = meter(maxBytes);
    try {
      await meteredCopy(body, counted, temp);
      const key = `${kind}/${counted.digest()}${BLOB_KINDS[kind]}`;
      await rename(temp, path.join(this.root, accountId, key));
      return { key, size: counted.size() };
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async open(accountId: string, key: string) {
    const file = this.file(accountId, key);
    if (!file) return undefined;
    try {
      const { size } = await stat(file);
      return { stream: createReadStream(file), size };
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async has(accountId: string, key: string): Promise<boolean> {
    const file = this.file(accountId, key);
    if (!file) return false;
    return stat(file).then(
      () => true,
      () => false,
    );
  }

  async sweep(kinds: readonly BlobKind[], before: Date): Promise<number> {
    let removed = 0;
    const accounts = await readdir(this.root).catch(() => [] as string[]);
    for (const account of accounts.filter((a) => ACCOUNT.test(a))) {
      for (const kind of kinds) {
        const dir = path.join(this.root, account, kind);
        for (const name of await readdir(dir).catch(() => [] as string[])) {
          // Uploads under way (.upload-…) are not blobs yet.
          if (!isBlobKey(`${kind}/${name}`)) continue;
          const file = path.join(dir, name);
          const info = await stat(file).catch(() => undefined);
          if (info && info.mtime < before) {
            await rm(file, { force: true });
            removed++;
          }
        }
      }
    }
    return removed;
  }
}

export interface S3Settings {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, Ceph, R2…); unset: AWS's own for the region. */
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>` (most self-hosted stores need it). */
  forcePathStyle: boolean;
  /** Object names start with this (several services can share a bucket). */
  prefix: string;
}

const missing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

/**
 * Blobs as objects `<prefix><account>/<kind>/<sha256><ext>` of an S3-compatible bucket. An upload is measured and
 * hashed into a temporary file first (its key is its hash), then put once; the same bytes again are not re-sent.
 */
export class S3BlobStore implements BlobStore {
  /** The S3 client (22 MB of SDK) is loaded on first use: a service that keeps blobs on disk never loads it. */
  private readonly sdk = once(() => import('@aws-sdk/client-s3'));
  private readonly client = once(async (): Promise<S3Client> => {
    const { S3Client } = await this.sdk();
    return new S3Client(this.clientSettings);
  });
  private readonly clientSettings: S3ClientConfig;

  constructor(private readonly settings: S3Settings) {
    this.clientSettings = {
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where S3 requires them: many S3-compatible stores do not take aws-chunked trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      credentials:
        settings.accessKeyId && settings.secretAccessKey ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
    };
  }

  private name(accountId: string, key: string): string | undefined {
    if (!ACCOUNT.test(accountId) || !isBlobKey(key)) return undefined;
    return `${this.settings.prefix}${accountId}/${key}`;
  }

  async put(accountId: string, kind: BlobKind, body: Readable, maxBytes: number): Promise<StoredBlob> {
    if (!ACCOUNT.test(accountId)) throw new Error('not an account id');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'blob-upload-'));
    const temp = path.join(dir, 'body');
    try {
      const counted = meter(maxBytes);
      await meteredCopy(body, counted, temp);
      const key = `${kind}/${counted.digest()}${BLOB_KINDS[kind]}`;
      // Run assets are written again (their age is their last use: the sweep goes by it); others once.
      if (RUN_ASSET_KINDS.includes(kind) || !(await this.has(accountId, key))) {
        const { PutObjectCommand } = await this.sdk();
        await (await this.client()).send(
          new PutObjectCommand({ Bucket: this.settings.bucket, Key: this.name(accountId, key), Body: createReadStream(temp), ContentLength: counted.size() }),
        );
      }
      return { key, size: counted.size() };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async open(accountId: string, key: string) {
    const name = this.name(accountId, key);
    if (!name) return undefined;
    try {
      const { GetObjectCommand } = await this.sdk();
      const out = await (await this.client()).send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: name }));
      return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  }

  async has(accountId: string, key: string): Promise<boolean> {
    const name = this.name(accountId, key);
    if (!name) return false;
    try {
      const { HeadObjectCommand } = await this.sdk();
      await (await this.client()).send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: name }));
      return true;
    } catch (err) {
      if (missing(err)) return false;
      throw err;
    }
  }

  async sweep(kinds: readonly BlobKind[], before: Date): Promise<number> {
    const { bucket, prefix } = this.settings;
    const { DeleteObjectsCommand, ListObjectsV2Command } = await this.sdk();
    const client = await this.client();
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      const old = (page.Contents ?? []).filter((o) => {
        const rest = o.Key?.slice(prefix.length).split('/') ?? [];
        return rest.length === 3 && ACCOUNT.test(rest[0]!) && kinds.includes(rest[1] as BlobKind) && o.LastModified !== undefined && o.LastModified < before;
      });
      if (old.length) {
        const out = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: old.map((o) => ({ Key: o.Key! })), Quiet: true } }));
        removed += old.length - (out.Errors?.length ?? 0);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  close(): void {
    if (this.client.started)
      void this.client().then(
        (c) => c.destroy(),
        () => undefined,
      );
  }
}

/** A function that runs once, on first call, and answers the same promise after (a failure is tried again). */
function once<T>(make: () => Promise<T>): (() => Promise<T>) & { started: boolean } {
  let kept: Promise<T> | undefined;
  const fn = Object.assign(
    () => {
      if (!kept) {
        fn.started = true;
        kept = make();
        kept.catch(() => (kept = undefined));
      }
      return kept;
    },
    { started: false },
  );
  return fn;
}

/** The blob store the settings name: an S3-compatible bucket when BLOB_STORE=s3, else a directory. */
export function openBlobStore(settings: { s3?: S3Settings; blobDir: string }): BlobStore {
  return settings.s3 ? new S3BlobStore(settings.s3) : new FileBlobStore(settings.blobDir);
}

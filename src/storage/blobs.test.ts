import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
// s3rver ships CommonJS without types: a fake S3 on 127.0.0.1 for the S3-compatible store.
// @ts-expect-error no type declarations
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../../test/support/service.js';
import { type BlobStore, BlobTooLargeError, FileBlobStore, RUN_ASSET_KINDS, S3BlobStore } from './blobs.js';

/** The same contract for every blob store: content-addressed keys, per account, bounded uploads. */
describe.each(['file', 's3'] as const)('the %s blob store', (backend) => {
  let dir: string;
  let store: BlobStore;
  let s3: { close(cb: () => void): void } | undefined;
  const account = randomUUID();
  const other = randomUUID();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    if (backend === 'file') {
      store = new FileBlobStore(path.join(dir, 'blobs'));
    } else {
      const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dir, 's3'), configureBuckets: [{ name: 'blobs' }] });
      const address = (await server.run()) as AddressInfo;
      s3 = server;
      store = new S3BlobStore({
        bucket: 'blobs',
        endpoint: `http://127.0.0.1:${address.port}`,
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        forcePathStyle: true,
        prefix: 'test/',
      });
    }
  });
  afterAll(async () => {
    if (s3) await new Promise<void>((resolve) => s3!.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores bytes under the key of their content, once, and reads them back', async () => {
    const first = await store.put(account, 'code-bundles', Readable.from([Buffer.from('bundle '), Buffer.from('bytes')]), 1024);
    expect(first.size).toBe(12);
    expect(first.key).toBe(`code-bundles/${createHash('sha256').update('bundle bytes').digest('hex')}.tar.gz`);
    const again = await store.put(account, 'code-bundles', Readable.from([Buffer.from('bundle bytes')]), 1024);
    expect(again.key).toBe(first.key);
    const opened = await store.open(account, first.key);
    expect(opened!.size).toBe(12);
    expect(await text(opened!.stream)).toBe('bundle bytes');
    expect(await store.has(account, first.key)).toBe(true);
  });

  it("one account's key names nothing for another; malformed keys name nothing", async () => {
    const { key } = await store.put(account, 'snapshots', Readable.from([Buffer.from('png')]), 1024);
    expect(key).toMatch(/^snapshots\/[0-9a-f]{64}$/);
    expect(await store.open(other, key)).toBeUndefined();
    expect(await store.has(other, key)).toBe(false);
    for (const bad of [`../${key}`, `${key}/..`, 'snapshots/zz', '/etc/passwd', `code-bundles/${key.slice(10)}`]) {
      expect(await store.has(account, bad)).toBe(false);
      expect(await store.open(account, bad)).toBeUndefined();
    }
  });

  it("sweeps run assets older than the cut-off, every account's, and nothing else", async () => {
    const shot = await store.put(account, 'screenshots', Readable.from([Buffer.from(`shot ${backend}`)]), 1024);
    const trace = await store.put(other, 'traces', Readable.from([Buffer.from(`trace ${backend}`)]), 1024);
    const bundle = await store.put(account, 'code-bundles', Readable.from([Buffer.from(`kept ${backend}`)]), 1024);
    // Nothing is older than a minute ago.
    expect(await store.sweep(RUN_ASSET_KINDS, new Date(Date.now() - 60_000))).toBe(0);
    expect(await store.has(account, shot.key)).toBe(true);
    // Everything is older than a minute from now: the screenshot and the trace go, the bundle stays.
    expect(await store.sweep(RUN_ASSET_KINDS, new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(2);
    expect(await store.has(account, shot.key)).toBe(false);
    expect(await store.has(other, trace.key)).toBe(false);
    expect(await store.has(account, bundle.key)).toBe(true);
    // The same bytes kept again are there again.
    await store.put(account, 'screenshots', Readable.from([Buffer.from(`shot ${backend}`)]), 1024);
    expect(await store.has(account, shot.key)).toBe(true);
  });

  it('refuses a body past the limit and keeps nothing of it', async () => {
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(store.put(account, 'code-bundles', big, 1000)).rejects.toBeInstanceOf(BlobTooLargeError);
    await expect(store.put(account, 'code-bundles', Readable.from([Buffer.alloc(1001)]), 1000)).rejects.toThrow('maximum allowed: 1000');
  });
});

describe('the service with BLOB_STORE=s3', () => {
  it('keeps uploaded code bundles in the bucket', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'blobs-svc-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'bundles' }] });
    const address = (await server.run()) as AddressInfo;
    const svc = await startTestService({
      BLOB_STORE: 's3',
      S3_BUCKET: 'bundles',
      S3_ENDPOINT: `http://127.0.0.1:${address.port}`,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    try {
      const res = await fetch(`${svc.url}/next/checkly-storage/upload-code-bundle`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/octet-stream' },
        body: Buffer.from('suite'),
      });
      const { key } = (await res.json()) as { key: string };
      const objects = await fetch(`http://127.0.0.1:${address.port}/bundles`).then((r) => r.text());
      expect(objects).toContain(`${svc.defaultAccountId}/${key}`);
      const download = await svc.call('POST', '/next/checkly-storage/download', { body: { key } });
      expect(download.text).toBe('suite');
    } finally {
      await svc.stop();
      await new Promise<void>((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

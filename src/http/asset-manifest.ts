import { Type, type Static } from '@sinclair/typebox';
import type { KeptAsset } from '../model/results.js';
import type { BlobStore } from '../storage/blobs.js';
import { notFound } from './errors.js';
import { StringEnum } from './schemas.js';

/**
 * The anchor's asset manifest of a result (`GET /v1/check-results/…/assets`, `/v1/test-sessions/…/results/…/assets`),
 * which its CLI's `checkly assets list|download` read, and the download of one listed file.
 */

export const ASSET_TYPES = ['log', 'trace', 'video', 'screenshot', 'pcap', 'report', 'file'] as const;

export const AssetManifestQuery = Type.Object(
  {
    type: Type.Optional(Type.Union([StringEnum(ASSET_TYPES), Type.Array(StringEnum(ASSET_TYPES), { maxItems: 7 })], { description: 'Only assets of these types' })),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'A glob (`*`, `?`) matched case-insensitively against the name' })),
  },
  { additionalProperties: false },
);

const Source = Type.Object({
  type: StringEnum(['check-result', 'test-session-result'] as const),
  checkId: Type.Optional(Type.String()),
  checkName: Type.String(),
  checkType: Type.String(),
  resultId: Type.String(),
  testSessionId: Type.Optional(Type.String()),
});

export const AssetManifest = Type.Object({
  assets: Type.Array(
    Type.Object({
      type: StringEnum(ASSET_TYPES),
      name: Type.String({ minLength: 1 }),
      url: Type.String({ description: 'Authenticated API URL of the file' }),
      contentType: Type.String({ minLength: 1 }),
      source: Source,
    }),
  ),
  truncated: Type.Boolean(),
});

/** A case-insensitive glob (`*`, `?`) over a whole name. */
function globMatcher(glob: string): (name: string) => boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
  return (name) => re.test(name);
}

/** The manifest of `assets` narrowed by the query, each with its download URL. */
export function assetManifest(
  assets: readonly KeptAsset[],
  query: Static<typeof AssetManifestQuery>,
  at: { url: (name: string) => string; source: Static<typeof Source> },
): Static<typeof AssetManifest> {
  const types = query.type === undefined ? undefined : new Set<string>([query.type].flat());
  const glob = query.name ? globMatcher(query.name) : undefined;
  return {
    assets: assets
      .filter((a) => (!types || types.has(a.type)) && (!glob || glob(a.name)))
      .map((a) => ({ type: a.type, name: a.name, url: at.url(a.name), contentType: a.contentType, source: at.source })),
    truncated: false,
  };
}

/** The answer carrying one listed file, from the account's blobs; 404 when it is not listed or gone. */
export async function assetDownload(blobs: BlobStore, accountId: string, assets: readonly KeptAsset[], name: string) {
  const asset = assets.find((a) => a.name === name);
  if (!asset) throw notFound();
  const blob = await blobs.open(accountId, asset.key);
  if (!blob) throw notFound();
  return {
    status: 200 as const,
    body: blob.stream,
    headers: { 'Content-Type': asset.contentType, 'Content-Length': String(blob.size), 'Content-Disposition': `attachment; filename="${asset.name.replace(/[^\w.-]/g, '_')}"` },
  };
}

import { type Static, Type } from '@sinclair/typebox';
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
    type: Type.Optional(
      Type.Union([StringEnum(ASSET_TYPES), Type.Array(StringEnum(ASSET_TYPES), { maxItems: 7 })], { description: 'Only assets of these types' }),
    ),
    name: Type.Optional(Type.String({ maxLength: 100, description: 'A glob (`*`, `?`) matched case-insensitively against the name' })),
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

/**
 * A case-insensitive glob (`*`, `?`) over a whole name, matched in O(pattern × name) time without a regular
 * expression: on a mismatch only the last `*` takes one more character (a pattern of many stars cannot
 * backtrack exponentially, as `.*` repeated in a regular expression does).
 */
export function globMatcher(glob: string): (name: string) => boolean {
  const pattern = [...glob.toLowerCase()];
  return (raw) => {
    const name = [...raw.toLowerCase()];
    let p = 0;
    let n = 0;
    let star = -1;
    let resume = 0;
    while (n < name.length) {
      if (p < pattern.length && (pattern[p] === '?' || (pattern[p] !== '*' && pattern[p] === name[n]))) {
        p++;
        n++;
      } else if (p < pattern.length && pattern[p] === '*') {
        star = p++;
        resume = n;
      } else if (star >= 0) {
        p = star + 1;
        n = ++resume;
      } else {
        return false;
      }
    }
    while (p < pattern.length && pattern[p] === '*') p++;
    return p === pattern.length;
  };
}

/** The manifest of `assets` narrowed by the query, each with its download URL. */
/**
 * Where links in an answer point: PUBLIC_URL when the operator gave it (a proxy's public name), otherwise the
 * address this request was sent to, so a client that reached the service as `localhost` gets `localhost` links
 * (the anchor CLI sends its key only to the origin it was pointed at).
 */
export function linkOrigin(config: { publicUrl: string | undefined; publicUrlGiven: boolean }, client: { origin: string }): string {
  return config.publicUrlGiven && config.publicUrl ? config.publicUrl : client.origin;
}

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
    headers: {
      // Stored results written before posted assets were checked may hold any text here.
      'Content-Type': /^[\w.+-]+\/[\w.+-]+$/.test(asset.contentType) ? asset.contentType : 'application/octet-stream',
      'Content-Length': String(blob.size),
      'Content-Disposition': `attachment; filename="${asset.name.replace(/[^\w.-]/g, '_')}"`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "sandbox; default-src 'none'",
    },
  };
}

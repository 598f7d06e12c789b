import { UUID } from '../http/ids.js';
import type { Rules } from '../http/rules.js';
import type { Sql } from '../storage/postgres.js';

/** Fields of a check or group body that name other resources of the account. */
export interface References {
  privateLocations?: string[] | null;
  setupSnippetId?: number | null;
  tearDownSnippetId?: number | null;
  request?: { sslClientCertificateId?: string | null } | unknown;
}

/**
 * Every private location, snippet and client certificate a body names must be the account's: one query
 * for all of them, and each one that is not is a 400 naming its field.
 */
export async function checkReferences(db: Sql, accountId: string, body: References, rules: Rules): Promise<void> {
  const locations = [...new Set(body.privateLocations ?? [])];
  const snippets = [body.setupSnippetId, body.tearDownSnippetId].filter((id): id is number => typeof id === 'number');
  const certificate = (body.request as { sslClientCertificateId?: unknown } | undefined)?.sslClientCertificateId;
  const certId = typeof certificate === 'string' ? certificate : undefined;
  if (!locations.length && !snippets.length && certId === undefined) return;
  const [found] = await db<{ locations: string[] | null; snippets: number[] | null; certificates: number }[]>`select
      (select array_agg(slug_name) from private_locations where account_id = ${accountId} and slug_name = any(${locations}::text[])) as locations,
      (select array_agg(id) from snippets where account_id = ${accountId} and id = any(${snippets}::bigint[])) as snippets,
      (select count(*)::int from client_certificates where account_id = ${accountId}
        and id = ${certId !== undefined && UUID.test(certId) ? certId : null}::uuid) as certificates`;
  const knownLocations = new Set(found.locations ?? []);
  (body.privateLocations ?? []).forEach((slug, i) =>
    rules.check(knownLocations.has(slug), `body.privateLocations[${i}]`, 'exists', 'names no private location of this account (its slugName)'),
  );
  const knownSnippets = new Set((found.snippets ?? []).map(Number));
  for (const field of ['setupSnippetId', 'tearDownSnippetId'] as const) {
    const id = body[field];
    if (typeof id === 'number') rules.check(knownSnippets.has(id), `body.${field}`, 'exists', 'names no snippet of this account');
  }
  if (certId !== undefined) {
    rules.check(found.certificates > 0, 'body.request.sslClientCertificateId', 'exists', 'names no client certificate of this account');
  }
}

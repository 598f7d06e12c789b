import { Type } from '@sinclair/typebox';
import { alertChannelRoutes } from '../alerts/index.js';
import { checkGroupRoutes, checkRoutes } from '../checks/index.js';
import { RouteCaller } from '../http/invoke.js';
import { type AnyRoute, defineRoute, type Method } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { Principal } from '../model/accounts.js';
import { snippetRoutes, variableRoutes } from '../resources/index.js';
import type { Deps } from '../storage/deps.js';
import { credentialName, type Flagged, inline, inlinePart, preview, scanResource, tokensIn } from './detect.js';
import { type ProjectRef, projectRefs } from './repository.js';

const ENTITY_TYPES = ['CHECK', 'CHECK_GROUP', 'SNIPPET', 'ALERT_CHANNEL', 'INTEGRATION', 'ENVIRONMENT_VARIABLE'] as const;
type EntityType = (typeof ENTITY_TYPES)[number];

/** The anchor's SecretScansV1Finding. */
const Finding = Type.Object({
  entityType: StringEnum(ENTITY_TYPES, { description: 'The kind of resource the flagged value lives on' }),
  entityId: Type.String({ description: 'The id of the resource holding the flagged value. Numeric ids are serialized as strings.' }),
  entityName: Nullable(Type.String({ description: 'The display name (or key, for environment variables) of the resource' })),
  checkType: Nullable(Type.String({ description: 'The check type when entityType is CHECK, null otherwise' })),
  project: Nullable(
    Type.Object(
      { logicalId: Type.String(), name: Nullable(Type.String()) },
      { description: 'Set when the resource is managed by a monitoring-as-code project (checkly deploy), null otherwise' },
    ),
  ),
  logicalId: Nullable(Type.String({ description: 'The monitoring-as-code logicalId of this resource within its project' })),
  fieldPath: Type.String({ description: 'Path of the flagged field on the public API resource', examples: ['request.headers[2].value'] }),
  fieldKey: Nullable(Type.String({ description: 'The key of the flagged key-value entry (header name, query parameter name, variable key), if any' })),
  valuePreview: Nullable(Type.String({ description: 'A redacted preview of the detected credential; the full value is never returned' })),
});

/** The list routes a scan reads, as the principal may read them (what the API masks stays masked). */
const READS: ReadonlyArray<readonly [Method, string]> = [
  ['GET', '/v1/checks'],
  ['GET', '/v1/check-groups'],
  ['GET', '/v1/snippets'],
  ['GET', '/v1/alert-channels'],
  ['GET', '/v1/variables'],
];
const PAGE = 100;

/**
 * The anchor's secret scan (GET /v1/secret-scans, docs/resources.md): the account's readable values that look like
 * credentials stored inline, each pointing at its field. It reads every resource through its own list route, as the
 * caller may read it, so a value the API masks (secret and locked variables, secret webhook headers, write-only keys)
 * is never inspected; findings hold a redacted preview, never the value.
 */
export function secretScanRoutes(deps: Deps): AnyRoute[] {
  const caller = new RouteCaller(
    [...checkRoutes(deps), ...checkGroupRoutes(deps), ...snippetRoutes(deps), ...alertChannelRoutes(deps), ...variableRoutes(deps)],
    READS,
  );

  async function everything(principal: Principal, path: string): Promise<Record<string, unknown>[]> {
    const all: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const reply = await caller.call(principal, 'GET', path, { query: { limit: PAGE, page } });
      const items = (reply.body ?? []) as Record<string, unknown>[];
      all.push(...items);
      if (items.length < PAGE) return all;
    }
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/secret-scans',
      operationId: 'getV1Secretscans',
      summary: 'Lists readable configuration values that look like inline credentials.',
      description:
        "Scans the account's checks (request headers, query parameters, basic auth, URLs, bodies, gRPC metadata, scripts, environment variables), " +
        'check groups, snippets, alert channels and account environment variables for readable values that look like credentials stored inline ' +
        '(a credential-named header, parameter, variable or property with a value that is not only `{{VARIABLE}}` references, a password in a URL, ' +
        'a token of a known shape). Locked and secret-backed values are not inspected or reported. Each finding points at the exact field; ' +
        'detected values are never returned, only a redacted preview.',
      tag: 'Secret scans',
      access: 'read',
      schema: { responses: { 200: Type.Array(Finding, { description: 'All findings of the scan.' }) } },
      handler: async ({ principal }) => {
        const [checks, groups, snippets, channels, variables, projects] = await Promise.all([
          everything(principal, '/v1/checks'),
          everything(principal, '/v1/check-groups'),
          everything(principal, '/v1/snippets'),
          everything(principal, '/v1/alert-channels'),
          everything(principal, '/v1/variables'),
          projectRefs(deps.sql, principal.account.id),
        ]);
        const findings: unknown[] = [];
        const add = (entityType: EntityType, flagged: Flagged[], opts: { id: string; name: string | null; checkType?: string; project?: ProjectRef }) => {
          for (const f of flagged) {
            findings.push({
              entityType,
              entityId: opts.id,
              entityName: opts.name,
              checkType: opts.checkType ?? null,
              project: opts.project?.project ?? null,
              logicalId: opts.project?.logicalId ?? null,
              fieldPath: f.fieldPath,
              fieldKey: f.fieldKey,
              valuePreview: preview(f.value),
            });
          }
        };
        const named = (r: Record<string, unknown>) => (typeof r.name === 'string' ? r.name : null);
        for (const c of checks)
          add('CHECK', scanResource(c), { id: String(c.id), name: named(c), checkType: String(c.checkType), project: projects.get(`check:${String(c.id)}`) });
        for (const g of groups) add('CHECK_GROUP', scanResource(g), { id: String(g.id), name: named(g), project: projects.get(`check-group:${String(g.id)}`) });
        for (const s of snippets) add('SNIPPET', scanResource(s), { id: String(s.id), name: named(s) });
        for (const ch of channels) {
          const name = (ch.config as { name?: unknown } | undefined)?.name;
          add('ALERT_CHANNEL', scanResource(ch), {
            id: String(ch.id),
            name: typeof name === 'string' ? name : null,
            project: projects.get(`alert-channel:${String(ch.id)}`),
          });
        }
        for (const v of variables as { key: string; value: string; locked?: boolean; secret?: boolean }[]) {
          if (v.locked || v.secret || !v.value) continue;
          const flagged: Flagged[] =
            credentialName(v.key) && inline(v.value)
              ? [{ fieldPath: 'value', fieldKey: v.key, value: inlinePart(v.value) || v.value }]
              : tokensIn(v.value).map((value) => ({ fieldPath: 'value', fieldKey: v.key, value }));
          add('ENVIRONMENT_VARIABLE', flagged, { id: v.key, name: v.key });
        }
        return { status: 200, body: findings };
      },
    }),
  ];
}

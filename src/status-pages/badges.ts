import { Type } from '@sinclair/typebox';
import { makeBadge } from 'badge-maker';
import { type Coverage, coverageNow } from '../coverage/index.js';
import { notFound } from '../http/errors.js';
import { PositiveId, UUID } from '../http/ids.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import type { Deps } from '../storage/deps.js';
import { badgeOfCheck, badgeOfGroup, type BadgeRow as StatusRow } from './repository.js';

/**
 * Status badges for READMEs and wikis (the anchor's `/v1/badges/…`): an SVG drawn by shields.io's own
 * `badge-maker`, naming the check or group and its state (passing, degraded, failing; "no data" before a run and when its runs stopped,
 * docs/analytics.md; "paused" when deactivated),
 * optionally with the latest response time. Public like the anchor's, and like the anchor's only for an account that
 * turned them on (`PATCH /v1/account {"badgesEnabled": true}`): group ids are sequential, so badges on by default
 * would let anyone count through every account's group names and states. Any other id is a 404. Cacheable for 60 s.
 */

const Query = Type.Object(
  {
    style: StringEnum(['flat', 'plastic', 'flat-square', 'for-the-badge', 'social'] as const, { default: 'flat' }),
    theme: StringEnum(['light', 'dark', 'default'] as const, { default: 'default' }),
    responseTime: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
type State = 'passing' | 'degraded' | 'failing' | 'no data' | 'paused';
const COLOUR: Record<State, string> = { passing: '#2da44e', degraded: '#d4a72c', failing: '#cf222e', 'no data': '#8c959f', paused: '#8c959f' };
const LABEL_COLOUR = { light: '#eaeef2', dark: '#24292f', default: '#555' } as const;
// A group is as bad as its worst check: one that is not reporting outranks passing.
const RANK: Record<State, number> = { failing: 0, degraded: 1, 'no data': 2, passing: 3, paused: 4 };

const stateOf = (r: StatusRow, coverage: Coverage | undefined): State =>
  coverage?.state === 'PAUSED'
    ? 'paused'
    : r.has_failures === null || coverage?.state === 'NO_DATA'
      ? 'no data'
      : r.has_failures || r.has_errors
        ? 'failing'
        : r.is_degraded
          ? 'degraded'
          : 'passing';

/** The mean of the latest run's duration in each location, in ms; null before any. */
function latestMs(rows: StatusRow[]): number | null {
  const values = rows.flatMap((r) => Object.values(r.latest_by_location ?? {}).flatMap((l) => (typeof l?.duration === 'number' ? [l.duration] : [])));
  return values.length ? Math.round(values.reduce((a, b) => a + b, 0) / values.length) : null;
}

function svg(
  label: string,
  rows: StatusRow[],
  coverage: Map<string, Coverage>,
  query: { style: string; theme: keyof typeof LABEL_COLOUR; responseTime: boolean },
): string {
  const state = rows.length ? rows.map((r) => stateOf(r, coverage.get(r.id))).sort((a, b) => RANK[a] - RANK[b])[0]! : 'no data';
  const ms = query.responseTime ? latestMs(rows) : null;
  return makeBadge({
    label: label.slice(0, 80),
    message: ms === null ? state : `${state} · ${ms} ms`,
    color: COLOUR[state],
    labelColor: LABEL_COLOUR[query.theme],
    style: query.style as 'flat',
  });
}

export function badgeRoutes({ sql, config }: Deps): AnyRoute[] {
  const coverageOf = async (rows: StatusRow[]) =>
    rows.length
      ? coverageNow(
          sql,
          rows[0]!.account_id,
          { afterPeriods: config.alerts.noDataAfterPeriods, graceMs: config.alerts.noDataGraceMs },
          { checkIds: rows.map((r) => r.id) },
        )
      : new Map<string, Coverage>();
  const tag = 'Badges';
  const reply = (body: string) => ({
    status: 200,
    body,
    headers: {
      'Content-Type': 'image/svg+xml; charset=utf-8',
      'Cache-Control': 'public, max-age=60',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      'X-Content-Type-Options': 'nosniff',
    },
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/badges/checks/{checkId}',
      operationId: 'getCheckBadge',
      summary: "A check's status badge (SVG)",
      tag,
      access: 'public',
      errors: [400, 404],
      contentType: 'image/svg+xml',
      rateLimit: { points: 600, windowSeconds: 60, bucket: 'badges' },
      schema: {
        params: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        query: Query,
        responses: { 200: Type.String({ description: 'An SVG image' }) },
      },
      handler: async ({ params, query }) => {
        if (!UUID.test(params.checkId)) throw notFound();
        const rows = await badgeOfCheck(sql, params.checkId);
        if (!rows.length) throw notFound();
        return reply(svg(rows[0]!.name, rows, await coverageOf(rows), query));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/badges/groups/{groupId}',
      operationId: 'getGroupBadge',
      summary: "A check group's status badge (SVG): its worst check",
      tag,
      access: 'public',
      errors: [400, 404],
      contentType: 'image/svg+xml',
      rateLimit: { points: 600, windowSeconds: 60, bucket: 'badges' },
      schema: {
        params: Type.Object({ groupId: PositiveId }, { additionalProperties: false }),
        query: Query,
        responses: { 200: Type.String({ description: 'An SVG image' }) },
      },
      handler: async ({ params, query }) => {
        const badge = await badgeOfGroup(sql, params.groupId);
        if (!badge) throw notFound();
        return reply(svg(badge.name ?? 'group', badge.rows, await coverageOf(badge.rows), query));
      },
    }),
  ];
}

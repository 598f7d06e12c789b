import { Type } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { notFound } from '../http/errors.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { recordPing } from './heartbeats.js';

const Token = Type.Object(
  { token: Type.String({ format: 'uuid', description: "The check's ping token (heartbeat.pingToken)" }) },
  { additionalProperties: false },
);
const Pinged = Type.Object({ status: Type.Literal('ok'), checkId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** Heartbeat pings: no key (the token is the credential), limited per token; GET also answers HEAD. */
export function heartbeatRoutes({ sql, ingest }: Deps): AnyRoute[] {
  const routes = (['GET', 'POST'] as const).flatMap((method) =>
    ([false, true] as const).map((failed) =>
      defineRoute({
        method,
        path: failed ? '/ping/{token}/fail' : '/ping/{token}',
        operationId: `ping${failed ? 'Fail' : ''}${method === 'POST' ? 'Post' : ''}`,
        summary: failed ? 'Report a failed run of a heartbeat check (its job ran and failed)' : 'Ping a heartbeat check: its job ran',
        description:
          'Records a run through the normal ingest path and moves the deadline to period + grace from now; a check that ' +
          'is not pinged by then gets a failed run. At most 120 pings a minute per token, GET, HEAD and POST, passing or failing, together.',
        tag: 'Heartbeats',
        access: 'public',
        rateLimit: { points: 120, windowSeconds: 60, bucket: 'ping' },
        errors: [400, 404],
        schema: { params: Token, responses: { 200: Pinged } },
        handler: async ({ params }) => {
          const pinged = await recordPing(sql, ingest, params.token.toLowerCase(), failed);
          if (!pinged) throw notFound();
          return { status: 200, body: { status: 'ok' as const, checkId: pinged.checkId } };
        },
      }),
    ),
  );
  return routes;
}

import { Type } from '@sinclair/typebox';
import { type AnyRoute, defineRoute } from '../../http/route.js';
import { LOCATION_NAMES, LOCATIONS } from '../../model/checks.js';
import { runnersSeen } from '../../runners/index.js';
import type { Deps } from '../../storage/deps.js';

const LocationBody = Type.Object(
  {
    region: Type.String({ description: 'The location id checks name in `locations`' }),
    name: Type.String({ description: 'Friendly name' }),
    runners: Type.Optional(
      Type.Integer({ description: 'Runners of this service serving it now (seen in the last 30 s): 0 means its runs wait; absent when unknown (Redis out)' }),
    ),
  },
  { additionalProperties: false },
);

export function locationRoutes({ redis, config }: Pick<Deps, 'redis' | 'config'>): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/locations',
      operationId: 'listLocations',
      summary: 'List the public run locations (private locations: /v1/private-locations)',
      tag: 'Locations',
      access: 'read',
      schema: { responses: { 200: Type.Array(LocationBody) } },
      handler: async () => {
        // Redis out: the list still answers, without runner counts (unknown, not none).
        const seen = await runnersSeen(redis, config.redisPrefix).then(
          (m) => [...m.values()],
          () => undefined,
        );
        return {
          status: 200,
          body: LOCATIONS.map((region) => ({
            region,
            name: LOCATION_NAMES[region],
            ...(seen ? { runners: seen.filter((l) => l.includes(region)).length } : {}),
          })),
        };
      },
    }),
  ];
}

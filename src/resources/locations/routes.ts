import { Type } from '@sinclair/typebox';
import { type AnyRoute, defineRoute } from '../../http/route.js';
import { LOCATION_NAMES, LOCATIONS } from '../../model/checks.js';

const LocationBody = Type.Object(
  {
    region: Type.String({ description: 'The location id checks name in `locations`' }),
    name: Type.String({ description: 'Friendly name' }),
  },
  { additionalProperties: false },
);

export function locationRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/locations',
      operationId: 'listLocations',
      summary: 'List the public run locations (private locations: /v1/private-locations)',
      tag: 'Locations',
      access: 'read',
      schema: { responses: { 200: Type.Array(LocationBody) } },
      handler: () => ({ status: 200, body: LOCATIONS.map((region) => ({ region, name: LOCATION_NAMES[region] })) }),
    }),
  ];
}

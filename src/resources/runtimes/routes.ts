import { Type } from '@sinclair/typebox';
import { notFound } from '../../http/errors.js';
import { type AnyRoute, defineRoute } from '../../http/route.js';
import { StringEnum } from '../../http/schemas.js';
import { RUNTIME_IDS } from '../../model/checks.js';
import { RUNTIMES } from './catalog.js';

export const RuntimeBody = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    multiStepSupport: Type.Boolean(),
    nodeJsVersion: Type.String({ minLength: 1 }),
    stage: StringEnum(['ALPHA', 'BETA', 'CURRENT', 'DEPRECATED', 'REMOVED', 'STABLE'] as const),
    runtimeEndOfLife: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.String({ minLength: 1 }),
    dependencies: Type.Record(Type.String(), Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export function runtimeRoutes(): AnyRoute[] {
  const tag = 'Runtimes';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/runtimes',
      operationId: 'listRuntimes',
      summary: 'List the runtimes a check can run on, newest first',
      tag,
      access: 'read',
      schema: { responses: { 200: Type.Array(RuntimeBody) } },
      handler: () => ({ status: 200, body: RUNTIME_IDS.map((id) => RUNTIMES[id]) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/runtimes/{id}',
      operationId: 'getRuntime',
      summary: 'One runtime and its dependencies',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 32 }) }, { additionalProperties: false }),
        responses: { 200: RuntimeBody },
      },
      handler: ({ params }) => {
        if (!Object.hasOwn(RUNTIMES, params.id)) throw notFound();
        return { status: 200, body: RUNTIMES[params.id as keyof typeof RUNTIMES] };
      },
    }),
  ];
}

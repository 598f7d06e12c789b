import { type Static, Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';

/** Every resource type the anchor's CLI puts in a project (its `Project.data` keys), in the CLI's order. */
export const RESOURCE_TYPES = [
  'status-page-service',
  'status-page',
  'status-page-component',
  'status-page-automation-rule',
  'check-group',
  'check',
  'alert-channel',
  'alert-channel-subscription',
  'maintenance-window',
  'private-location',
  'private-location-check-assignment',
  'private-location-group-assignment',
  'dashboard',
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** The CLI's rule for logical ids (`/` and `#` included: subscriptions are `check-alert-channel-subscription#a#b`). */
const LogicalId = Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9_\\-/#.]+$', title: 'letters, digits and _ - / # .' });

export const ProjectInfo = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    logicalId: LogicalId,
    repoUrl: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  },
  { additionalProperties: false },
);

const Resource = Type.Object(
  {
    logicalId: LogicalId,
    type: StringEnum(RESOURCE_TYPES),
    physicalId: Type.Optional(
      Nullable(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })])),
    ),
    member: Type.Boolean(),
    payload: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    sourceFile: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  },
  { additionalProperties: false },
);
export type Resource = Static<typeof Resource>;

/** The body of a deploy (`ProjectSync` in the CLI's source). */
export const ProjectSync = Type.Object(
  {
    project: ProjectInfo,
    sharedFiles: Type.Array(
      Type.Object({ path: Type.String({ maxLength: 4096 }), content: Type.String({ maxLength: 5_000_000 }) }, { additionalProperties: false }),
      {
        maxItems: 10_000,
        default: [],
      },
    ),
    resources: Type.Array(Resource, { maxItems: 100_000 }),
    repoInfo: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: false },
);
export type ProjectSync = Static<typeof ProjectSync>;

export type Action = 'CREATE' | 'UPDATE' | 'DELETE' | 'DETACHED';

/** One line of a deploy's answer: what happened (or, in a dry run, would happen) to a resource. */
export interface Change {
  type: ResourceType;
  logicalId: string;
  physicalId?: string | number;
  action: Action;
}

export const ChangeSchema = Type.Object({
  type: Type.String(),
  logicalId: Type.String(),
  physicalId: Type.Optional(Type.Union([Type.String(), Type.Number()])),
  action: StringEnum(['CREATE', 'UPDATE', 'DELETE', 'DETACHED'] as const),
});

export const DeployedProject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  logicalId: Type.String(),
  repoUrl: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const DeployResponse = Type.Object({ project: DeployedProject, diff: Type.Array(ChangeSchema) });
export type DeployResponse = Static<typeof DeployResponse>;

export const DEPLOYMENT_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<DeploymentStatus> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export const Deployment = Type.Object({
  id: Type.String({ format: 'uuid' }),
  logicalId: Type.String(),
  status: StringEnum(DEPLOYMENT_STATUSES),
  dryRun: Type.Boolean(),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  result: Nullable(DeployResponse),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  endedAt: Nullable(Type.String({ format: 'date-time' })),
  cancelRequestedAt: Nullable(Type.String({ format: 'date-time' })),
});
export type Deployment = Static<typeof Deployment>;

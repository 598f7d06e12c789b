import { type Static, Type } from '@sinclair/typebox';
import { IgnoredField, Nullable, StringEnum } from '../http/schemas.js';
import { TimeParam } from '../http/time.js';
import { CHECK_TYPES } from '../model/checks.js';

export const SESSION_STATES = ['RUNNING', 'FAILED', 'PASSED', 'CANCELLED'] as const;
export type SessionState = (typeof SESSION_STATES)[number];

const Uuid = Type.String({ format: 'uuid' });
const Text = Type.String({ maxLength: 2048 });

export const Metadata = Type.Object(
  {
    environment: Type.Optional(Text),
    repoUrl: Type.Optional(Nullable(Text)),
    commitId: Type.Optional(Nullable(Text)),
    commitOwner: Type.Optional(Nullable(Text)),
    commitMessage: Type.Optional(Nullable(Type.String({ maxLength: 10000 }))),
    branchName: Type.Optional(Nullable(Text)),
    github: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'GitHub run details, kept as sent' })),
  },
  { additionalProperties: false },
);

export const ResultInput = Type.Object(
  {
    testSessionResultId: Type.Optional(Uuid),
    testSessionResultLink: Type.Optional(Text),
    errorGroupIds: Type.Array(Uuid, { maxItems: 1000, default: [] }),
    hasErrors: Type.Boolean({ default: false }),
    hasFailures: Type.Boolean({ default: false }),
    isDegraded: Type.Boolean({ default: false }),
    aborted: Type.Boolean({ default: false }),
    checkId: Uuid,
    checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: "Taken from the check when it is one of the account's; required otherwise" })),
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    runLocation: Type.String({ minLength: 1, maxLength: 255 }),
    responseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 86_400_000 }))),
    startedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    stoppedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);
export type ResultInput = Static<typeof ResultInput>;

export const Result = Type.Object({
  testSessionResultId: Uuid,
  testSessionResultLink: Type.String(),
  errorGroupIds: Type.Array(Uuid),
  hasErrors: Type.Boolean(),
  hasFailures: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  checkId: Uuid,
  checkType: StringEnum(CHECK_TYPES),
  name: Type.String(),
  runLocation: Type.String(),
  resultType: StringEnum(['FINAL'] as const),
  status: StringEnum(SESSION_STATES, { description: 'CANCELLED when aborted, FAILED with failures or errors, else PASSED' }),
  responseTime: Nullable(Type.Number()),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
});
export type Result = Static<typeof Result>;

export const TestSession = Type.Object({
  testSessionId: Uuid,
  testSessionLink: Type.String({ description: "The link it was created with, or this session's own URL" }),
  name: Type.String(),
  status: StringEnum(SESSION_STATES),
  errorGroupIds: Type.Array(Uuid, { description: 'Error groups seen in the results of the session' }),
  startedAt: Type.String({ format: 'date-time' }),
  timeElapsed: Type.Number({ description: 'Milliseconds from startedAt to stoppedAt, or to now while running' }),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
  metadata: Type.Optional(Metadata),
  results: Type.Optional(Type.Array(Result)),
});

export const CreateSession = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    testSessionLink: Type.Optional(Text),
    metadata: Type.Optional(Metadata),
    results: Type.Optional(Type.Array(ResultInput, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

/** A list entry as the anchor API shapes it. */
export const SessionEntry = Type.Object(
  {
    id: Uuid,
    accountId: Uuid,
    projectId: Type.Null(),
    name: Type.String(),
    provider: StringEnum(['API', 'TRIGGER', 'PW_REPORTER'] as const, {
      description: 'API (this API, `checkly test --record`), TRIGGER (`checkly trigger`) or PW_REPORTER (the Playwright reporter)',
    }),
    errorGroupIds: Type.Array(Uuid),
    running: Type.Array(Uuid, { description: 'Results of the session by status' }),
    passed: Type.Array(Uuid),
    failed: Type.Array(Uuid),
    cancelled: Type.Array(Uuid),
    status: StringEnum(SESSION_STATES),
    region: Type.String({ description: 'Run location of the first result; empty before any' }),
    privateLocationId: Type.Null(),
    invoker: Type.Null(),
    repoUrl: Nullable(Type.String()),
    commitId: Nullable(Type.String()),
    commitOwner: Nullable(Type.String()),
    commitMessage: Nullable(Type.String()),
    branchName: Nullable(Type.String()),
    environment: Nullable(Type.String()),
    startedAt: Type.String({ format: 'date-time' }),
    stoppedAt: Nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const List = (items: ReturnType<typeof StringEnum> | ReturnType<typeof Type.String>, description: string) =>
  Type.Optional(Type.Array(items, { maxItems: 100, description }));

export const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    nextId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The nextId of the previous page' })),
    from: Type.Optional({ ...TimeParam, description: 'Sessions started at or after this time' }),
    to: Type.Optional({ ...TimeParam, description: 'Sessions started before this time' }),
    statuses: List(StringEnum(SESSION_STATES), 'Any of these statuses (all by default)'),
    branches: List(Type.String({ minLength: 1, maxLength: 2048 }), 'Any of these branch names'),
    users: List(Type.String({ minLength: 1, maxLength: 2048 }), 'Any of these commit owners'),
    providers: List(StringEnum(['GITHUB', 'VERCEL', 'API', 'TRIGGER', 'PW_REPORTER'] as const), 'Any of these providers'),
    noUsers: Type.Boolean({ default: false, description: 'With users: also sessions without a commit owner' }),
    textSearch: Type.Optional(Type.String({ minLength: 3, maxLength: 200, description: 'Part of the name, branch, commit message or owner, any case' })),
    errorGroupId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const CancelBody = Type.Optional(
  Type.Object({ sequenceId: Type.Optional(IgnoredField('a session is cancelled as a whole')) }, { additionalProperties: false }),
);

/** What the anchor CLI's `checkly test` posts; runners pick the run request up. */
export const RunBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    checkRunJobs: Type.Array(Type.Object({}, { additionalProperties: true }), {
      minItems: 1,
      maxItems: 1000,
      description: 'The checks to run, as the CLI bundles them',
    }),
    runLocation: Type.Union([
      Type.String({ minLength: 1, maxLength: 255 }),
      Type.Object({ type: Type.Literal('PUBLIC'), region: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
      Type.Object(
        { type: Type.Literal('PRIVATE'), slugName: Type.String({ minLength: 1, maxLength: 255 }), id: Type.String() },
        { additionalProperties: false },
      ),
    ]),
    shouldRecord: Type.Boolean({ default: true }),
    project: Type.Optional(Type.Object({ logicalId: Type.String({ maxLength: 255 }) }, { additionalProperties: true })),
    repoInfo: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    environment: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    sharedFiles: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 1000 })),
    streamLogs: Type.Optional(IgnoredField('logs are not streamed')),
    refreshCache: Type.Optional(IgnoredField('there is no cache to refresh')),
  },
  { additionalProperties: false },
);

import { type Static, Type } from '@sinclair/typebox';
import { IgnoredField, Nullable, NumberEnum } from '../http/schemas.js';
import { FREQUENCIES } from '../model/checks.js';
import { AlertSettings, ApiRequest, EnvironmentVariables, KeyValue, Location, RetryStrategy, RuntimeId } from './schemas.js';

/** What a group applies to the API checks in it: a base URL, headers, query parameters, assertions, auth. */
const ApiCheckDefaults = Type.Object(
  {
    url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    headers: Type.Optional(Type.Array(KeyValue, { maxItems: 100 })),
    queryParameters: Type.Optional(Type.Array(KeyValue, { maxItems: 100 })),
    assertions: Type.Optional(ApiRequest.properties.assertions),
    basicAuth: Type.Optional(Nullable(Type.Object({ username: Type.String(), password: Type.String() }, { additionalProperties: false }))),
  },
  { additionalProperties: false },
);

export const GroupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    activated: Type.Boolean({ default: true }),
    muted: Type.Boolean({ default: false }),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100, default: [] }),
    locations: Type.Array(Location, { uniqueItems: true, default: [] }),
    privateLocations: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }))),
    concurrency: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
    frequency: Type.Optional(Nullable(NumberEnum(FREQUENCIES))),
    alertSettings: Type.Optional(Nullable(AlertSettings)),
    useGlobalAlertSettings: Type.Boolean({ default: true }),
    environmentVariables: Type.Optional(Nullable(EnvironmentVariables)),
    retryStrategy: Type.Optional(Nullable(RetryStrategy)),
    doubleCheck: Type.Boolean({ default: true }),
    runtimeId: Type.Optional(Nullable(RuntimeId)),
    apiCheckDefaults: Type.Optional(Nullable(ApiCheckDefaults)),
    setupSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    tearDownSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    localSetupScript: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    localTearDownScript: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    runParallel: Type.Boolean({ default: false }),
    alertChannelSubscriptions: Type.Optional(
      Type.Array(Type.Object({ alertChannelId: Type.Integer({ minimum: 1 }), activated: Type.Boolean({ default: true }) }, { additionalProperties: false }), {
        maxItems: 100,
        description: "Replaces the group's alert channel subscriptions",
      }),
    ),
    browserCheckDefaults: Type.Optional(IgnoredField()),
  },
  { additionalProperties: false },
);

/**
 * The anchor's v2 group body: `useGlobalAlertSettings` and `runParallel` may be null and `retryStrategy` the
 * string "FALLBACK", each meaning the group does not override its checks' own setting; doubleCheck defaults off.
 */
export const GroupBodyV2 = Type.Object(
  {
    ...GroupBody.properties,
    useGlobalAlertSettings: Nullable(Type.Boolean(), { default: null, description: "null: each check's own setting applies" }),
    runParallel: Nullable(Type.Boolean(), { default: null, description: "null: each check's own setting applies" }),
    retryStrategy: Type.Optional(
      Type.Union([Nullable(RetryStrategy), Type.Literal('FALLBACK')], { description: "FALLBACK: each check's own retry strategy applies" }),
    ),
    doubleCheck: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/** A stored group: what either body version means, with "no override" as an absent or null value. */
export type GroupData = Omit<Static<typeof GroupBody>, 'alertChannelSubscriptions' | 'browserCheckDefaults' | 'useGlobalAlertSettings' | 'runParallel'> & {
  useGlobalAlertSettings: boolean | null;
  runParallel: boolean | null;
};

const { browserCheckDefaults: _ignored, alertChannelSubscriptions: _written, ...storedProperties } = GroupBody.properties;

export const Group = Type.Object({
  id: Type.Integer(),
  ...storedProperties,
  useGlobalAlertSettings: Nullable(Type.Boolean(), { description: "null (set by a v2 write): each check's own setting applies" }),
  runParallel: Nullable(Type.Boolean(), { description: "null (set by a v2 write): each check's own setting applies" }),
  alertChannelSubscriptions: Type.Array(Type.Object({ alertChannelId: Type.Integer(), activated: Type.Boolean() })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

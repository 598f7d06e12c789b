import { OptionalKind, type Static, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { IGNORED_PREFIX, IgnoredField, Nullable, NumberEnum, StringEnum } from '../http/schemas.js';
import { CHECK_TYPES, CREATABLE_TYPES, FREQUENCIES, LOCATIONS, RUNTIME_IDS, type TypeSegment } from '../model/checks.js';

const Str = (max = 2048) => Type.String({ maxLength: max });

export const Location = StringEnum(LOCATIONS);
export const RuntimeId = StringEnum(RUNTIME_IDS);
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 });

export const KeyValue = Type.Object({ key: Str(1024), value: Str(8192), locked: Type.Boolean({ default: false }) }, { additionalProperties: false });

export const EnvironmentVariable = Type.Object(
  {
    key: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 255 }),
    value: Nullable(Str(65536)),
    locked: Type.Boolean({ default: false }),
    secret: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
export const EnvironmentVariables = Type.Array(EnvironmentVariable, { maxItems: 100 });

export const AlertSettings = Type.Object(
  {
    escalationType: Type.Optional(StringEnum(['RUN_BASED', 'TIME_BASED'] as const)),
    runBasedEscalation: Type.Optional(Type.Object({ failedRunThreshold: Type.Integer({ minimum: 1, maximum: 5 }) }, { additionalProperties: false })),
    timeBasedEscalation: Type.Optional(Type.Object({ minutesFailingThreshold: Type.Integer({ minimum: 1, maximum: 60 }) }, { additionalProperties: false })),
    reminders: Type.Optional(
      Type.Object(
        { amount: Type.Integer({ minimum: 0, maximum: 100 }), interval: Type.Integer({ minimum: 1, maximum: 1440 }) },
        { additionalProperties: false },
      ),
    ),
    parallelRunFailureThreshold: Type.Optional(
      Type.Object({ enabled: Type.Boolean(), percentage: Type.Number({ minimum: 0, maximum: 100 }) }, { additionalProperties: false }),
    ),
    sslCertificates: Type.Optional(
      Type.Object({ enabled: Type.Boolean(), alertThreshold: Type.Integer({ minimum: 1, maximum: 90 }) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const RetryStrategy = Type.Object(
  {
    type: Type.Optional(StringEnum(['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY', 'NO_RETRIES'] as const)),
    baseBackoffSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3600 })),
    sameRegion: Type.Optional(Type.Boolean()),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    maxDurationSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86400 })),
    onlyOn: Type.Optional(Type.Array(StringEnum(['NETWORK_ERROR'] as const), { maxItems: 10 })),
  },
  { additionalProperties: false },
);

const TriggerIncident = Type.Object(
  {
    serviceId: Type.String({ minLength: 1, maxLength: 255 }),
    severity: Type.Optional(StringEnum(['CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR'] as const)),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Str(),
    notifySubscribers: Type.Boolean(),
  },
  { additionalProperties: false },
);

const Subscription = Type.Object({ alertChannelId: Type.Integer({ minimum: 1 }), activated: Type.Boolean({ default: true }) }, { additionalProperties: false });

const Dependency = Type.Object({ path: Str(1024), content: Str(1_000_000) }, { additionalProperties: false });

const ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME', 'RESPONSE_DATA', 'LATENCY', 'JSON_RESPONSE'] as const;
const assertion = (sources: readonly string[]) =>
  Type.Object(
    {
      source: StringEnum(sources),
      property: Type.Optional(Str(1024)),
      comparison: StringEnum([
        'EQUALS',
        'NOT_EQUALS',
        'HAS_KEY',
        'NOT_HAS_KEY',
        'HAS_VALUE',
        'NOT_HAS_VALUE',
        'IS_EMPTY',
        'NOT_EMPTY',
        'GREATER_THAN',
        'LESS_THAN',
        'CONTAINS',
        'NOT_CONTAINS',
        'IS_NULL',
        'NOT_NULL',
      ] as const),
      target: Type.Union([Str(4096), Type.Number()]),
      regex: Type.Optional(Nullable(Str(1024))),
    },
    { additionalProperties: false },
  );
const Assertions = Type.Array(assertion(ASSERTION_SOURCES), { maxItems: 50, default: [] });
const DnsAssertions = Type.Array(assertion([...ASSERTION_SOURCES, 'RESPONSE_CODE', 'TEXT_ANSWER', 'JSON_ANSWER']), { maxItems: 50, default: [] });
const IpFamily = StringEnum(['IPv4', 'IPv6'] as const, { default: 'IPv4' });
const Hostname = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' });
const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

export const ApiRequest = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      format: 'http-url-template',
      description: 'An http(s) URL, or a path the group apiCheckDefaults.url prefixes; `{{VARIABLE}}`s are filled in at run time',
    }),
    method: StringEnum(['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH', 'OPTIONS'] as const, { default: 'GET' }),
    followRedirects: Type.Boolean({ default: true }),
    skipSSL: Type.Boolean({ default: false }),
    body: Type.String({ maxLength: 1_000_000, default: '' }),
    bodyType: StringEnum(['NONE', 'JSON', 'FORM', 'RAW', 'GRAPHQL'] as const, { default: 'NONE' }),
    headers: Type.Array(KeyValue, { maxItems: 100, default: [] }),
    queryParameters: Type.Array(KeyValue, { maxItems: 100, default: [] }),
    assertions: Assertions,
    basicAuth: Type.Optional(Nullable(Type.Object({ username: Str(), password: Str() }, { additionalProperties: false }))),
    ipFamily: IpFamily,
  },
  { additionalProperties: false },
);

export const UrlRequest = Type.Object(
  {
    method: StringEnum(['GET'] as const, { default: 'GET' }),
    url: HttpUrl,
    followRedirects: Type.Boolean({ default: true }),
    skipSSL: Type.Boolean({ default: false }),
    assertions: Assertions,
    ipFamily: IpFamily,
  },
  { additionalProperties: false },
);

export const TcpRequest = Type.Object(
  {
    hostname: Type.Optional(Hostname),
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, format: 'host-or-url', description: 'The host as the anchor also takes it; give hostname or url' }),
    ),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    data: Type.Optional(Nullable(Str(65536))),
    assertions: Assertions,
    ipFamily: IpFamily,
    body: Type.Optional(IgnoredField()),
  },
  { additionalProperties: false, anyOf: [{ required: ['hostname'] }, { required: ['url'] }] },
);

export const DnsRequest = Type.Object(
  {
    hostname: Type.Optional(Hostname),
    query: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: "The name to resolve (the anchor's field); give hostname or query" })),
    recordType: StringEnum(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'SRV', 'CAA', 'PTR', 'HTTPS'] as const, { default: 'A' }),
    nameServer: Type.Optional(Hostname),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 53 }),
    protocol: StringEnum(['UDP', 'TCP'] as const, { default: 'UDP' }),
    assertions: DnsAssertions,
  },
  { additionalProperties: false, anyOf: [{ required: ['hostname'] }, { required: ['query'] }] },
);

export const IcmpRequest = Type.Object(
  {
    hostname: Hostname,
    ipFamily: Nullable(IpFamily),
    pingCount: Nullable(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    assertions: Assertions,
  },
  { additionalProperties: false },
);

export const SslRequest = Type.Object(
  {
    sslConfig: Type.Object(
      {
        hostname: Type.String({
          minLength: 1,
          maxLength: 2048,
          format: 'host-or-url',
          description: 'The host whose certificate is checked (a URL gives its host)',
        }),
        port: Type.Integer({ minimum: 1, maximum: 65535, default: 443 }),
        serverName: Type.Optional(
          Nullable(Type.String({ maxLength: 2048, pattern: '^[^\\x00-\\x1f\\x7f]*$', description: 'SNI name; empty or null uses hostname' })),
        ),
        ipFamily: IpFamily,
        skipChainValidation: Type.Boolean({ default: false }),
        handshakeTimeoutMs: Type.Integer({ minimum: 1000, maximum: 30000, default: 10000 }),
        alertDaysBeforeExpiry: Type.Integer({ minimum: 1, maximum: 365, default: 20 }),
        clientCertificateMode: Type.Optional(StringEnum(['auto', 'explicit'] as const)),
        securityBaseline: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'TLS baseline rules, kept as sent' })),
      },
      { additionalProperties: false },
    ),
    sslClientCertificateId: Type.Optional(Nullable(Type.String({ format: 'uuid', description: 'A client certificate of this account' }))),
    assertions: Type.Array(assertion(['CERTIFICATE', 'CONNECTION', 'RESPONSE_TIME', 'JSON_RESPONSE', 'TEXT_RESPONSE']), { maxItems: 50, default: [] }),
  },
  { additionalProperties: false },
);

export const TracerouteRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, format: 'host-or-url', description: 'Host name, IP or URL to trace' }),
    protocol: Type.Optional(Nullable(StringEnum(['TCP', 'ICMP', 'UDP', 'SCTP'] as const))),
    port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
    ipFamily: Type.Optional(Nullable(IpFamily)),
    maxHops: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 64 }))),
    maxUnknownHops: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 30 }))),
    ptrLookup: Type.Optional(Nullable(Type.Boolean())),
    timeout: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 30 }))),
    assertions: Type.Array(assertion(['RESPONSE_TIME', 'HOP_COUNT', 'PACKET_LOSS']), { maxItems: 50, default: [] }),
  },
  { additionalProperties: false },
);

export const GrpcRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, format: 'host-or-url', description: 'Host name, IP or URL of the gRPC server' }),
    port: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.String({ pattern: '^[0-9]{1,5}$' })])),
    ipFamily: Type.Optional(Nullable(IpFamily)),
    skipSSL: Type.Boolean({ default: false }),
    timeout: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 300 }))),
    grpcConfig: Type.Optional(
      Type.Object(
        {
          mode: StringEnum(['BEHAVIOR', 'HEALTH'] as const, { default: 'HEALTH' }),
          tls: Type.Boolean({ default: true }),
          metadata: Type.Array(Type.Object({ key: Type.String({ minLength: 1, maxLength: 256 }), value: Str(8192) }, { additionalProperties: false }), {
            maxItems: 50,
            default: [],
          }),
          service: Type.Optional(Nullable(Str(1024))),
          encoding: Type.Optional(Nullable(StringEnum(['PROTOBUF', 'FLATBUFFERS', ''] as const))),
          bfbsContent: Type.Optional(Nullable(Str(1_000_000))),
          serviceDefinition: Type.Optional(Nullable(StringEnum(['REFLECTION', 'PROTO_FILE', ''] as const))),
          method: Type.Optional(Nullable(Str(1024))),
          protoContent: Type.Optional(Nullable(Str(262_144))),
          message: Type.Optional(Nullable(Str(1_000_000))),
        },
        { additionalProperties: false },
      ),
    ),
    assertions: Type.Array(assertion(['RESPONSE_TIME', 'GRPC_RESPONSE', 'TEXT_BODY', 'GRPC_METADATA', 'GRPC_HEALTHCHECK_STATUS', 'GRPC_STATUS_CODE']), {
      maxItems: 50,
      default: [],
    }),
  },
  { additionalProperties: false },
);

/**
 * A type's request as the runners read it from a stored check: the create schema's fields and types (so a field
 * renamed or retyped there is one here), each optional (a check stored before a field existed lacks it).
 */
export type StoredRequest<S extends TSchema> = Partial<Static<S>>;

const TimeUnit = StringEnum(['seconds', 'minutes', 'hours', 'days'] as const);
export const Heartbeat = Type.Object(
  {
    period: Type.Integer({ minimum: 1, maximum: 365 * 86400 }),
    periodUnit: TimeUnit,
    grace: Type.Integer({ minimum: 0, maximum: 365 * 86400 }),
    graceUnit: TimeUnit,
    alertOnFailure: Type.Optional(Type.Boolean()),
    pingToken: Type.Optional(IgnoredField('the ping URL token is made by the service')),
    pingUrl: Type.Optional(IgnoredField('read-only: the URL the service made for this check')),
  },
  { additionalProperties: false },
);

const Script = Nullable(Type.String({ maxLength: 1_000_000 }));

const Intent = Type.Object(
  {
    goal: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    requiredOutcomes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 20 })),
    mustPreserve: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 20 })),
  },
  { additionalProperties: true, description: 'What the check protects, kept as sent' },
);

/** What a client that read a check sends back on a write: accepted and ignored. */
const readOnlyFields: TProperties = {
  id: Type.Optional(IgnoredField('read-only')),
  created_at: Type.Optional(IgnoredField('read-only')),
  updated_at: Type.Optional(IgnoredField('read-only')),
  alertChannels: Type.Optional(IgnoredField('read-only; alertChannelSubscriptions sets subscriptions')),
};

/** The shared shape: fields every check type takes. */
function commonFields(frequency: TSchema): TProperties {
  return {
    ...readOnlyFields,
    intent: Type.Optional(Nullable(Intent)),
    aiAutoRepairEnabled: Type.Optional(Nullable(Type.Boolean())),
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    activated: Type.Boolean({ default: true }),
    muted: Type.Boolean({ default: false }),
    doubleCheck: Type.Boolean({ default: true, deprecated: true, description: 'Deprecated: retryStrategy replaces it' }),
    shouldFail: Type.Boolean({ default: false }),
    locations: Type.Optional(Nullable(Type.Array(Location, { uniqueItems: true }))),
    tags: Type.Optional(Tags),
    alertSettings: Type.Optional(Nullable(AlertSettings)),
    useGlobalAlertSettings: Type.Boolean({ default: true }),
    groupId: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    groupOrder: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
    runtimeId: Type.Optional(Nullable(RuntimeId)),
    alertChannelSubscriptions: Type.Optional(Type.Array(Subscription, { maxItems: 100 })),
    retryStrategy: Type.Optional(Nullable(RetryStrategy)),
    triggerIncident: Type.Optional(Nullable(TriggerIncident)),
    runParallel: Type.Boolean({ default: false }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    frequency,
    frequencyOffset: Type.Optional(Type.Integer({ minimum: 1 })),
    environmentVariables: Type.Optional(Nullable(EnvironmentVariables)),
    privateLocations: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }))),
    degradedResponseTime: Type.Optional(Type.Unknown({ description: 'Type unconstrained by the contract' })),
    maxResponseTime: Type.Optional(Type.Unknown({ description: 'Type unconstrained by the contract' })),
  };
}

const scriptFields: TProperties = {
  script: Script,
  scriptPath: Type.Optional(Nullable(Str(1024))),
  dependencies: Type.Optional(Nullable(Type.Array(Dependency, { maxItems: 100 }))),
};

/** Playwright settings of browser and multi-step checks (viewport, timeouts…), kept as sent. */
const playwrightConfig: TProperties = {
  playwrightConfig: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true, maxProperties: 100 }))),
};

/** Screenshots a browser check compares against: blobs uploaded to /next/checkly-storage/upload. */
const Snapshots = Type.Optional(Nullable(Type.Array(Type.Object({ key: Str(200), path: Str(1024) }, { additionalProperties: false }), { maxItems: 1000 })));

/** A Playwright check suite from a code bundle uploaded to /next/checkly-storage/upload-code-bundle. */
const codeBundleFields: TProperties = {
  codeBundlePath: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'The key of a code bundle this account uploaded' }))),
  browsers: Type.Optional(Nullable(Type.Array(StringEnum(['chromium', 'chrome', 'firefox', 'webkit', 'msedge'] as const), { maxItems: 5 }))),
  cacheHash: Type.Optional(Nullable(Str(128))),
  playwrightVersion: Type.Optional(Nullable(Str(64))),
  installCommand: Type.Optional(Nullable(Str(2048))),
  testCommand: Type.Optional(Nullable(Str(2048))),
  workingDir: Type.Optional(Nullable(Str(1024))),
  engine: Type.Optional(Nullable(Str(64))),
  engineVersion: Type.Optional(Nullable(Str(64))),
};

const apiHooks: TProperties = {
  setupSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  tearDownSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  localSetupScript: Type.Optional(Script),
  localTearDownScript: Type.Optional(Script),
};

const standardFrequency = NumberEnum(FREQUENCIES, { default: 10, description: 'Minutes between runs' });
const apiFrequency = NumberEnum([0, ...FREQUENCIES] as const, {
  default: 10,
  description: 'Minutes between runs; 0 runs every frequencyOffset seconds (10, 20 or 30)',
});

interface TypeSpec {
  fields: TProperties;
  required: string[];
}

/** Fields the anchor documents on every check body, which only some types use: the others accept and ignore them. */
const foreignFields = (names: string[]): TProperties =>
  Object.fromEntries(names.map((n) => [n, Type.Optional(IgnoredField(`checks of this type have no ${n}`))]));
const SCRIPT_AND_HOOKS = ['script', 'scriptPath', 'sslCheckDomain', 'setupSnippetId', 'tearDownSnippetId', 'localSetupScript', 'localTearDownScript'];

const packetLoss = (fallback: number) =>
  Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100, default: fallback, description: 'Percent of pings lost' })));

/** Per type: the fields it takes beyond the shared shape, and which are required on create. */
const TYPE_SPECS: Record<TypeSegment, TypeSpec> = {
  browser: {
    fields: {
      ...commonFields(standardFrequency),
      ...scriptFields,
      ...playwrightConfig,
      sslCheckDomain: Type.Optional(Nullable(Hostname)),
      snapshots: Snapshots,
    },
    required: ['name', 'script'],
  },
  multistep: { fields: { ...commonFields(standardFrequency), ...scriptFields, ...playwrightConfig }, required: ['name', 'script'] },
  // A Playwright check suite runs a script or, as the anchor's CLI deploys it, a code bundle it uploaded.
  playwright: { fields: { ...commonFields(standardFrequency), ...scriptFields, script: Type.Optional(Script), ...codeBundleFields }, required: ['name'] },
  api: { fields: { ...commonFields(apiFrequency), request: ApiRequest, ...apiHooks }, required: ['name', 'request'] },
  url: { fields: { ...commonFields(apiFrequency), request: UrlRequest }, required: ['name', 'request'] },
  tcp: { fields: { ...commonFields(apiFrequency), request: TcpRequest }, required: ['name', 'request'] },
  dns: { fields: { ...commonFields(apiFrequency), ...foreignFields(['heartbeat', ...SCRIPT_AND_HOOKS]), request: DnsRequest }, required: ['name', 'request'] },
  icmp: {
    fields: {
      ...commonFields(apiFrequency),
      ...foreignFields(['heartbeat', ...SCRIPT_AND_HOOKS]),
      request: IcmpRequest,
      degradedPacketLossThreshold: packetLoss(10),
      maxPacketLossThreshold: packetLoss(20),
    },
    required: ['name', 'request'],
  },
  heartbeat: {
    fields: { ...commonFields(apiFrequency), ...foreignFields(['request', ...SCRIPT_AND_HOOKS]), heartbeat: Heartbeat },
    required: ['name', 'heartbeat'],
  },
  agentic: {
    fields: { ...commonFields(standardFrequency), ...foreignFields(['heartbeat', 'request', ...SCRIPT_AND_HOOKS]) },
    required: ['name'],
  },
  traceroute: {
    fields: { ...commonFields(apiFrequency), ...foreignFields(['heartbeat', ...SCRIPT_AND_HOOKS]), request: TracerouteRequest },
    required: ['name', 'request'],
  },
  ssl: {
    fields: { ...commonFields(apiFrequency), ...foreignFields(['heartbeat', ...SCRIPT_AND_HOOKS]), request: SslRequest },
    required: ['name', 'request'],
  },
  grpc: {
    fields: { ...commonFields(apiFrequency), ...foreignFields(['heartbeat', ...SCRIPT_AND_HOOKS]), request: GrpcRequest },
    required: ['name', 'request'],
  },
};

/** Body of POST /v1/checks/{type} and PUT /v1/checks/{type}/{id}. */
export function createBodySchema(segment: TypeSegment) {
  const spec = TYPE_SPECS[segment];
  const properties: TProperties = {
    checkType: Type.Optional(StringEnum([CREATABLE_TYPES[segment]], { description: "Accepted when it names this route's type" })),
  };
  for (const [name, schema] of Object.entries(spec.fields)) {
    properties[name] = spec.required.includes(name) ? stripOptional(schema) : schema;
  }
  return Type.Object(properties, { additionalProperties: false });
}

/** Body of PUT /v1/checks/{type}/{id}: the create body with every field optional and no defaults (it merges). */
export function updateBodySchema(segment: TypeSegment) {
  const create = createBodySchema(segment);
  const properties: TProperties = {};
  for (const [name, schema] of Object.entries(create.properties)) properties[name] = Type.Optional(stripDefaults(schema as TSchema));
  return Type.Object(properties, { additionalProperties: false });
}

function stripOptional(schema: TSchema): TSchema {
  const copy = { ...schema } as unknown as Record<string | symbol, unknown>;
  delete copy[OptionalKind];
  return copy as unknown as TSchema;
}

/** The anchor's default alert settings: what a check without its own reads as. */
export const DEFAULT_ALERT_SETTINGS = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
} as const;

/** Filled by reads, not by writes; `dependencies` only with includeDependencies. */
const NOT_DEFAULTED = new Set(['id', 'created_at', 'updated_at', 'alertChannels', 'alertChannelSubscriptions', 'checkType', 'dependencies']);

/**
 * What a read shows for each field of the type's shape that the stored check leaves unset, as the anchor's
 * check shape does: its default, [] for lists, null for other nullable fields. Ignored fields stay out.
 */
function readDefaults(segment: TypeSegment): Record<string, unknown> {
  const out: Record<string, unknown> = { alertSettings: DEFAULT_ALERT_SETTINGS };
  for (const [name, schema] of Object.entries(TYPE_SPECS[segment].fields)) {
    const s = schema as TSchema & { default?: unknown; type?: unknown; description?: string; anyOf?: TSchema[] };
    if (NOT_DEFAULTED.has(name) || name in out || s.description?.startsWith(IGNORED_PREFIX)) continue;
    const types = Array.isArray(s.type) ? s.type : [s.type, ...(s.anyOf ?? []).map((b) => (b as { type?: unknown }).type)];
    if ('default' in s) out[name] = s.default;
    else if (types.includes('array')) out[name] = [];
    else if (types.includes('null') || s.type === undefined) out[name] = null;
  }
  return out;
}
const READ_DEFAULT_ENTRIES = Object.fromEntries((Object.keys(TYPE_SPECS) as TypeSegment[]).map((s) => [s, Object.entries(readDefaults(s))])) as Record<
  TypeSegment,
  [string, unknown][]
>;

/** A stored check's fields with the anchor's defaults under every field it leaves unset. */
export function withReadDefaults(segment: TypeSegment | undefined, data: Record<string, unknown>): Record<string, unknown> {
  if (!segment) return data;
  const out = { ...data };
  for (const [name, value] of READ_DEFAULT_ENTRIES[segment]) {
    if (out[name] !== undefined) continue;
    // Each read gets its own copy of an object default (a caller may change it); values and empty lists cost nothing.
    out[name] = value === null || typeof value !== 'object' ? value : Array.isArray(value) && value.length === 0 ? [] : structuredClone(value);
  }
  // The anchor names the host a DNS monitor resolves `query`; a monitor written with hostname only reads it there too.
  const request = out.request as { hostname?: string; query?: string } | undefined;
  if (segment === 'dns' && request && request.query === undefined && request.hostname !== undefined) out.request = { ...request, query: request.hostname };
  return out;
}

export function fieldsOf(segment: TypeSegment): string[] {
  return Object.keys(TYPE_SPECS[segment].fields);
}

/** The fields of a validated body that are accepted but never stored, as paths. */
export function ignoredFieldsOf(segment: TypeSegment): string[][] {
  const paths: string[][] = [['checkType']];
  const walk = (props: TProperties, at: string[]) => {
    for (const [name, schema] of Object.entries(props)) {
      const s = schema as TSchema & { description?: string; properties?: TProperties };
      if (s.description?.startsWith(IGNORED_PREFIX)) paths.push([...at, name]);
      else if (s.properties) walk(s.properties, [...at, name]);
    }
  };
  walk(TYPE_SPECS[segment].fields, []);
  return paths;
}

/**
 * Body of the generic PUT /v1/checks/{id}: the shared shape with every field optional (it merges onto the
 * stored check), except that the contract requires `heartbeat` and `script`. Fields that do not apply to the
 * check's type are accepted and ignored.
 */
export function genericUpdateSchema() {
  const all: TProperties = {};
  for (const spec of Object.values(TYPE_SPECS)) {
    for (const [name, schema] of Object.entries(spec.fields)) {
      if (name === 'frequency') continue;
      all[name] ??= Type.Optional(stripDefaults(schema));
    }
  }
  all.frequency = Type.Optional(NumberEnum([0, ...FREQUENCIES] as const));
  all.heartbeat = Nullable(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'Required by the contract. A heartbeat check takes a full heartbeat object; any other type accepts any object (or null) and ignores it.',
      },
    ),
  );
  all.script = Nullable(Type.String({ maxLength: 1_000_000, description: 'Required by the contract; ignored by types without a script' }));
  all.request = Type.Optional(Type.Object({}, { additionalProperties: true, description: "The check type's request object" }));
  all.checkType = Type.Optional(StringEnum(CHECK_TYPES));
  return Type.Object(all, { additionalProperties: false });
}

/** A merge must not fill defaults into fields the caller did not send. */
function stripDefaults(schema: TSchema): TSchema {
  const copy = { ...schema } as unknown as Record<string | symbol, unknown>;
  delete copy.default;
  return copy as unknown as TSchema;
}

const AlertChannelsResult = Type.Object({
  email: Type.Array(Type.Object({ address: Type.String() })),
  webhook: Type.Array(
    Type.Object({
      url: Type.String(),
      name: Type.String(),
      method: Type.String(),
      headers: Type.Array(KeyValue),
      queryParameters: Type.Array(KeyValue),
    }),
  ),
  slack: Type.Array(Type.Object({ url: Type.String() })),
  sms: Type.Array(Type.Object({ number: Type.String(), name: Type.String() })),
});

/** What every check read returns; type-specific fields are present when the type has them. */
export const CheckResponse = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    frequency: Type.Number(),
    tags: Type.Array(Type.String()),
    alertChannels: Nullable(AlertChannelsResult),
    alertChannelSubscriptions: Type.Array(Type.Object({ alertChannelId: Type.Integer(), activated: Type.Boolean() })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: true },
);

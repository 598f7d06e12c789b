import { type Static, type TObject, type TOptional, Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import { CHECK_TYPES } from '../model/checks.js';
import { RESULT_DETAIL_KEYS, type ResultDetailKey } from '../model/results.js';

const Ms = Type.Number({ minimum: 0, maximum: 86_400_000, description: 'milliseconds' });
const Count = Type.Integer({ minimum: 0, maximum: 1_000_000 });

/** One check run as a runner reports it (DESIGN.md, "Ingest"). */
export const ResultItem = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid', description: 'Idempotency key of the run; generated when absent' })),
    checkId: Type.String({ format: 'uuid' }),
    checkType: StringEnum(CHECK_TYPES),
    runLocation: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'A public location, or the slugName of a private location of the account; anything else is a 400',
    }),
    startedAt: Type.String({ format: 'date-time' }),
    stoppedAt: Type.String({ format: 'date-time' }),
    hasFailures: Type.Boolean(),
    hasErrors: Type.Boolean({ default: false }),
    isDegraded: Type.Boolean({ default: false }),
    aborted: Type.Boolean({ default: false }),
    attempts: Type.Integer({ minimum: 1, maximum: 255, default: 1, description: 'More than 1: the run was retried' }),
    responseTime: Type.Optional(Ms),
    statusCode: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    timings: Type.Optional(
      Type.Object(
        {
          wait: Type.Optional(Ms),
          dns: Type.Optional(Ms),
          tcp: Type.Optional(Ms),
          firstByte: Type.Optional(Ms),
          download: Type.Optional(Ms),
          total: Type.Optional(Ms),
          connection: Type.Optional(Ms),
          data: Type.Optional(Ms),
        },
        { additionalProperties: false },
      ),
    ),
    webVitals: Type.Optional(
      Type.Object(
        {
          TTFB: Type.Optional(Ms),
          FCP: Type.Optional(Ms),
          LCP: Type.Optional(Ms),
          CLS: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
          TBT: Type.Optional(Ms),
          consoleErrors: Type.Optional(Count),
          networkErrors: Type.Optional(Count),
          userScriptErrors: Type.Optional(Count),
          documentErrors: Type.Optional(Count),
        },
        { additionalProperties: false },
      ),
    ),
    packetLoss: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'percent' })),
    latencyMin: Type.Optional(Ms),
    latencyMax: Type.Optional(Ms),
    latencyAvg: Type.Optional(Ms),
    latencyStdDev: Type.Optional(Ms),
    handshakeTimeMs: Type.Optional({ ...Ms, description: 'SSL: TLS handshake time, milliseconds' }),
    daysUntilExpiry: Type.Optional(
      Type.Number({ minimum: -36500, maximum: 36500, description: 'SSL: days until the leaf certificate expires (negative: expired)' }),
    ),
    hopCount: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, description: 'Traceroute: hops on the route' })),
    finalHopLatency: Type.Optional({ ...Ms, description: 'Traceroute: latency of the last hop reached, milliseconds' }),
    grpcStatusCode: Type.Optional(Type.Integer({ minimum: 0, maximum: 16, description: 'gRPC: status code of the call' })),
    ...(Object.fromEntries(
      RESULT_DETAIL_KEYS.map((key) => [
        key,
        Type.Optional(
          Type.Object(
            {},
            {
              additionalProperties: true,
              maxProperties: 64,
              description: `The anchor's ${key} object: what the run saw (request, response, assertions, errors, …); kept as it is sent, read back with this result`,
            },
          ),
        ),
      ]),
    ) as { [K in ResultDetailKey]: TOptional<TObject<Record<string, never>>> }),
  },
  { additionalProperties: false },
);
export type ResultItem = Static<typeof ResultItem>;

/** The body of `POST /v1/check-results`: a batch of at most `maxItems` results. */
export const IngestBody = (maxItems: number) => Type.Object({ results: Type.Array(ResultItem, { minItems: 1, maxItems }) }, { additionalProperties: false });

/** The fields the anchor API's result shape adds to a stored run, for its clients (CLI `checks get`). */
export const AnchorResultFields = {
  name: Type.String({ description: "The check's name" }),
  isCancelled: Type.Boolean({ description: 'The run was aborted' }),
  overMaxResponseTime: Nullable(Type.Boolean({ description: "responseTime above the check's maxResponseTime; null when either is unset" })),
  created_at: Type.String({ format: 'date-time', description: 'When the run landed' }),
  resultType: StringEnum(['FINAL', 'ATTEMPT', 'ALL'] as const, { description: 'Always FINAL: the final result of each run is stored' }),
  sequenceId: Type.Null(),
  traceId: Nullable(Type.String({ description: 'The W3C trace id the run’s requests carried in `traceparent` (docs/traces.md); null when it sent none' })),
  traceUrl: Nullable(
    Type.String({ description: 'The run’s trace in the team’s tracing tool (TRACE_LINK_TEMPLATE with its trace id; our addition); null without either' }),
  ),
  errorGroupIds: Type.Array(Type.String({ format: 'uuid' })),
  apiCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  browserCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  multiStepCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  playwrightCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  agenticCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  tracerouteCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  grpcCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  sslCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
};

/** The same fields as read back from the store, with the anchor API's result fields beside them. */
export const StoredResult = Type.Object({
  ...AnchorResultFields,
  id: Type.String({ format: 'uuid' }),
  checkId: Type.String({ format: 'uuid' }),
  checkType: StringEnum(CHECK_TYPES),
  runLocation: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  stoppedAt: Type.String({ format: 'date-time' }),
  hasFailures: Type.Boolean(),
  hasErrors: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  attempts: Type.Integer(),
  responseTime: Type.Optional(Type.Number()),
  statusCode: Type.Optional(Type.Integer()),
  timings: Type.Optional(Type.Record(Type.String(), Type.Number())),
  webVitals: Type.Optional(Type.Record(Type.String(), Type.Number())),
  packetLoss: Type.Optional(Type.Number()),
  latencyMin: Type.Optional(Type.Number()),
  latencyMax: Type.Optional(Type.Number()),
  latencyAvg: Type.Optional(Type.Number()),
  latencyStdDev: Type.Optional(Type.Number()),
  handshakeTimeMs: Type.Optional(Type.Number()),
  daysUntilExpiry: Type.Optional(Type.Number()),
  hopCount: Type.Optional(Type.Integer()),
  finalHopLatency: Type.Optional(Type.Number()),
  grpcStatusCode: Type.Optional(Type.Integer()),
});

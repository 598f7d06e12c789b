import { type SchemaOptions, type Static, type TUnsafe, Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../model/checks.js';
import { RESULT_DETAIL_KEYS } from '../model/results.js';
import type { RunJob, RunnableCheck } from './run.js';
import { RUN_METRIC_KEYS, RUN_TIMING_KEYS } from './types/common.js';

/**
 * The agent protocol (docs/agent.md, version 1), declared once: the service's routes validate and document with these
 * schemas (src/agents/routes.ts), and the agent (agent/http-port.ts) speaks their static types. A change here is a
 * change of both sides.
 */

const stringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const AgentId = Type.String({ format: 'uuid', description: "The agent's own id, kept in its data folder" });
const Version = Type.String({ pattern: '^\\d{1,4}\\.\\d{1,4}\\.\\d{1,4}$', description: "The agent's version" });
export const LeaseId = Type.String({ minLength: 8, maxLength: 600, pattern: '^[A-Za-z0-9_-]+$' });
const EPOCH_MS = { minimum: 0, maximum: 8_640_000_000_000 };

export const RegisterBody = Type.Object(
  {
    protocol: Type.Integer({ minimum: 1, maximum: 1000, description: 'The protocol the agent speaks' }),
    agentId: AgentId,
    version: Version,
    capabilities: Type.Array(stringEnum(CHECK_TYPES), { uniqueItems: true, maxItems: CHECK_TYPES.length, description: 'The check types it can run' }),
    concurrency: Type.Integer({ minimum: 1, maximum: 10 }),
    egressIps: Type.Optional(
      Type.Array(Type.String({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }), {
        maxItems: 16,
        description: "Where its checks' connections come from, when the service cannot see it (NAT)",
      }),
    ),
  },
  { additionalProperties: false },
);
export const RegisterReply = Type.Object({
  protocol: Type.Integer(),
  agentId: Type.String(),
  location: Type.Object({ id: Type.String(), slugName: Type.String() }),
  leaseSeconds: Type.Integer({ description: 'A lease lapses unless renewed within this' }),
  minAgentVersion: Type.String(),
  isOutdated: Type.Boolean(),
});

export const LeaseBody = Type.Object(
  {
    agentId: AgentId,
    max: Type.Integer({ minimum: 1, maximum: 10, description: 'Runs the agent can start now' }),
    waitSeconds: Type.Integer({ minimum: 0, maximum: 20, default: 10, description: 'How long to wait for a first run' }),
  },
  { additionalProperties: false },
);
/** A run leased to an agent, as the agent receives it: the job, the check with its secret values, the result id. */
export const Lease = Type.Object({
  leaseId: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  run: Type.Unsafe<RunJob>(Type.Record(Type.String(), Type.Unknown(), { description: 'The run: check, location, slot, attempt, source, period' })),
  check: Type.Unsafe<RunnableCheck>(
    Type.Record(Type.String(), Type.Unknown(), { description: 'The check as it runs: group settings applied, variables and secret values resolved' }),
  ),
  resultId: Type.String({ format: 'uuid' }),
  assetBase: Type.Optional(Type.String()),
  holders: Type.Optional(
    Type.Array(AgentId, {
      maxItems: 50,
      description:
        'A scheduled run: the agents of the location that leased this check within its last three periods, this one included. While cut off, the one whose hash of (check, agent) is highest runs it.',
    }),
  ),
});
export const LeasesReply = Type.Object({ leases: Type.Array(Lease) });

export const RenewBody = Type.Object({ agentId: AgentId, leaseIds: Type.Array(LeaseId, { maxItems: 20 }) }, { additionalProperties: false });
export const RenewReply = Type.Object({ renewed: Type.Array(Type.String()), lost: Type.Array(Type.String()) });

/** What one run found: the runner's outcome. */
export const Outcome = Type.Object(
  {
    startedAt: Type.Number(EPOCH_MS),
    stoppedAt: Type.Number(EPOCH_MS),
    hasFailures: Type.Boolean(),
    hasErrors: Type.Boolean(),
    isDegraded: Type.Boolean(),
    metrics: Type.Partial(
      Type.Object(
        Object.fromEntries(
          RUN_METRIC_KEYS.map((k) => [
            k,
            k === 'timings'
              ? Type.Partial(Type.Object(Object.fromEntries(RUN_TIMING_KEYS.map((t) => [t, Type.Number()])), { additionalProperties: false }))
              : Type.Number(),
          ]),
        ),
        { additionalProperties: false },
      ),
    ),
    detail: Type.Partial(
      Type.Object(Object.fromEntries(RESULT_DETAIL_KEYS.map((k) => [k, Type.Record(Type.String(), Type.Unknown())])), { additionalProperties: false }),
    ),
    networkError: Type.Optional(Type.Boolean()),
    error: Type.Optional(Type.String({ maxLength: 20_000 })),
  },
  { additionalProperties: false, description: "What one run found (the runner's outcome)" },
);

export const OutcomesBody = Type.Object(
  {
    agentId: AgentId,
    outcomes: Type.Array(Type.Object({ leaseId: LeaseId, outcome: Outcome }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);
export const OutcomesReply = Type.Object({
  outcomes: Type.Array(
    Type.Object({
      leaseId: Type.String(),
      state: stringEnum(['done', 'duplicate', 'lost', 'gone', 'refused'] as const, {
        description: 'refused: its times (or the files it lists) are not a run this agent could have made now',
      }),
    }),
  ),
});

/** One result an agent made while cut off. */
export const MadeItem = Type.Object(
  {
    checkId: Type.String({ format: 'uuid' }),
    location: Type.String({ minLength: 1, maxLength: 64 }),
    slot: Type.Integer(EPOCH_MS),
    periodMs: Type.Optional(Type.Integer({ minimum: 10_000, maximum: 86_400_000, description: "The check's period when the run was made" })),
    outcome: Outcome,
  },
  { additionalProperties: false },
);
export const MadeBody = Type.Object(
  {
    agentId: AgentId,
    results: Type.Array(
      Type.Unknown({
        description:
          'A result: {checkId, location, slot, periodMs?, outcome} (the outcome as POST /v1/agent/outcomes takes it). One that is not is refused alone, in `refused`, and the rest are taken',
      }),
      { minItems: 1, maxItems: 500 },
    ),
  },
  { additionalProperties: false },
);
export const MadeReply = Type.Object({ accepted: Type.Integer(), refused: Type.Array(Type.Object({ index: Type.Integer(), reason: Type.String() })) });

export const FileKind = stringEnum(['screenshots', 'traces', 'videos'] as const);
export const FileReply = Type.Object({ key: Type.String(), size: Type.Integer() });

/** What each call carries, as the agent sends and reads it. */
export type RegisterRequest = Static<typeof RegisterBody>;
export type RegisterAnswer = Static<typeof RegisterReply>;
export type LeaseRequest = Static<typeof LeaseBody>;
export type LeaseWire = Static<typeof Lease>;
export type LeasesAnswer = Static<typeof LeasesReply>;
export type RenewRequest = Static<typeof RenewBody>;
export type RenewAnswer = Static<typeof RenewReply>;
export type OutcomesRequest = Static<typeof OutcomesBody>;
export type OutcomesAnswer = Static<typeof OutcomesReply>;
export type MadeResult = Static<typeof MadeItem>;
export type MadeAnswer = Static<typeof MadeReply>;
export type FileAnswer = Static<typeof FileReply>;

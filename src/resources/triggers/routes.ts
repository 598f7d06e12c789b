import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { findCheckRow, groupExists } from '../../checks/index.js';
import { HttpError, notFound } from '../../http/errors.js';
import { PositiveId } from '../../http/ids.js';
import { type AnyRoute, defineRoute } from '../../http/route.js';
import { Nullable } from '../../http/schemas.js';
import { iso } from '../../model/time.js';
import { matchChecks, startSessions } from '../../runners/index.js';
import type { Deps } from '../../storage/deps.js';
import { type Sql, transaction } from '../../storage/postgres.js';
import { createTrigger, deleteTrigger, findTrigger, markCalled, recordRunRequest, type Subject, type TriggerRow } from './repository.js';

const TriggerFields = {
  id: Type.Integer(),
  token: Type.String({ description: 'The secret part of the trigger URL' }),
  url: Type.String({ description: 'Call it (GET or POST, no key) to request a run' }),
  created_at: Type.String({ format: 'date-time' }),
  called_at: Nullable(Type.String({ format: 'date-time' })),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
};
const CheckTrigger = Type.Object({ ...TriggerFields, checkId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
const GroupTrigger = Type.Object({ ...TriggerFields, groupId: Type.Integer() }, { additionalProperties: false });

const RunRequested = Type.Object(
  {
    runRequestId: Type.Integer(),
    checkId: Type.Optional(Type.String()),
    groupId: Type.Optional(Type.Integer()),
    requestedAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

/** 24 random bytes: the URL is the only credential a trigger call carries. */
const newToken = () => randomBytes(24).toString('base64url');

/**
 * Trigger URLs: a token URL per check or group that anyone holding it can call to request a run now
 * (CI after a deploy, say). A call records a run request for the runners and stamps `called_at`.
 */
export function triggerRoutes({ sql, config, queues }: Deps): AnyRoute[] {
  const tag = 'Triggers';
  const base = () => config.publicUrl ?? '';
  const shape = (row: TriggerRow) => {
    const common = { id: row.id, token: row.token, created_at: iso(row.created_at), called_at: iso(row.called_at), updated_at: iso(row.updated_at) };
    return row.check_id
      ? { ...common, url: `${base()}/checks/${row.check_id}/trigger/${row.token}`, checkId: row.check_id }
      : { ...common, url: `${base()}/check-groups/${row.group_id}/trigger/${row.token}`, groupId: row.group_id! };
  };

  /** The subject, when it is the account's; 404 otherwise. */
  async function subjectOf(db: Sql, accountId: string, subject: Subject): Promise<Subject> {
    if (subject.kind === 'check') {
      const check = await findCheckRow(db, accountId, subject.id);
      if (!check) throw notFound();
      return { kind: 'check', id: check.id };
    }
    if (!(await groupExists(db, accountId, subject.id))) throw notFound();
    return subject;
  }

  async function find(db: Sql, accountId: string, subject: Subject): Promise<TriggerRow> {
    const row = await findTrigger(db, accountId, await subjectOf(db, accountId, subject));
    if (!row) throw notFound();
    return row;
  }

  const management = (kind: 'check' | 'group'): AnyRoute[] => {
    const path = kind === 'check' ? '/v1/triggers/checks/{checkId}' : '/v1/triggers/check-groups/{groupId}';
    const params =
      kind === 'check'
        ? Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })
        : Type.Object({ groupId: PositiveId }, { additionalProperties: false });
    const subjectFrom = (p: { checkId?: string; groupId?: number }): Subject => (kind === 'check' ? { kind, id: p.checkId! } : { kind, id: p.groupId! });
    const body = kind === 'check' ? CheckTrigger : GroupTrigger;
    const noun = kind === 'check' ? 'check' : 'check group';
    const op = kind === 'check' ? 'CheckTrigger' : 'CheckGroupTrigger';
    return [
      defineRoute({
        method: 'POST',
        path,
        operationId: `create${op}`,
        summary: `Create the trigger URL of a ${noun}; when it has one, that one is answered again`,
        tag,
        access: 'write',
        errors: [404],
        schema: { params, responses: { 201: body } },
        handler: async ({ principal, params: p }) =>
          transaction(sql, async (db) => {
            const s = await subjectOf(db, principal.account.id, subjectFrom(p));
            // One trigger per check or group: creating it again gives the existing one (delete it for a new token).
            return { status: 201, body: shape(await createTrigger(db, principal.account.id, s, newToken())) };
          }),
      }),
      defineRoute({
        method: 'GET',
        path,
        operationId: `get${op}`,
        summary: `Retrieve the trigger URL of a ${noun}`,
        description: 'The URL starts runs without a key, so it is for keys that may write: a read-only key gets 403.',
        tag,
        access: 'write',
        errors: [404],
        schema: { params, responses: { 200: body } },
        handler: async ({ principal, params: p }) => ({ status: 200, body: shape(await find(sql, principal.account.id, subjectFrom(p))) }),
      }),
      defineRoute({
        method: 'DELETE',
        path,
        operationId: `delete${op}`,
        summary: `Delete the trigger URL of a ${noun} (its token stops working)`,
        tag,
        access: 'write',
        errors: [404],
        schema: { params, responses: { 204: null } },
        handler: async ({ principal, params: p }) => {
          const row = await find(sql, principal.account.id, subjectFrom(p));
          await deleteTrigger(sql, row.id);
          return { status: 204 };
        },
      }),
    ];
  };

  /** A call of a trigger URL: the token must be the subject's current one; anything else names nothing. */
  async function call(subject: Subject, token: string) {
    return transaction(sql, async (db) => {
      const row = await markCalled(db, subject, token);
      if (!row) throw notFound();
      const req = await recordRunRequest(db, row);
      // The runs start now: a session per check (the group's activated checks for a group trigger).
      const ids = row.check_id ? [row.check_id] : await matchChecks(db, row.account_id, { groupId: row.group_id! });
      await startSessions(db, queues, row.account_id, ids, 'LEGACY_TRIGGER', config.runner.sessionTimeoutSeconds * 1000);
      return {
        status: 202,
        body: {
          runRequestId: req.id,
          ...(row.check_id ? { checkId: row.check_id } : { groupId: row.group_id! }),
          requestedAt: iso(req.requested_at),
        },
      };
    });
  }

  const TokenText = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });
  /** What browsers and link previewers send when they only look ahead: such a request starts no run. */
  const LookAhead = Type.Object({
    purpose: Type.Optional(Type.String({ maxLength: 64, description: 'prefetch: starts no run' })),
    'sec-purpose': Type.Optional(Type.String({ maxLength: 64, description: 'prefetch or prerender: starts no run' })),
    'x-moz': Type.Optional(Type.String({ maxLength: 64, description: 'prefetch: starts no run' })),
  });
  /**
   * The anchor's trigger URLs start a run on a plain GET (its CLI-less CI recipes use curl), so GET stays; a HEAD (a
   * link checker) and a prefetch or prerender (a browser looking ahead) are refused without a run.
   */
  const lookingAhead = (method: string, headers: { purpose?: string; 'sec-purpose'?: string; 'x-moz'?: string }) => {
    if (method === 'HEAD') return 'A HEAD request starts no run: call the trigger URL with GET or POST';
    if ([headers.purpose, headers['sec-purpose'], headers['x-moz']].some((h) => h && /prefetch|prerender|preview/i.test(h)))
      return 'A prefetch starts no run: call the trigger URL with GET or POST';
    return undefined;
  };
  const guarded = (subject: Subject, token: string, method: string, headers: Parameters<typeof lookingAhead>[1]) => {
    const why = lookingAhead(method, headers);
    if (why) throw new HttpError(400, why);
    return call(subject, token);
  };
  const calls = (['GET', 'POST'] as const).flatMap((method) => [
    defineRoute({
      method,
      path: '/checks/{checkId}/trigger/{token}',
      operationId: `callCheckTrigger${method === 'GET' ? '' : 'Post'}`,
      summary: 'Request a run of a check (the trigger URL; no key)',
      tag,
      access: 'public',
      rateLimit: { points: 60, windowSeconds: 60 },
      errors: [400, 404],
      schema: {
        params: Type.Object({ checkId: Type.String({ format: 'uuid' }), token: TokenText }, { additionalProperties: false }),
        headers: LookAhead,
        responses: { 202: RunRequested },
      },
      handler: ({ params, headers, context }) => guarded({ kind: 'check', id: params.checkId.toLowerCase() }, params.token, context.method, headers),
    }),
    defineRoute({
      method,
      path: '/check-groups/{groupId}/trigger/{token}',
      operationId: `callCheckGroupTrigger${method === 'GET' ? '' : 'Post'}`,
      summary: 'Request a run of every check of a group (the trigger URL; no key)',
      tag,
      access: 'public',
      rateLimit: { points: 60, windowSeconds: 60 },
      errors: [400, 404],
      schema: {
        params: Type.Object({ groupId: PositiveId, token: TokenText }, { additionalProperties: false }),
        headers: LookAhead,
        responses: { 202: RunRequested },
      },
      handler: ({ params, headers, context }) => guarded({ kind: 'group', id: params.groupId }, params.token, context.method, headers),
    }),
  ]);

  return [...management('check'), ...management('group'), ...calls];
}

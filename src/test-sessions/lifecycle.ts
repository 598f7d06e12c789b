import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { checkTypesOf } from '../checks/index.js';
import { conflict } from '../http/errors.js';
import { Rules } from '../http/rules.js';
import { iso } from '../model/time.js';
import type { Config } from '../platform/config.js';
import { type Sql, transaction } from '../storage/postgres.js';
import { appendResults, endSession, findSession, insertSession, resultRows, type SessionRow, type StoredResult } from './repository.js';
import type { CreateSession, Result, ResultInput, SessionEntry, SessionState } from './schemas.js';

/** RUNNING is the only state with a way out; the three end states are final. */
const TRANSITIONS: Record<SessionState, readonly SessionState[]> = {
  RUNNING: ['PASSED', 'FAILED', 'CANCELLED'],
  PASSED: [],
  FAILED: [],
  CANCELLED: [],
};

/** A result's status as the anchor reports it. */
function resultStatus(r: { aborted: boolean; hasFailures: boolean; hasErrors: boolean; pending?: boolean }): SessionState {
  if (r.pending) return 'RUNNING';
  return r.aborted ? 'CANCELLED' : r.hasFailures || r.hasErrors ? 'FAILED' : 'PASSED';
}

/** Test sessions as the routes read and write them: their shapes, and the steps that change them. */
export function testSessions(sql: Sql, config: Pick<Config, 'publicUrl'>) {
  const sessionUrl = (id: string) => `${config.publicUrl ?? ''}/v1/test-sessions/${id}`;

  function toResult(sessionId: string, id: string, data: StoredResult): Static<typeof Result> {
    return {
      testSessionResultId: id,
      testSessionResultLink: data.testSessionResultLink ?? `${sessionUrl(sessionId)}/results/${id}`,
      errorGroupIds: data.errorGroupIds,
      hasErrors: data.hasErrors,
      hasFailures: data.hasFailures,
      isDegraded: data.isDegraded,
      aborted: data.aborted,
      checkId: data.checkId,
      checkType: data.checkType,
      name: data.name,
      runLocation: data.runLocation,
      resultType: 'FINAL',
      status: resultStatus(data),
      responseTime: data.responseTime ?? null,
      startedAt: data.startedAt ?? null,
      stoppedAt: data.stoppedAt ?? null,
    };
  }

  function toSession(row: SessionRow, results: Static<typeof Result>[]) {
    const stopped = row.stopped_at;
    const data = row.metadata ?? {};
    return {
      testSessionId: row.id,
      testSessionLink: data.link ?? sessionUrl(row.id),
      name: row.name,
      status: row.status,
      errorGroupIds: [...new Set(results.flatMap((r) => r.errorGroupIds))],
      startedAt: iso(row.started_at),
      timeElapsed: (stopped ?? new Date()).getTime() - row.started_at.getTime(),
      stoppedAt: iso(stopped),
      ...(data.metadata ? { metadata: data.metadata } : {}),
      results,
    };
  }

  function toEntry(row: SessionRow, results: Static<typeof Result>[]): Static<typeof SessionEntry> {
    const meta = row.metadata?.metadata ?? {};
    const ids = (status: SessionState) => results.filter((r) => (status === 'RUNNING' ? false : r.status === status)).map((r) => r.testSessionResultId);
    return {
      id: row.id,
      accountId: row.account_id,
      projectId: null,
      name: row.name,
      provider: row.provider,
      errorGroupIds: [...new Set(results.flatMap((r) => r.errorGroupIds))],
      running: ids('RUNNING'),
      passed: ids('PASSED'),
      failed: ids('FAILED'),
      cancelled: ids('CANCELLED'),
      status: row.status,
      region: results[0]?.runLocation ?? '',
      privateLocationId: null,
      invoker: null,
      repoUrl: meta.repoUrl ?? null,
      commitId: meta.commitId ?? null,
      commitOwner: meta.commitOwner ?? null,
      commitMessage: meta.commitMessage ?? null,
      branchName: meta.branchName ?? null,
      environment: meta.environment ?? null,
      startedAt: iso(row.started_at),
      stoppedAt: iso(row.stopped_at),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  async function loadResults(db: Sql, sessionIds: string[]): Promise<Map<string, Static<typeof Result>[]>> {
    const byId = new Map<string, Static<typeof Result>[]>(sessionIds.map((id) => [id, []]));
    for (const r of await resultRows(db, sessionIds)) byId.get(r.test_session_id)!.push(toResult(r.test_session_id, r.id, r.data));
    return byId;
  }

  /** Results with their check's type: from the account's check, else as sent; a result with neither is a 400. */
  async function insertResults(db: Sql, accountId: string, sessionId: string, results: Static<typeof ResultInput>[], at: string): Promise<void> {
    if (!results.length) return;
    const types = await checkTypesOf(
      db,
      accountId,
      results.map((r) => r.checkId),
    );
    const rules = new Rules();
    const stored = results.map(({ testSessionResultId, ...data }, i) => {
      const checkType = types.get(data.checkId.toLowerCase()) ?? data.checkType;
      rules.check(checkType !== undefined, `${at}[${i}].checkType`, 'required', 'is required when checkId names no check of this account');
      return { id: testSessionResultId ?? randomUUID(), data: { ...data, checkType } as StoredResult };
    });
    rules.throwIfAny();
    await appendResults(db, sessionId, stored);
  }

  async function read(tx: Sql, accountId: string, id: string) {
    const row = await findSession(tx, accountId, id);
    return toSession(row, (await loadResults(tx, [id])).get(id)!);
  }

  /** Moves a RUNNING session to an end state; any other move is a 409 that changes nothing. */
  async function transition(accountId: string, id: string, to: SessionState) {
    return transaction(sql, async (db) => {
      const row = await findSession(db, accountId, id, true);
      const from = row.status;
      if (!TRANSITIONS[from].includes(to)) {
        throw conflict(`A ${from} test session cannot become ${to}`, { status: from });
      }
      await endSession(db, id, to);
      return read(db, accountId, id);
    });
  }

  async function create(db: Sql, accountId: string, body: Static<typeof CreateSession>): Promise<string> {
    const id = await insertSession(db, accountId, body.name, { link: body.testSessionLink, metadata: body.metadata });
    await insertResults(db, accountId, id, body.results ?? [], 'body.results');
    return id;
  }

  return { toResult, toEntry, loadResults, read, transition, create, insertResults };
}

export type TestSessions = ReturnType<typeof testSessions>;

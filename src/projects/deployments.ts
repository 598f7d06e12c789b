import type { Principal } from '../accounts/repository.js';
import { HttpError } from '../http/errors.js';
import type { RouteCaller } from '../http/invoke.js';
import type { Logger } from '../platform/logger.js';
import { inTransaction, outsideTransaction, transaction, type Sql } from '../storage/postgres.js';
import { applyProject, Cancelled, type Applied, type ApplyOptions, type Prepared } from './deployer.js';
import { FINAL_STATUSES, type DeployResponse } from './model.js';
import {
  activeDeployments,
  cancelRequested,
  failAbandoned,
  findDeployment,
  finishDeployment,
  insertDeployment,
  requestCancel,
  projectLockKey,
  setProgress,
  tryLockProject,
  type DeploymentRow,
  type ProjectRow,
} from './repository.js';

/** Deploys still running in this process: the service waits for them before it closes its pools. */
const inFlight = new Set<Promise<unknown>>();

export function deploysSettled(): Promise<unknown> {
  return Promise.allSettled([...inFlight]);
}

export interface DeployJob {
  principal: Principal;
  logicalId: string;
  kind: 'DEPLOY' | 'DESTROY';
  target: { prepared: Prepared } | { destroy: ProjectRow };
  preserveResources: boolean;
  /** Called after the changes are applied, inside the transaction (scheduleOnDeploy, removing a destroyed project). */
  after?: (applied: Applied) => Promise<void>;
}

export interface Deployments {
  /**
   * Starts a deploy or destroy of a project: resolves with its deployment row (RUNNING) once it holds the
   * project, or rejects with 409 (naming the running deployment) when another deploy of it runs; `done` settles
   * when it ends.
   */
  start(job: DeployJob): Promise<{ row: DeploymentRow; done: Promise<DeploymentRow> }>;
  /** A dry run: the diff the deploy would answer, every change rolled back. */
  dryRun(job: Omit<DeployJob, 'kind' | 'after'>): Promise<DeployResponse>;
  /** The deployment, with a RUNNING one whose process went away marked FAILED first. */
  current(accountId: string, logicalId: string, id: string): Promise<DeploymentRow | undefined>;
  /** Waits until the deployment is final or `ms` pass; the row as it then is. */
  waitFor(accountId: string, logicalId: string, id: string, ms: number, signal?: AbortSignal): Promise<DeploymentRow | undefined>;
  cancel(accountId: string, logicalId: string, id: string): Promise<DeploymentRow | undefined>;
}

const POLL_MS = 150;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class RolledBack extends Error {
  constructor(readonly response: DeployResponse) {
    super('dry run');
  }
}

/**
 * Deploys run in one transaction holding the project's advisory lock, so two never interleave and one whose
 * server died is seen (its lock is free) and marked FAILED. The deployment row is written outside that
 * transaction (others see it RUNNING at once) and finished inside it, atomically with what the deploy applied.
 */
export function projectDeployments(sql: Sql, caller: RouteCaller, logger: Logger): Deployments {
  async function holderAlive(accountId: string, logicalId: string): Promise<boolean> {
    return outsideTransaction(() => sql.begin(async (tx) => !(await tryLockProject(tx as unknown as Sql, projectLockKey(accountId, logicalId))))) as Promise<boolean>;
  }

  async function current(accountId: string, logicalId: string, id: string) {
    const row = await findDeployment(sql, accountId, logicalId, id);
    if (row && !FINAL_STATUSES.has(row.status) && !(await holderAlive(accountId, logicalId))) {
      // Read again: it may have finished between the two reads.
      const again = await findDeployment(sql, accountId, logicalId, id);
      if (again && !FINAL_STATUSES.has(again.status)) await failAbandoned(sql, accountId, logicalId);
      return findDeployment(sql, accountId, logicalId, id);
    }
    return row;
  }

  /** The 409 for a project another deploy holds, naming that deployment (the CLI waits for it or cancels it). */
  async function conflict(accountId: string, logicalId: string): Promise<HttpError> {
    // The holder writes its row right after it takes the lock: look a few times.
    for (let i = 0; i < 10; i++) {
      const [active] = await activeDeployments(sql, accountId, logicalId);
      if (active) {
        return new HttpError(409, `Another deployment of project "${logicalId}" is in progress (${active.id}); wait for it or cancel it`).withFields({ deploymentId: active.id });
      }
      await sleep(50);
    }
    return new HttpError(409, `Another deployment of project "${logicalId}" is in progress`);
  }

  function runOptions(row: DeploymentRow, preserveResources: boolean): ApplyOptions {
    let last = 0;
    return {
      preserveResources,
      onProgress: async (share) => {
        const progress = Math.min(99, Math.floor(share * 100));
        if (progress >= last + 5) {
          last = progress;
          await outsideTransaction(() => setProgress(sql, row.id, progress));
        }
      },
      cancelled: () => outsideTransaction(() => cancelRequested(sql, row.id)),
    };
  }

  async function start(job: DeployJob) {
    const accountId = job.principal.account.id;
    let started!: (row: DeploymentRow) => void;
    let refused!: (err: unknown) => void;
    const ready = new Promise<DeploymentRow>((resolve, reject) => {
      started = resolve;
      refused = reject;
    });
    let rowId: string | undefined;
    const run = outsideTransaction(() =>
      sql.begin(async (txHandle) => {
        const tx = txHandle as unknown as Sql;
        if (!(await tryLockProject(tx, projectLockKey(accountId, job.logicalId)))) throw await conflict(accountId, job.logicalId);
        // Any deployment of the project still marked running lost its server: we hold its lock now.
        await failAbandoned(sql, accountId, job.logicalId);
        const row = await insertDeployment(sql, { accountId, logicalId: job.logicalId, kind: job.kind, dryRun: false });
        rowId = row.id;
        started(row);
        try {
          // A savepoint: a failed deploy rolls back to it, and its row is still finished in this transaction.
          const applied = await transaction(tx, (sp) =>
            inTransaction(sp, async () => {
              const result = await applyProject(sql, caller, job.principal, job.target, runOptions(row, job.preserveResources));
              await job.after?.(result);
              return result;
            }),
          );
          await finishDeployment(tx, row.id, 'SUCCEEDED', { result: applied.response });
        } catch (err) {
          if (err instanceof Cancelled) {
            await finishDeployment(tx, row.id, 'CANCELLED', { error: { code: 'CANCELLED', message: err.message } });
          } else if (err instanceof HttpError && err.status < 500) {
            await finishDeployment(tx, row.id, 'FAILED', { error: { code: err.status === 402 ? 'PAYMENT_REQUIRED' : 'VALIDATION_ERROR', message: err.message } });
          } else {
            logger.error({ err, deploymentId: row.id }, 'project deployment failed');
            await finishDeployment(tx, row.id, 'FAILED', { error: { code: 'INTERNAL_ERROR', message: 'The deployment failed on the server; nothing of it was applied.' } });
          }
        }
      }),
    ).then(
      async () => (await findDeployment(sql, accountId, job.logicalId, rowId!))!,
      (err) => {
        refused(err);
        throw err;
      },
    );
    const tracked = run.catch(() => undefined).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    const row = await ready;
    return { row, done: run };
  }

  async function dryRun(job: Omit<DeployJob, 'kind' | 'after'>): Promise<DeployResponse> {
    try {
      await outsideTransaction(() =>
        sql.begin(async (tx) =>
          inTransaction(tx as unknown as Sql, async () => {
            const applied = await applyProject(sql, caller, job.principal, job.target, { preserveResources: job.preserveResources });
            throw new RolledBack(applied.response);
          }),
        ),
      );
    } catch (err) {
      if (err instanceof RolledBack) return err.response;
      throw err;
    }
    throw new Error('unreachable');
  }

  async function waitFor(accountId: string, logicalId: string, id: string, ms: number, signal?: AbortSignal) {
    const until = Date.now() + ms;
    let row = await current(accountId, logicalId, id);
    while (row && !FINAL_STATUSES.has(row.status) && Date.now() < until && !signal?.aborted) {
      await sleep(Math.min(POLL_MS, Math.max(0, until - Date.now())));
      row = await findDeployment(sql, accountId, logicalId, id);
    }
    if (row && !FINAL_STATUSES.has(row.status)) row = await current(accountId, logicalId, id);
    return row;
  }

  async function cancel(accountId: string, logicalId: string, id: string) {
    const row = await current(accountId, logicalId, id);
    if (!row) return undefined;
    if (!FINAL_STATUSES.has(row.status)) await requestCancel(sql, row.id);
    return findDeployment(sql, accountId, logicalId, id);
  }

  return { start, dryRun, current, waitFor, cancel };
}

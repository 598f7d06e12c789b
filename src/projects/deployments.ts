import type { Principal } from '../accounts/index.js';
import { HttpError } from '../http/errors.js';
import type { RouteCaller } from '../http/invoke.js';
import type { Logger } from '../platform/logger.js';
import { inTransaction, outsideTransaction, type Sql, transaction } from '../storage/postgres.js';
import { type Applied, type ApplyOptions, applyProject, Cancelled, type Prepared } from './deployer.js';
import { type DeployResponse, FINAL_STATUSES } from './model.js';
import {
  activeDeployments,
  cancelRequested,
  type DeploymentRow,
  failAbandoned,
  findDeployment,
  finishDeployment,
  insertDeployment,
  type ProjectRow,
  projectLockKey,
  requestCancel,
  setProgress,
  tryLockProject,
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
export interface DeployLimits {
  /** Deploys, destroys and dry runs at once in this process (each holds one pooled connection for its transaction). */
  maxConcurrent: number;
  /** The same for one account. */
  maxPerAccount: number;
}

/**
 * How many deploys run at once, in all and per account: each holds a connection of the main pool for its whole
 * transaction, so they are capped below the pool's size and a deploy past the cap is a 429 (Retry-After), never a
 * wait for a connection other requests need.
 */
class DeployGate {
  private total = 0;
  private readonly perAccount = new Map<string, number>();
  constructor(private readonly limits: DeployLimits) {}

  enter(accountId: string): () => void {
    const mine = this.perAccount.get(accountId) ?? 0;
    if (this.total >= this.limits.maxConcurrent || mine >= this.limits.maxPerAccount) {
      const which = mine >= this.limits.maxPerAccount ? `${this.limits.maxPerAccount} of this account` : `${this.limits.maxConcurrent} on this server`;
      throw new HttpError(429, `Too many deployments in progress at once (at most ${which}); retry in a few seconds`, undefined, { 'Retry-After': '5' });
    }
    this.total++;
    this.perAccount.set(accountId, mine + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total--;
      const now = (this.perAccount.get(accountId) ?? 1) - 1;
      if (now > 0) this.perAccount.set(accountId, now);
      else this.perAccount.delete(accountId);
    };
  }
}

/**
 * `sql` is the main pool (ambient: inside the deploy's transaction it is that transaction); `aside` is a small pool
 * of its own for what must be seen outside the transaction while it runs (the deployment row, progress, lock
 * probes), so a deploy never waits for a second main connection while it holds one.
 */
export function projectDeployments(sql: Sql, aside: Sql, caller: RouteCaller, logger: Logger, limits: DeployLimits): Deployments {
  const gate = new DeployGate(limits);
  async function holderAlive(accountId: string, logicalId: string): Promise<boolean> {
    return aside.begin(async (tx) => !(await tryLockProject(tx as unknown as Sql, projectLockKey(accountId, logicalId)))) as Promise<boolean>;
  }

  async function current(accountId: string, logicalId: string, id: string) {
    const row = await findDeployment(sql, accountId, logicalId, id);
    if (row && !FINAL_STATUSES.has(row.status) && !(await holderAlive(accountId, logicalId))) {
      // Read again: it may have finished between the two reads.
      const again = await findDeployment(sql, accountId, logicalId, id);
      if (again && !FINAL_STATUSES.has(again.status)) await failAbandoned(aside, accountId, logicalId);
      return findDeployment(sql, accountId, logicalId, id);
    }
    return row;
  }

  /** The 409 for a project another deploy holds, naming that deployment (the CLI waits for it or cancels it). */
  async function conflict(accountId: string, logicalId: string): Promise<HttpError> {
    // The holder writes its row right after it takes the lock: look a few times.
    for (let i = 0; i < 10; i++) {
      const [active] = await activeDeployments(aside, accountId, logicalId);
      if (active) {
        return new HttpError(409, `Another deployment of project "${logicalId}" is in progress (${active.id}); wait for it or cancel it`).withFields({
          deploymentId: active.id,
        });
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
          await setProgress(aside, row.id, progress);
        }
      },
      cancelled: () => cancelRequested(aside, row.id),
    };
  }

  async function start(job: DeployJob) {
    const accountId = job.principal.account.id;
    const leave = gate.enter(accountId);
    let started!: (row: DeploymentRow) => void;
    let refused!: (err: unknown) => void;
    const ready = new Promise<DeploymentRow>((resolve, reject) => {
      started = resolve;
      refused = reject;
    });
    let rowId: string | undefined;
    const begun = Date.now();
    const run = outsideTransaction(() =>
      sql.begin(async (txHandle) => {
        const tx = txHandle as unknown as Sql;
        if (!(await tryLockProject(tx, projectLockKey(accountId, job.logicalId)))) throw await conflict(accountId, job.logicalId);
        // Any deployment of the project still marked running lost its server: we hold its lock now.
        await failAbandoned(aside, accountId, job.logicalId);
        const row = await insertDeployment(aside, { accountId, logicalId: job.logicalId, kind: job.kind, dryRun: false });
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
            await finishDeployment(tx, row.id, 'FAILED', {
              error: { code: err.status === 402 ? 'PAYMENT_REQUIRED' : 'VALIDATION_ERROR', message: err.message },
            });
          } else {
            logger.error({ err, deploymentId: row.id }, 'project deployment failed');
            await finishDeployment(tx, row.id, 'FAILED', {
              error: { code: 'INTERNAL_ERROR', message: 'The deployment failed on the server; nothing of it was applied.' },
            });
          }
        }
      }),
    ).then(
      async () => {
        const done = (await findDeployment(sql, accountId, job.logicalId, rowId!))!;
        // The operator's log: every deploy, destroy or import that ran, and how it ended.
        logger.info(
          {
            event: 'deployment',
            accountId,
            project: job.logicalId,
            deploymentId: done.id,
            kind: job.kind,
            status: done.status,
            ms: Date.now() - begun,
            ...(done.error ? { error: done.error.message } : {}),
          },
          `deployment ${done.status.toLowerCase()}`,
        );
        return done;
      },
      (err) => {
        refused(err);
        throw err;
      },
    );
    const tracked = run
      .catch(() => undefined)
      .finally(() => {
        leave();
        inFlight.delete(tracked);
      });
    inFlight.add(tracked);
    const row = await ready;
    return { row, done: run };
  }

  async function dryRun(job: Omit<DeployJob, 'kind' | 'after'>): Promise<DeployResponse> {
    const leave = gate.enter(job.principal.account.id);
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
    } finally {
      leave();
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

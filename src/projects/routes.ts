import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { Principal } from '../accounts/index.js';
import { alertChannelRoutes } from '../alerts/index.js';
import { checkGroupRoutes, checkRoutes } from '../checks/index.js';
import { dashboardRoutes } from '../dashboards/index.js';
import { HttpError, notFound } from '../http/errors.js';
import { RouteCaller } from '../http/invoke.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { privateLocationRoutes } from '../private-locations/index.js';
import { startSessions } from '../runners/index.js';
import { maintenanceWindowRoutes, statusPageRoutes } from '../status-pages/index.js';
import type { Deps } from '../storage/deps.js';
import { type Applied, prepare } from './deployer.js';
import { projectDeployments } from './deployments.js';
import { IMPORT_ROUTES, importRoutes } from './imports.js';
import { DEPLOY_ROUTES } from './kinds.js';
import { DeployedProject, Deployment, DeployResponse, FINAL_STATUSES, ProjectInfo, ProjectSync } from './model.js';
import {
  type DeploymentRow,
  deleteDeployment,
  deleteProject,
  findDeployment,
  findProject,
  insertProject,
  listProjects,
  toDeployment,
  toProject,
} from './repository.js';

const tag = 'Projects';

const LogicalIdParams = Type.Object({ logicalId: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });
const DeploymentParams = Type.Object(
  { logicalId: Type.String({ minLength: 1, maxLength: 1024 }), deploymentId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

const DeployQuery = Type.Object(
  {
    dryRun: Type.Boolean({ default: false, description: 'Answer the diff the deploy would apply, changing nothing' }),
    scheduleOnDeploy: Type.Boolean({ default: true, description: 'Run the checks the deploy creates or changes right after it' }),
    preserveResources: Type.Boolean({ default: false, description: 'Resources gone from the code stay in the account (DETACHED) instead of being deleted' }),
  },
  { additionalProperties: false },
);

const DestroyQuery = Type.Object(
  {
    preserveResources: Type.Boolean({ default: false, description: "Keep the project's resources in the account; only the project goes" }),
    dryRun: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/** What a destroy of a project that does not exist answers: nothing to follow (no `status`). */
const NothingToDestroy = Type.Object({ project: Type.Null(), diff: Type.Array(Type.Unknown(), { maxItems: 0 }) });

const SSE_POLL_MS = 200;
const SSE_KEEPALIVE_MS = 15_000;
/** A stream ends after this long even if the deployment has not: the CLI connects again. */
const SSE_MAX_MS = 10 * 60_000;

export function projectRoutes(deps: Deps): AnyRoute[] {
  const { sql, config, queues, logger } = deps;
  const caller = new RouteCaller(
    [
      ...privateLocationRoutes(deps),
      ...checkGroupRoutes(deps),
      ...alertChannelRoutes(deps),
      ...checkRoutes(deps),
      ...maintenanceWindowRoutes(deps),
      ...dashboardRoutes(deps),
      ...statusPageRoutes(deps),
    ],
    [...DEPLOY_ROUTES, ...IMPORT_ROUTES],
  );
  const deployments = projectDeployments(sql, deps.asideSql, caller, logger, {
    maxConcurrent: config.projects.maxConcurrentDeploys,
    maxPerAccount: config.projects.maxConcurrentDeploysPerAccount,
  });
  const deployLimit = config.projects.deployBodyLimitBytes;

  /** After a deploy commits: a run now of each check it created or changed (scheduleOnDeploy). */
  function scheduleAfter(principal: Principal, done: Promise<DeploymentRow>, changed: () => string[]) {
    done
      .then(async (row) => {
        if (row.status !== 'SUCCEEDED' || !changed().length) return;
        await startSessions(sql, queues, principal.account.id, changed(), 'CLI_DEPLOY', config.runner.sessionTimeoutSeconds * 1000);
      })
      .catch((err: unknown) => logger.warn({ err }, 'could not start the runs of a deploy'));
  }

  async function deploy(principal: Principal, query: { dryRun: boolean; scheduleOnDeploy: boolean; preserveResources: boolean }, body: ProjectSync) {
    const prepared = await prepare(sql, principal.account.id, body);
    const target = { prepared };
    if (query.dryRun)
      return { dry: await deployments.dryRun({ principal, logicalId: body.project.logicalId, target, preserveResources: query.preserveResources }) };
    let changed: string[] = [];
    const started = await deployments.start({
      principal,
      logicalId: body.project.logicalId,
      kind: 'DEPLOY',
      target,
      preserveResources: query.preserveResources,
      after: async (applied: Applied) => {
        changed = applied.changedChecks;
      },
    });
    if (query.scheduleOnDeploy) scheduleAfter(principal, started.done, () => changed);
    return { started };
  }

  async function destroy(principal: Principal, logicalId: string, query: { preserveResources: boolean; dryRun: boolean }) {
    const project = await findProject(sql, principal.account.id, logicalId);
    if (!project) return undefined;
    const target = { destroy: project };
    if (query.dryRun) return { dry: await deployments.dryRun({ principal, logicalId, target, preserveResources: query.preserveResources }) };
    const started = await deployments.start({
      principal,
      logicalId,
      kind: 'DESTROY',
      target,
      preserveResources: query.preserveResources,
      after: async () => deleteProject(sql, project.id),
    });
    return { started };
  }

  /** The outcome of a deployment the caller waited for, as the older CLIs' synchronous routes answer it. */
  /**
   * The answer of a synchronous deploy. One the body made fail is a 4xx that changes nothing: its deployment
   * (kept for the asynchronous form, which clients follow by id) is forgotten. A server failure stays on record.
   */
  async function synchronous(row: DeploymentRow) {
    if (row.status === 'SUCCEEDED' && row.result) return { status: 200, body: row.result };
    const refused = row.error?.code === 'PAYMENT_REQUIRED' || row.error?.code === 'VALIDATION_ERROR';
    if (refused) await deleteDeployment(sql, row.id);
    throw new HttpError(row.error?.code === 'PAYMENT_REQUIRED' ? 402 : 400, row.error?.message ?? 'The deployment did not complete');
  }

  const deploymentOf = async (principal: Principal, params: { logicalId: string; deploymentId: string }) => {
    const row = await deployments.current(principal.account.id, params.logicalId, params.deploymentId);
    if (!row) throw notFound();
    return row;
  };

  /** Server-sent events of a deployment: `progress` as it grows, then `complete` with the final deployment. */
  function eventStream(principal: Principal, params: { logicalId: string; deploymentId: string }, first: DeploymentRow): PassThrough {
    const stream = new PassThrough();
    const send = (event: string, data: unknown) => stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    void (async () => {
      const startedAt = Date.now();
      let lastProgress = -1;
      let lastWrite = Date.now();
      let row: DeploymentRow | undefined = first;
      stream.write(': connected\n\n');
      for (let i = 0; row && !stream.destroyed; i++) {
        if (FINAL_STATUSES.has(row.status)) {
          send('complete', toDeployment(row));
          break;
        }
        if (row.progress > lastProgress) {
          lastProgress = row.progress;
          send('progress', { progress: row.progress });
          lastWrite = Date.now();
        } else if (Date.now() - lastWrite > SSE_KEEPALIVE_MS) {
          stream.write(': keep-alive\n\n');
          lastWrite = Date.now();
        }
        if (Date.now() - startedAt > SSE_MAX_MS) break;
        await new Promise((resolve) => setTimeout(resolve, SSE_POLL_MS));
        // Now and then through `current`, which notices a deployment whose server went away.
        row =
          i % 10 === 9
            ? await deployments.current(principal.account.id, params.logicalId, params.deploymentId)
            : await findDeployment(sql, principal.account.id, params.logicalId, params.deploymentId);
      }
      if (!row) send('error', { message: 'The deployment no longer exists' });
      stream.end();
    })().catch((err: unknown) => {
      logger.warn({ err }, 'deployment event stream failed');
      if (!stream.destroyed) {
        send('error', { message: 'The event stream failed on the server; connect again' });
        stream.end();
      }
    });
    return stream;
  }

  return [
    // Before /next/projects/{logicalId}: `/next/projects/imports` is the import plans, not a project called "imports".
    ...importRoutes(deps, caller),
    defineRoute({
      method: 'POST',
      path: '/v1/projects/deploy',
      operationId: 'deployProject',
      summary: "Deploy a project (the anchor CLI's `checkly deploy`): the body is the whole desired state",
      description:
        'Members are created or updated (an unchanged one is not written), members gone from the body are deleted ' +
        '(DETACHED with preserveResources), resources named by physicalId (member false) must exist and are never changed. ' +
        'A dry run answers 200 with the diff; a deploy answers 202 with the deployment to follow (its events, or completion). ' +
        'The body may be gzip-encoded (Content-Encoding: gzip), as the CLI sends it.',
      tag,
      access: 'write',
      bodyLimitBytes: deployLimit,
      errors: [402, 409],
      schema: { query: DeployQuery, body: ProjectSync, responses: { 200: DeployResponse, 202: Deployment } },
      handler: async ({ principal, query, body }) => {
        const outcome = await deploy(principal, query, body);
        if (outcome.dry) return { status: 200, body: outcome.dry };
        return { status: 202, body: toDeployment(outcome.started!.row) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next-v2/projects/deploy',
      operationId: 'deployProjectSync',
      summary: 'Deploy a project and answer when it is done (the CLI before 8.10)',
      tag,
      access: 'write',
      bodyLimitBytes: deployLimit,
      errors: [402, 409],
      schema: { query: DeployQuery, body: ProjectSync, responses: { 200: DeployResponse } },
      handler: async ({ principal, query, body }) => {
        const outcome = await deploy(principal, query, body);
        if (outcome.dry) return { status: 200, body: outcome.dry };
        return await synchronous(await outcome.started!.done);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/projects/{logicalId}/deployments/{deploymentId}',
      operationId: 'getProjectDeployment',
      summary: 'A deployment of a project',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: DeploymentParams, responses: { 200: Deployment } },
      handler: async ({ principal, params }) => ({ status: 200, body: toDeployment(await deploymentOf(principal, params)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/projects/{logicalId}/deployments/{deploymentId}/events',
      operationId: 'streamProjectDeployment',
      summary: 'Server-sent events of a deployment: progress, then complete (the final deployment)',
      description:
        'Events are `progress` (`{"progress": 0-100}`), `complete` (the deployment) and `error` (`{"message"}`). A finished deployment sends `complete` at once.',
      tag,
      access: 'read',
      errors: [404],
      contentType: 'text/event-stream',
      schema: { params: DeploymentParams, responses: { 200: Type.String({ description: 'text/event-stream' }) } },
      handler: async ({ principal, params }) => {
        const row = await deploymentOf(principal, params);
        return {
          status: 200,
          body: eventStream(principal, params, row),
          streaming: true,
          headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/projects/{logicalId}/deployments/{deploymentId}/completion',
      operationId: 'waitForProjectDeployment',
      summary: 'Waits up to maxWaitSeconds for a deployment to finish: 200 once it has, 408 while it still runs',
      tag,
      access: 'read',
      errors: [404, 408],
      schema: {
        params: DeploymentParams,
        query: Type.Object({ maxWaitSeconds: Type.Integer({ minimum: 0, maximum: 60, default: 30 }) }, { additionalProperties: false }),
        responses: { 200: Deployment },
      },
      handler: async ({ principal, params, query, context }) => {
        const row = await deployments.waitFor(principal.account.id, params.logicalId, params.deploymentId, query.maxWaitSeconds * 1000, context.signal);
        if (!row) throw notFound();
        if (!FINAL_STATUSES.has(row.status)) throw new HttpError(408, 'The deployment is still running').withFields({ deploymentId: row.id });
        return { status: 200, body: toDeployment(row) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/projects/{logicalId}/deployments/{deploymentId}/cancel',
      operationId: 'cancelProjectDeployment',
      summary: 'Asks a running deployment to stop: it ends CANCELLED with nothing applied (a finished one stays as it is)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: DeploymentParams, responses: { 200: Deployment } },
      handler: async ({ principal, params }) => {
        const row = await deployments.cancel(principal.account.id, params.logicalId, params.deploymentId);
        if (!row) throw notFound();
        return { status: 200, body: toDeployment(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/projects/{logicalId}',
      operationId: 'destroyProject',
      summary: 'Destroy a project (`checkly destroy`): its resources are deleted (kept with preserveResources), then the project',
      description:
        'Answers 202 with the deployment to follow; a dry run answers 200 with the diff; a project that does not exist answers 200 `{"project": null, "diff": []}`.',
      tag,
      access: 'write',
      errors: [409],
      schema: { params: LogicalIdParams, query: DestroyQuery, responses: { 200: Type.Union([DeployResponse, NothingToDestroy]), 202: Deployment } },
      handler: async ({ principal, params, query }) => {
        const outcome = await destroy(principal, params.logicalId, query);
        if (!outcome) return { status: 200, body: { project: null, diff: [] } };
        if (outcome.dry) return { status: 200, body: outcome.dry };
        return { status: 202, body: toDeployment(outcome.started!.row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/next/projects/{logicalId}',
      operationId: 'destroyProjectSync',
      summary: 'Destroy a project and answer when it is done (the CLI before 8.10)',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: {
        params: LogicalIdParams,
        query: Type.Object({ preserveResources: Type.Boolean({ default: false }) }, { additionalProperties: false }),
        responses: { 200: DeployResponse },
      },
      handler: async ({ principal, params, query }) => {
        const outcome = await destroy(principal, params.logicalId, { ...query, dryRun: false });
        if (!outcome) throw new HttpError(404, `Project "${params.logicalId}" not found`);
        return await synchronous(await outcome.started!.done);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/projects',
      operationId: 'listProjects',
      summary: "The account's projects",
      tag,
      access: 'read',
      schema: { responses: { 200: Type.Array(DeployedProject) } },
      handler: async ({ principal }) => ({ status: 200, body: (await listProjects(sql, principal.account.id)).map(toProject) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/next/projects/{logicalId}',
      operationId: 'getProject',
      summary: 'A project',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: LogicalIdParams, responses: { 200: DeployedProject } },
      handler: async ({ principal, params }) => {
        const project = await findProject(sql, principal.account.id, params.logicalId);
        if (!project) throw new HttpError(404, `Project "${params.logicalId}" not found`);
        return { status: 200, body: toProject(project) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next/projects',
      operationId: 'createProject',
      summary: 'Create an empty project (`checkly import` on a project never deployed)',
      tag,
      access: 'write',
      errors: [409],
      schema: { body: ProjectInfo, responses: { 201: DeployedProject } },
      handler: async ({ principal, body }) => {
        const project = await insertProject(sql, principal.account.id, { ...body, repoUrl: body.repoUrl ?? null });
        if (!project) throw new HttpError(409, `The account already has a project with logicalId "${body.logicalId}"`);
        return { status: 201, body: toProject(project) };
      },
    }),
  ];
}

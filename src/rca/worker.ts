import type { Logger } from '../platform/logger.js';
import type { Deps } from '../storage/deps.js';
import type { Queues } from '../storage/queues.js';
import type { Evidence } from './evidence.js';
import { type Analysis, explain } from './explain.js';
import { checkGroupEvidence, testSessionGroupEvidence } from './gather.js';
import { improveWithModel } from './model.js';
import { completeRca, findRca, pendingRcas } from './repository.js';

/** The queue analyses are made on (by the API process in embedded mode, by `npm run worker` with servers). */
export const RCA_QUEUE = 'root-cause-analyses';
/** What makes the analyses, as `provider` and `model` name it. */
export const RCA_PROVIDER = 'local';
export const RCA_MODEL = 'evidence-rules/1';
/** The provider an analysis names when RCA_MODEL_URL's model wrote its prose. */
export const RCA_MODEL_PROVIDER = 'local+model';

interface RcaJob {
  id: string;
  accountId: string;
}

export async function enqueueRca(queues: Queues, job: RcaJob): Promise<void> {
  // The analysis id is the job id: asked twice (a restart's sweep), it is made once.
  await queues
    .queue<RcaJob>(RCA_QUEUE)
    .add('analyse', job, { jobId: job.id, attempts: 3, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: 1000, removeOnFail: 1000 });
}

/** What an analysis says when its evidence could not be read: never PENDING for ever (the CLI waits on it). */
function unavailable(why: string): Analysis {
  return {
    classification: 'UNKNOWN',
    userImpact: 'Unknown: the evidence could not be read.',
    rootCause: `No analysis could be made: ${why}. Ask again; if it keeps failing, the service's log names the cause.`,
    codeFix: null,
    evidence: null,
    referenceLinks: null,
  };
}

type RcaDeps = Pick<Deps, 'sql' | 'store' | 'config' | 'queues' | 'outbound'> & { logger: Logger };

async function analyse(deps: RcaDeps, job: RcaJob): Promise<void> {
  const row = await findRca(deps.sql, job.accountId, job.id);
  if (!row || row.status === 'COMPLETED') return;
  const started = performance.now();
  const publicUrl = deps.config.publicUrl ?? `http://localhost:${deps.config.port}`;
  const evidence: Evidence | undefined = row.error_group_id
    ? await checkGroupEvidence(deps as Deps, job.accountId, row.error_group_id, publicUrl)
    : await testSessionGroupEvidence(deps as Deps, job.accountId, row.test_session_error_group_id!);
  let analysis = evidence ? explain(evidence, row.user_context) : unavailable('the error group has no failed runs left (they may have passed their retention)');
  let madeBy: { provider: string; model: string } | undefined;
  if (evidence && deps.config.rcaModel) {
    // The team's model rewrites the prose from the same evidence; the rules' analysis stands when it cannot.
    const improved = await improveWithModel(deps.config.rcaModel, deps.outbound, analysis, evidence);
    if (improved.model) {
      analysis = improved.analysis;
      madeBy = { provider: RCA_MODEL_PROVIDER, model: `${RCA_MODEL} + ${improved.model}` };
    } else deps.logger.warn({ rcaId: row.id, problem: improved.problem }, 'root-cause analysis: the model was not used; the rules’ analysis stands');
  }
  await completeRca(deps.sql, row.id, analysis, Math.round(performance.now() - started), madeBy);
}

/**
 * Makes the analyses asked for. A job that fails three times completes its analysis as "could not be made" (the
 * CLI's watch ends, the log says why); analyses left PENDING by a lost job are asked again at start.
 */
export async function startRcaWorker(deps: RcaDeps) {
  const { logger } = deps;
  const worker = deps.queues.worker<RcaJob>(RCA_QUEUE, (job) => analyse(deps, job.data), {
    label: 'root-cause analysis',
    concurrency: 1,
    describe: (d) => ({ rcaId: d.id, accountId: d.accountId }),
    onFailed: (job, _err, final) => {
      // The cause is in the log (the queue's failure line); the analysis says only that it could not be made.
      if (final)
        void completeRca(deps.sql, job.data.id, unavailable('reading its evidence failed'), 0).catch((e: Error) =>
          logger.error({ err: e.message, rcaId: job.data.id }, 'root-cause analysis could not be closed'),
        );
    },
  });
  // Analyses a lost job left PENDING, asked again (a failure here is logged: the worker still runs).
  try {
    for (const row of await pendingRcas(deps.sql, 60)) {
      await deps.queues
        .queue<RcaJob>(RCA_QUEUE)
        .remove(row.id)
        .catch(() => 0);
      await enqueueRca(deps.queues, { id: row.id, accountId: row.account_id });
    }
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'root-cause analyses left pending could not be asked again');
  }
  return worker;
}

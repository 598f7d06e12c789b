/** Root-cause analyses of error groups, made from the service's own evidence (docs/rca.md). What other folders may use. */
export { rcaRoutes, withRootCauseAnalyses } from './routes.js';
export { RCA_QUEUE, startRcaWorker } from './worker.js';

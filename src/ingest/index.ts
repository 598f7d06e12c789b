/** Results in: the check-results routes, the queue, the worker that lands batches in ClickHouse. What other folders may use: everything else here is this folder's own. */
export { GroupCommit } from './group-commit.js';
export { IngestQueue } from './queue.js';
export { readResult, readResults, type StoredItem } from './repository.js';
export { toRow } from './result-rows.js';
export { ingestRoutes } from './routes.js';
export type { ResultItem } from './schemas.js';
export { type IngestHooks, type IngestWorkerOptions, startIngestWorker } from './worker.js';

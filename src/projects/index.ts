/** Monitoring as code: deploys, destroys, imports, uploads. What other folders may use: everything else here is this folder's own. */
export { deploysSettled } from './deployments.js';
export { projectRoutes } from './routes.js';
export { storageRoutes } from './storage-routes.js';

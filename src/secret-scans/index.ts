/** The secret scan (GET /v1/secret-scans): readable values that look like inline credentials. What other folders may use: everything else here is this folder's own. */
export { secretScanRoutes } from './routes.js';

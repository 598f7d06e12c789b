/** Dashboards: their routes, the anchor's /v1/incidents, the rendered pages. What other folders may use: everything else here is this folder's own. */
export { dashboardIncidentRoutes } from './incident-routes.js';
export { dashboardPages } from './pages.js';
export { dashboardRoutes } from './routes.js';
export { DashboardBody } from './schemas.js';

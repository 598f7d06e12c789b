/** Status pages: routes, services and incidents, maintenance windows, rendered pages, mail, badges. What other folders may use: everything else here is this folder's own. */
export { badgeRoutes } from './badges.js';
export { checkIncidentHooks } from './incident-repository.js';
export { sendDueMail } from './mail.js';
export { maintenanceWindowRoutes } from './maintenance-windows.js';
export { maintenanceRoutes } from './maintenances.js';
export { statusPages } from './pages.js';
export { statusPageRoutes } from './routes.js';

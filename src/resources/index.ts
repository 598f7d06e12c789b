/** The CRUD wing: plain resources (variables, snippets, client certificates, custom domains, triggers, runtimes, locations) and the CRUD factory. What other folders may use: everything else here is this folder's own. */

export { resealCertificateKeys } from './client-certificates/repository.js';
export { clientCertificateRoutes } from './client-certificates/routes.js';
export { BY_NUMERIC_ID, crudRoutes, operationsOf } from './crud.js';
export { customDomainRoutes, useDomain } from './custom-domains/routes.js';
export { locationRoutes } from './locations/routes.js';
export { runtimeRoutes } from './runtimes/routes.js';
export { snippetRoutes } from './snippets/routes.js';
export { triggerRoutes } from './triggers/routes.js';
export { resealSecretVariables } from './variables/repository.js';
export { variableRoutes } from './variables/routes.js';

/** Accounts, people and their keys: the repository, entitlements, sign-in, members and the audit log, and their routes. What other folders may use: everything else here is this folder's own. */
export { bootstrap, createAccount, createApiKey, findAccount, resolvePrincipal, revokeApiKey, setAccountRateLimit, setBrowserCheckLimit, type Principal } from './repository.js';
export { accountRoutes } from './routes.js';
export { authRoutes, signInLink } from './auth-routes.js';
export { memberRoutes } from './member-routes.js';
export { recordAudit, sweepAudit } from './audit.js';
export { resolveSession } from './sessions.js';
export { PrincipalCache } from './principal-cache.js';
export { sendDuePeopleMail } from './mail.js';
export { addMember } from './members.js';
export { ensureUser, resealTotpSecrets } from './users.js';
export { resealOidcSecrets } from './oidc.js';

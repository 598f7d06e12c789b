/** Accounts, people and their keys: the repository, entitlements, sign-in, members and the audit log, and their routes. What other folders may use: everything else here is this folder's own. */

export { recordAudit, sweepAudit } from './audit.js';
export { authRoutes, signInLink } from './auth-routes.js';
export { resolveSession } from './browser-sessions.js';
export { sendDuePeopleMail } from './mail.js';
export { memberRoutes } from './member-routes.js';
export { addMember } from './members.js';
export { resealOidcSecrets } from './oidc.js';
export { PrincipalCache } from './principal-cache.js';
export {
  bootstrap,
  createAccount,
  createApiKey,
  findAccount,
  type Principal,
  resolvePrincipal,
  revokeApiKey,
  setAccountRateLimit,
  setBrowserCheckLimit,
} from './repository.js';
export { accountRoutes } from './routes.js';
export { ensureUser, resealTotpSecrets } from './users.js';

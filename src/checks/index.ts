/** Checks and groups: repository, schemas, group settings and schedule, target rules, routes. What other folders may use: everything else here is this folder's own. */
export { cliCheckBody, type SharedFile } from './cli-bundle.js';
export { effectiveSettings, findGroupRow, groupExists, type SettingsRow } from './group-repository.js';
export { checkGroupRoutes } from './group-routes.js';
export { GroupBody, GroupBodyV2, type GroupData } from './group-schemas.js';
export { applyGroupSettings, effectiveSchedule, type GroupSchedule } from './group-settings.js';
export {
  type CheckInput,
  type CheckRow,
  checkExists,
  checksWithStatus,
  checkTagsOf,
  checkTypesOf,
  findCheckRow,
  findCheckWithGroupSchedule,
  insertCheck,
  resealCheckVariables,
  runnableCheckIds,
} from './repository.js';
export { checkRoutes } from './routes.js';
export {
  ApiRequest,
  createBodySchema,
  DnsRequest,
  GrpcRequest,
  IcmpRequest,
  KeyValue,
  SslRequest,
  type StoredRequest,
  TcpRequest,
  TracerouteRequest,
  UrlRequest,
} from './schemas.js';
export { checkTargetRules } from './targets.js';
export { CheckTypeCache } from './type-cache.js';

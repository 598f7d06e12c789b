/** Heartbeat checks: pings, their routes, and the sweep that records missed ones. What other folders may use: everything else here is this folder's own. */
export { sweepHeartbeats } from './pings.js';
export { heartbeatRoutes } from './routes.js';

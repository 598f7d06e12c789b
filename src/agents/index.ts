/** Agents: the service's side of the agent protocol (docs/agent.md) and the addresses runs come from. What other folders use. */
export { agentRoutes } from './routes.js';
export { staticIpRoutes } from './static-ips.js';

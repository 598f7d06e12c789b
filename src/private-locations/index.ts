/** Private locations: where an account's own runners and agents run its checks (docs/runners.md, docs/agent.md). What other folders use. */
export {
  type AgentLocation,
  type AgentRegistration,
  type AvailabilityChange,
  agentEgress,
  availabilityChanges,
  type FleetAgent,
  fleetAgents,
  locationOfKey,
  markAvailability,
  registerAgent,
  touchAgent,
} from './agents.js';
export { privateLocationSlugs } from './repository.js';
export { privateLocationRoutes } from './routes.js';

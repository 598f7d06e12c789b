/** Private locations: where an account's own runners and agents run its checks (docs/runners.md, docs/agent.md). What other folders use. */
export { agentEgress, availabilityChanges, locationOfKey, markAvailability, registerAgent, touchAgent, type AgentLocation, type AgentRegistration, type AvailabilityChange } from './agents.js';
export { privateLocationSlugs } from './repository.js';
export { privateLocationRoutes } from './routes.js';

/** Test sessions: what `checkly test`, `trigger --record` and the Playwright reporter record. What other folders may use: everything else here is this folder's own. */
export { type TestSessionErrorGroup, testSessionErrorGroup, testSessionErrorGroupRoutes } from './error-groups.js';
export { adhocRecorder } from './live.js';
export { testSessionRoutes } from './routes.js';

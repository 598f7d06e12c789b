/** The web console: the single-page app in console/ (built into console/dist), served at `/` beside the API. What other folders may use: everything else here is this folder's own. */
export { CONSOLE_CSP, consolePages } from './serve.js';

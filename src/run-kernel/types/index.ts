import type { CheckType } from '../../model/checks.js';
import { runBrowserCheck, runMultiStepCheck, runPlaywrightSuite } from './browser.js';
import { runIcmp, runTraceroute } from './commands.js';
import { type CheckRunner, unsupported } from './common.js';
import { runDns } from './dns.js';
import { runGrpc } from './grpc.js';
import { runApi, runUrl } from './http.js';
import { runSsl, runTcp } from './sockets.js';

const NOT_YET = 'Agentic checks are not run by this service: they need a language model it does not have';

/** How each check type runs: a type without an entry does not compile. */
export const CHECK_RUNNERS = {
  API: runApi,
  URL: runUrl,
  TCP: runTcp,
  DNS: runDns,
  SSL: runSsl,
  ICMP: runIcmp,
  GRPC: runGrpc,
  TRACEROUTE: runTraceroute,
  BROWSER: runBrowserCheck,
  MULTI_STEP: runMultiStepCheck,
  PLAYWRIGHT: runPlaywrightSuite,
  AGENTIC: unsupported(NOT_YET),
  HEARTBEAT: unsupported('Heartbeat checks are not run: they are pinged'),
} satisfies Record<CheckType, CheckRunner>;

import type { CheckType } from '../../model/checks.js';
import { unsupported, type CheckRunner } from './common.js';
import { runIcmp, runTraceroute } from './commands.js';
import { runDns } from './dns.js';
import { runGrpc } from './grpc.js';
import { runApi, runUrl } from './http.js';
import { runSsl, runTcp } from './sockets.js';

const NEEDS_BROWSER = 'Browser, multi-step, Playwright and agentic checks are not supported by this runner yet: it runs no browser';

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
  BROWSER: unsupported(NEEDS_BROWSER),
  MULTI_STEP: unsupported(NEEDS_BROWSER),
  PLAYWRIGHT: unsupported(NEEDS_BROWSER),
  AGENTIC: unsupported(NEEDS_BROWSER),
  HEARTBEAT: unsupported('Heartbeat checks are not run: they are pinged'),
} satisfies Record<CheckType, CheckRunner>;

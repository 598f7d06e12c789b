/**
 * Every setting an agent reads, in one table: `agent --help` prints it, docs/agent.md lists the same names, and a
 * test holds both to what `loadAgentConfig` and the runner actually read.
 */
export interface AgentSetting {
  name: string;
  default: string;
  what: string;
}

export const AGENT_SETTINGS: readonly AgentSetting[] = [
  { name: 'API_KEY', default: '(required)', what: 'a key of the private location (pl_…); the agent serves that location only' },
  { name: 'API_URL', default: '(required)', what: "the service's URL (https://…; http:// only on a trusted network)" },
  { name: 'JOB_CONCURRENCY', default: '1', what: 'runs at once, 1 to 10' },
  { name: 'LOG_LEVEL', default: 'info', what: 'debug, info, warn or error (JSON lines on stdout)' },
  { name: 'AGENT_HEALTH_PORT', default: '0 (off)', what: 'where /-/liveness, /-/readiness and /metrics answer' },
  { name: 'AGENT_HEALTH_HOST', default: '127.0.0.1', what: 'the address the health port listens on' },
  { name: 'AGENT_DATA_DIR', default: './agent-data', what: "the agent's id and its buffer of results made while cut off" },
  { name: 'AGENT_BUFFER_MB', default: '256', what: "the buffer's size limit (oldest results dropped past it, counted)" },
  { name: 'AGENT_OFFLINE_AFTER_SECONDS', default: '15', what: 'how long the service may be unreachable before the agent runs from memory' },
  { name: 'OUTBOUND_PUBLIC', default: 'true', what: 'whether the checks it runs may reach public addresses' },
  { name: 'OUTBOUND_ALLOW', default: '(empty)', what: 'networks the checks may reach besides (CIDRs or hosts, comma-separated): the ones it watches' },
  { name: 'DNS_SERVERS', default: "(the machine's)", what: 'the resolvers checks use (ip or ip:port, comma-separated)' },
  { name: 'EGRESS_IPS', default: '(empty)', what: "the addresses its checks' connections come from, when the service sees another one (NAT)" },
  { name: 'BROWSER_CONCURRENCY', default: 'the cores', what: 'browser runs at once (fewer where half the memory would not hold them)' },
  { name: 'BROWSER_MEMORY_MB', default: '1536', what: "the memory of one browser run's processes together" },
  { name: 'CHROMIUM_BINARY', default: '/usr/lib/chromium/chromium-headless-shell', what: 'the Chromium browser runs use' },
  { name: 'SANDBOX_NODE', default: "this agent's Node.js", what: 'the Node.js that runs Playwright inside the browser sandbox' },
  { name: 'BWRAP_PATH', default: '/usr/bin/bwrap', what: 'bubblewrap, which isolates each browser run' },
  { name: 'HTTPS_PROXY', default: '(unset)', what: "the proxy the agent's calls to the service go through (also HTTP_PROXY, NO_PROXY)" },
  { name: 'NODE_EXTRA_CA_CERTS', default: '(unset)', what: "a PEM file of extra CAs, when the service's certificate is signed by a private CA" },
];

/** What `agent --help` prints. */
export function agentHelp(version: string): string {
  const width = Math.max(...AGENT_SETTINGS.map((s) => s.name.length));
  const rows = AGENT_SETTINGS.map((s) => `  ${s.name.padEnd(width)}  ${s.what} [default: ${s.default}]`);
  return [
    `monitoring-agent ${version}: runs a private location's checks and reports to the service over HTTPS.`,
    '',
    'Usage: API_KEY=pl_… API_URL=https://monitoring.example.com node agent.mjs',
    '       node agent.mjs --version | --help',
    '',
    'Settings (environment variables):',
    ...rows,
    '',
    'SIGTERM or SIGINT stops it: the runs in flight finish (up to 30 s) and are reported. Docs: docs/agent.md.',
    '',
  ].join('\n');
}

import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AGENT_VERSION } from '../model/agent.js';
import { LOCATIONS as PUBLIC_LOCATION_NAMES } from '../model/checks.js';
import { type OutboundSettings, parseAllowList } from './outbound.js';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid setting ${variable}: ${detail}`);
    this.name = 'ConfigError';
  }
}

/** What one analytics query may use of the engine. */
export interface QueryBudget {
  maxSeconds: number;
  maxMemoryBytes: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  host: string;
  port: number;
  /**
   * Where clients reach the service (ping URLs of heartbeat checks). Unset: the address it listens on,
   * filled in once it listens.
   */
  publicUrl: string | undefined;
  /** Whether PUBLIC_URL was given: links in answers then use it; otherwise the address each request was sent to. */
  publicUrlGiven: boolean;
  databaseUrl: string;
  /** The API process's Postgres pool: its connections, and how long a request waits for one before a 503. */
  postgres: { poolSize: number; acquireTimeoutMs: number };
  redisUrl: string;
  /** Prefix of every Redis key the service writes (rate limits, queues); lets runs share one Redis. */
  redisPrefix: string;
  clickhouse: {
    /** Unset: embedded engine (chdb) in dataDir. */
    url: string | undefined;
    user: string;
    password: string;
    database: string;
    retentionDays: number;
    /** How long each rollup tier keeps its buckets (longer than raw rows: a year of daily reports stays cheap). */
    rollupRetentionDays: { hour: number; day: number };
    /** Set: the DDL is created ON CLUSTER with replicated tables and Distributed tables in front (docs/scaling.md). */
    cluster: string | undefined;
    /**
     * How the rollup tables are filled (docs/analytics.md, "Rollups"): `views`, by materialized views on every insert
     * (any number of writers); `ticks`, once a minute by the one process that holds the embedded engine (the default
     * there: the views cost a fixed ~100 ms of the engine per insert).
     */
    rollups: 'views' | 'ticks';
  };
  dataDir: string;
  /** The key secrets are sealed with at rest (docs/platform.md, "Secrets at rest"). */
  secrets: SecretsSettings;
  logLevel: LogLevel;
  /** LOG_REQUESTS: the level of the line each request writes (debug by default: the events an operator follows stand out at info). */
  requestLogLevel: 'info' | 'debug';
  rateLimit: { points: number; windowSeconds: number };
  bodyLimitBytes: number;
  /** Projects (`checkly deploy`): the largest deploy body (after gzip is undone) and uploaded blob, docs/projects.md. */
  projects: {
    deployBodyLimitBytes: number;
    blobLimitBytes: number;
    blobDir: string;
    /** Deploys, destroys and dry runs at once in this process (each holds a pooled connection): fewer than the pool. */
    maxConcurrentDeploys: number;
    /** The same for one account. */
    maxConcurrentDeploysPerAccount: number;
    /** Set (BLOB_STORE=s3): blobs in an S3-compatible bucket instead of blobDir. */
    s3:
      | { bucket: string; endpoint?: string; region: string; accessKeyId?: string; secretAccessKey?: string; forcePathStyle: boolean; prefix: string }
      | undefined;
  };
  bootstrapApiKey: string | undefined;
  /** The longest a dashboard's data document is reused (never longer than the dashboard's refreshRate). */
  dashboardCacheSeconds: number;
  /** The longest a status page's view (services, bars, incidents) is reused before it is built again. */
  statusPageCacheSeconds: number;
  /** DNS servers (address[:port]) that custom-domain TXT records are looked up on; empty: the system's resolver. */
  domainDnsServers: string[];
  /** The most verified subscribers `autoVerify` imports may leave in one account (people subscribed without a confirm mail). */
  statusPageAutoVerifyLimit: number;
  /** Behind a reverse proxy: take the client address from X-Forwarded-For (sign-in limits, the audit log, dashboard logins). */
  trustProxy: boolean;
  /** How many proxies in front add to X-Forwarded-For: the client is the address that many entries from the right. */
  trustProxyHops: number;
  /** What calls made for an account (deliveries, check runs) may reach: docs/outbound.md. */
  outbound: OutboundSettings;
  /** The service's own runners and their scheduler (docs/runners.md). */
  runner: {
    /** Run checks in this process (the API in embedded mode, `npm run worker` in server mode). */
    inProcess: boolean;
    /** The locations the in-process runner serves (queue names: public locations, `private-<id>`). */
    locations: string[];
    /** Runs in flight at once per location. */
    concurrency: number;
    /** How long a finished run's result waits for others to go to ingest in one batch (RESULT_LINGER_MS). */
    resultLingerMs: number;
    /** How much of check definitions a runner keeps between scheduled runs (estimated bytes), forgotten when Postgres announces a change (0: none). */
    definitionCacheBytes: number;
    /** Schedule runs from this process (several may: each slot is claimed once). */
    scheduler: boolean;
    tickMs: number;
    lookaheadMs: number;
    /** How much of a location's schedule one batch job carries (SCHEDULER_WINDOW_MS): slots are claimed a window at a time. */
    windowMs: number;
    reconcileMs: number;
    /** How long a check session waits for its results before it is TIMED_OUT. */
    sessionTimeoutSeconds: number;
    /** Browser and multi-step runs at once in this process (each a sandboxed Chromium: docs/browser-checks.md). */
    browserConcurrency: number;
    /** Resident memory of one browser run's processes together; past it the run is stopped. */
    browserMemoryBytes: number;
    /** Days a run's screenshots, traces and videos are kept after their last use; 0 keeps them. */
    assetRetentionDays: number;
  };
  /** Agents of private locations (docs/agent.md). */
  agents: AgentServiceSettings;
  /** Runs exported as OpenTelemetry spans (docs/traces.md): unset endpoint, none. */
  otel: OtelSettings;
  /** TRACE_LINK_TEMPLATE: a link to a run's trace in the team's tracing tool, `{traceId}` replaced (docs/traces.md). */
  traceLinkTemplate: string | undefined;
  /** RCA_MODEL_*: an OpenAI-compatible chat endpoint that rewrites root-cause analyses' prose (docs/rca.md); unset, none. */
  rcaModel: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  /** Bearer token for /metrics; unset: /metrics is not served. */
  metricsToken: string | undefined;
  shutdownTimeoutMs: number;
  /** Per-query limits of analytics queries; a query past them answers 400 instead of starving the engine. */
  analytics: QueryBudget;
  /** Closed buckets of bucketed reports kept in each API process (docs/analytics.md, "Report cache"). */
  /** `markDays: false` stops ingest marking days while the cache stays on: only the bench sets it, to measure what marking costs. */
  reportCache: { enabled: boolean; maxBytes: number; closeAfterMs: number; markDays?: boolean };
  ingest: {
    maxBatchSize: number;
    /** Run the queue consumer inside the API process (always in embedded mode). */
    inProcessWorker: boolean;
    workerConcurrency: number;
    /** Batches waiting for the insert go in together, up to this many rows (src/ingest/coalescer.ts). */
    insertMaxRows: number;
  };
  /** People (docs/people.md): sessions, sign-in throttling, invitations, the audit log, OpenID Connect by environment. */
  people: {
    sessionIdleMs: number;
    sessionAbsoluteMs: number;
    /** How long a process keeps what an API key resolved to (0: not at all); changes are announced and forgotten at once. */
    keyCacheMs: number;
    /** Failed sign-ins allowed per email and per client address in 15 minutes. */
    signInFailures: number;
    /** Password hashes at once (each on a thread of its own, off libuv's pool), and how many may wait; past both, a 503. */
    hashThreads: number;
    hashQueue: number;
    invitationTtlMs: number;
    auditRetentionDays: number;
    /** OpenID Connect for the default account from the environment (an account may set its own through the API). */
    oidc:
      | {
          issuer: string;
          clientId: string;
          clientSecret: string;
          roleClaim: string;
          roleMap: { value: string; role: string }[];
          defaultRole: string | null;
          trustProviderMfa: boolean;
        }
      | undefined;
  };
  /** Acting on results: check state, alerts and their delivery, heartbeats, maintenance. */
  alerts: {
    /** Off: the worker only lands results (no statuses, alerts or heartbeat misses); for measuring its cost. */
    stateEvaluation: boolean;
    /** How often due heartbeats, reminders and undelivered notifications are looked at. */
    sweepIntervalMs: number;
    deliveryAttempts: number;
    /** First retry after this; each next one waits twice as long. */
    retryBaseMs: number;
    deliveryTimeoutMs: number;
    /** smtp(s)://user:pass@host:port for email channels; unset: email deliveries fail, saying so. */
    smtpUrl: string | undefined;
    emailFrom: string;
    /** An HTTP endpoint that sends SMS: POSTed {to, name, text}; unset: SMS deliveries fail, saying so. */
    smsUrl: string | undefined;
    smsToken: string | undefined;
    /** PagerDuty's Events API v2 endpoint (PAGERDUTY_EVENTS_URL: a proxy, or a local receiver in tests). */
    pagerdutyEventsUrl: string;
    /** Opsgenie's API for both regions (OPSGENIE_API_URL: a proxy); unset: each channel's region picks api.opsgenie.com or api.eu.opsgenie.com. */
    opsgenieApiUrl: string | undefined;
    /**
     * No data (docs/analytics.md): an activated check past this many of its periods (per location, turns and
     * retries counted) without a run is NO_DATA, and its channels get one "not running" message (and one when
     * runs resume) unless noDataAlerts is off; graceMs is added to the periods.
     */
    noDataAfterPeriods: number;
    noDataGraceMs: number;
    noDataAlerts: boolean;
    /** How often silences are looked for. */
    noDataSweepMs: number;
  };
}

type Env = Record<string, string | undefined>;

export interface OtelSettings {
  /** Where spans go (OTLP over HTTP, protobuf): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string | undefined;
  /** OTEL_EXPORTER_OTLP_HEADERS (`key=value,key2=value2`, values URL-encoded as the specification says): sent with each export. */
  headers: Record<string, string>;
  serviceName: string;
}

function traceLinkTemplate(env: Env): string | undefined {
  const template = env.TRACE_LINK_TEMPLATE?.trim();
  if (!template) return undefined;
  if (!template.includes('{traceId}'))
    throw new ConfigError('TRACE_LINK_TEMPLATE', 'put {traceId} where the trace id goes, for example https://tracing.example/trace/{traceId}');
  const sample = template.replace('{traceId}', '0af7651916cd43dd8448eb211c80319c');
  if (!/^https?:\/\//.test(sample) || !URL.canParse(sample)) throw new ConfigError('TRACE_LINK_TEMPLATE', 'expected an http(s) URL with {traceId} in it');
  return template;
}

function otelSettings(env: Env): OtelSettings {
  const traces = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', undefined, ['http:', 'https:']);
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http:', 'https:']);
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'expected key=value pairs separated by commas');
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'a key or value is not valid URL encoding');
    }
  }
  return {
    tracesUrl: traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined),
    headers,
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'monitoring-service'),
  };
}

/** The service's side of agents (docs/agent.md). */
export interface AgentServiceSettings {
  /** A run on an agent that stops renewing its lease runs again on another agent after this. */
  leaseMs: number;
  /** A run no agent takes within this is dropped and counted. */
  maxWaitMs: number;
  /** An agent seen within this is running (fleet view, static IPs). */
  seenSeconds: number;
  /** A location with activated checks and no agent for this long alerts its checks' channels. */
  unavailableMs: number;
  /** Agents below this version are shown outdated. */
  minVersion: string;
  /** Where the service's own runners' connections come from, for /v1/static-ips (none known by default). */
  runnerEgress: string[];
}

function agentServiceSettings(env: Env): AgentServiceSettings {
  const minVersion = str(env, 'AGENT_MIN_VERSION', AGENT_VERSION);
  if (!/^\d+\.\d+\.\d+$/.test(minVersion)) throw new ConfigError('AGENT_MIN_VERSION', `expected a version such as 1.0.0, got "${minVersion}"`);
  const runnerEgress = (env.RUNNER_EGRESS_IPS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const ip of runnerEgress) if (isIP(ip.split('/')[0]!) === 0) throw new ConfigError('RUNNER_EGRESS_IPS', `"${ip}" is not an IP address or CIDR range`);
  return {
    leaseMs: int(env, 'AGENT_LEASE_SECONDS', 300, 2, 3600) * 1000,
    maxWaitMs: int(env, 'AGENT_MAX_WAIT_SECONDS', 360, 10, 86_400) * 1000,
    seenSeconds: int(env, 'AGENT_SEEN_SECONDS', 60, 5, 3600),
    unavailableMs: int(env, 'AGENT_UNAVAILABLE_SECONDS', 600, 5, 86_400) * 1000,
    minVersion,
    runnerEgress,
  };
}

/** An agent's settings (`npm run agent`): named as the anchor's agent names them, plus this project's own. */
export interface AgentConfig {
  apiKey: string;
  apiUrl: string;
  /** Runs at once, 1 to 10. */
  jobConcurrency: number;
  logLevel: LogLevel;
  /** Where /-/readiness, /-/liveness and /metrics are served; 0: not served. */
  healthPort: number;
  healthHost: string;
  /** Its identity and its buffer of results made while cut off live here. */
  dataDir: string;
  /** The buffer's size limit: past it the oldest results are dropped and counted. */
  bufferMaxBytes: number;
  /** How long the service may be unreachable before the agent runs its checks from memory. */
  offlineAfterMs: number;
  /** What the checks it runs may reach (its OUTBOUND_ALLOW opens the networks it watches). */
  outbound: OutboundSettings;
  browserConcurrency: number;
  browserMemoryBytes: number;
  /** Addresses its checks' connections come from, when the service cannot see them (NAT): for /v1/static-ips. */
  egressIps: string[];
}

export function loadAgentConfig(env: Env = process.env): AgentConfig {
  const apiKey = str(env, 'API_KEY', '');
  if (!/^pl_[0-9a-f]{16,128}$/.test(apiKey))
    throw new ConfigError('API_KEY', 'must be a private location key (pl_…): create one with POST /v1/private-locations or /v1/private-locations/{id}/keys');
  const apiUrl = url(env, 'API_URL', undefined, ['http:', 'https:']);
  if (!apiUrl) throw new ConfigError('API_URL', "is required: the service's URL, for example https://monitoring.example.com");
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const egressIps = (env.EGRESS_IPS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const ip of egressIps) if (isIP(ip) === 0) throw new ConfigError('EGRESS_IPS', `"${ip}" is not an IP address`);
  return {
    apiKey,
    apiUrl: apiUrl.replace(/\/+$/, ''),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 1, 1, 10),
    logLevel: logLevel as LogLevel,
    healthPort: int(env, 'AGENT_HEALTH_PORT', 0, 0, 65535),
    healthHost: str(env, 'AGENT_HEALTH_HOST', '127.0.0.1'),
    dataDir: path.resolve(str(env, 'AGENT_DATA_DIR', './agent-data')),
    bufferMaxBytes: int(env, 'AGENT_BUFFER_MB', 256, 1, 1_048_576) * 1024 * 1024,
    offlineAfterMs: int(env, 'AGENT_OFFLINE_AFTER_SECONDS', 15, 1, 3600) * 1000,
    outbound: { allowPublic: bool(env, 'OUTBOUND_PUBLIC', true), allow: allowList(env, 'OUTBOUND_ALLOW'), dnsServers: dnsServers(env, 'DNS_SERVERS') },
    ...browserRuns(env),
    egressIps,
  };
}

/** The memory this process may use: the machine's, or its cgroup's limit (a container's) where that is lower. */
export function machineMemory(): number {
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 && limit < os.totalmem() ? limit : os.totalmem();
}

/**
 * Browser runs at once (BROWSER_CONCURRENCY) and the memory of each (BROWSER_MEMORY_MB). By default one run per core
 * (a run keeps about a core busy while its Node and Chromium start: on 2 cores, 2 at once make about 1.5 times the
 * runs a minute of 1), and no more than half the machine's memory (a container's limit, where lower) holds at
 * BROWSER_MEMORY_MB each; at least 1. Per process: two runner processes on one machine each take that many.
 */
function browserRuns(env: Env): { browserConcurrency: number; browserMemoryBytes: number } {
  const browserMemoryBytes = int(env, 'BROWSER_MEMORY_MB', 1536, 256, 65_536) * 1024 * 1024;
  const fallback = Math.max(1, Math.min(os.availableParallelism(), 64, Math.floor(machineMemory() / 2 / browserMemoryBytes)));
  return { browserConcurrency: int(env, 'BROWSER_CONCURRENCY', fallback, 1, 64), browserMemoryBytes };
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw;
}

/** ROLLUPS: `ticks` needs the embedded engine (one process writes every run, so one lock orders them). */
function rollupMode(env: Env, clickhouseUrl: string | undefined): 'views' | 'ticks' {
  const mode = str(env, 'ROLLUPS', clickhouseUrl === undefined ? 'ticks' : 'views');
  if (mode !== 'views' && mode !== 'ticks') throw new ConfigError('ROLLUPS', `must be views or ticks, not ${JSON.stringify(mode)}`);
  if (mode === 'ticks' && clickhouseUrl !== undefined) {
    throw new ConfigError('ROLLUPS', 'ticks needs the embedded engine: with CLICKHOUSE_URL several processes insert runs, and the rollups are filled by views');
  }
  return mode;
}

/** BLOB_STORE=s3 and its S3_* settings; BLOB_STORE=file (the default) keeps blobs in BLOB_DIR. */
function s3Settings(env: Env): Config['projects']['s3'] {
  const store = str(env, 'BLOB_STORE', 'file');
  if (store === 'file') return undefined;
  if (store !== 's3') throw new ConfigError('BLOB_STORE', `must be file or s3, not ${JSON.stringify(store)}`);
  const bucket = str(env, 'S3_BUCKET', '');
  if (!bucket) throw new ConfigError('S3_BUCKET', 'is required with BLOB_STORE=s3');
  const endpoint = str(env, 'S3_ENDPOINT', '') || undefined;
  if (endpoint && !/^https?:\/\//.test(endpoint)) throw new ConfigError('S3_ENDPOINT', 'must be an http(s) URL');
  return {
    bucket,
    endpoint,
    region: str(env, 'S3_REGION', 'us-east-1'),
    accessKeyId: str(env, 'S3_ACCESS_KEY_ID', '') || undefined,
    secretAccessKey: str(env, 'S3_SECRET_ACCESS_KEY', '') || undefined,
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', true),
    prefix: str(env, 'S3_PREFIX', ''),
  };
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

function allowList(env: Env, name: string): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  try {
    parseAllowList(entries);
  } catch (err) {
    throw new ConfigError(name, `${(err as Error).message}; use comma-separated CIDRs (10.0.0.0/8), addresses or host names (*.corp.example)`);
  }
  return entries;
}

/** Comma-separated DNS servers as addresses with an optional port: `10.0.0.2`, `127.0.0.1:5353`, `[::1]:53`. */
function dnsServers(env: Env, name: string): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/.exec(entry);
    const port = m?.[3] === undefined ? 53 : Number(m[3]);
    if (!m || isIP(m[1] ?? m[2] ?? '') === 0 || port < 1 || port > 65535)
      throw new ConfigError(name, `"${entry}" is not a DNS server address (an IP address with an optional :port)`);
  }
  return entries;
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

/** A ClickHouse name (cluster) used as an identifier in DDL: letters, digits and underscores only. */
function identifier(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(raw)) throw new ConfigError(name, 'use letters, digits and underscores (a ClickHouse cluster name)');
  return raw;
}

const PERSON_ROLES = ['OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'];

/** OIDC_ROLE_MAP: `group=ROLE` pairs, comma-separated, the first match wins (`ops-admins=ADMIN,devs=READ_WRITE`). */
function roleMap(env: Env, name: string): { value: string; role: string }[] {
  return (env[name] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.lastIndexOf('=');
      const value = entry.slice(0, at).trim();
      const role = entry
        .slice(at + 1)
        .trim()
        .toUpperCase();
      if (at < 1 || !value || !PERSON_ROLES.includes(role) || role === 'OWNER')
        throw new ConfigError(name, `"${entry}" is not group=ROLE (ADMIN, READ_WRITE, READ_RUN or READ_ONLY)`);
      return { value, role };
    });
}

export interface SecretsSettings {
  /** SECRETS_KEY: 32 bytes; unset, the key file's (made on a fresh install). */
  key: Buffer | undefined;
  /** SECRETS_KEY_PREVIOUS: keys that may still open values during a rotation. */
  previous: Buffer[];
  /** SECRETS_KEY_FILE: where the key is kept when SECRETS_KEY is unset (default DATA_DIR/secrets.key). */
  keyFile: string;
}

/** A key as SECRETS_KEY takes it: 32 bytes, base64 (44 characters) or hex (64). */
function secretsKey(name: string, raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (key?.length !== 32)
    throw new ConfigError(name, 'expected 32 bytes as base64 (44 characters) or hex (64 digits); `npm run cli -- new-secrets-key` prints one');
  return key;
}

function secretsSettings(env: Env, dataDir: string): SecretsSettings {
  const raw = str(env, 'SECRETS_KEY', '');
  return {
    key: raw ? secretsKey('SECRETS_KEY', raw) : undefined,
    previous: str(env, 'SECRETS_KEY_PREVIOUS', '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean)
      .map((k) => secretsKey('SECRETS_KEY_PREVIOUS', k)),
    keyFile: path.resolve(str(env, 'SECRETS_KEY_FILE', path.join(dataDir, 'secrets.key'))),
  };
}

function peopleSettings(env: Env): Config['people'] {
  const issuer = url(env, 'OIDC_ISSUER', undefined, ['http:', 'https:']);
  const clientId = str(env, 'OIDC_CLIENT_ID', '');
  const clientSecret = str(env, 'OIDC_CLIENT_SECRET', '');
  if (issuer && (!clientId || !clientSecret)) throw new ConfigError('OIDC_CLIENT_ID', 'OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too');
  const defaultRole = str(env, 'OIDC_DEFAULT_ROLE', '').toUpperCase() || null;
  if (defaultRole && (!PERSON_ROLES.includes(defaultRole) || defaultRole === 'OWNER'))
    throw new ConfigError('OIDC_DEFAULT_ROLE', 'expected ADMIN, READ_WRITE, READ_RUN or READ_ONLY');
  return {
    sessionIdleMs: int(env, 'SESSION_IDLE_MINUTES', 480, 1, 100_000) * 60_000,
    keyCacheMs: int(env, 'KEY_CACHE_SECONDS', 5, 0, 60) * 1000,
    sessionAbsoluteMs: int(env, 'SESSION_MAX_HOURS', 168, 1, 10_000) * 3_600_000,
    signInFailures: int(env, 'SIGN_IN_FAILURES', 10, 1, 10_000),
    hashThreads: int(env, 'PASSWORD_HASH_THREADS', 1, 1, 16),
    hashQueue: int(env, 'PASSWORD_HASH_QUEUE', 16, 0, 10_000),
    invitationTtlMs: int(env, 'INVITATION_TTL_HOURS', 168, 1, 10_000) * 3_600_000,
    auditRetentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    oidc: issuer
      ? {
          issuer,
          clientId,
          clientSecret,
          roleClaim: str(env, 'OIDC_ROLE_CLAIM', 'groups'),
          roleMap: roleMap(env, 'OIDC_ROLE_MAP'),
          defaultRole,
          trustProviderMfa: bool(env, 'OIDC_TRUST_PROVIDER_MFA', false),
        }
      : undefined,
  };
}

function runnerSettings(env: Env): Config['runner'] {
  const onOff = (name: string) => {
    const raw = str(env, name, 'on');
    if (!['on', 'off', 'true', 'false'].includes(raw)) throw new ConfigError(name, `expected on or off, got "${raw}"`);
    return raw === 'on' || raw === 'true';
  };
  const locations = (env.RUNNER_LOCATIONS ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  for (const l of locations)
    if (!/^[a-z0-9-]{1,64}$/.test(l)) throw new ConfigError('RUNNER_LOCATIONS', `"${l}" is not a location (public names such as eu-west-1, or private-<id>)`);
  return {
    inProcess: onOff('RUNNER'),
    locations: locations.length ? locations : [...PUBLIC_LOCATION_NAMES],
    concurrency: int(env, 'RUNNER_CONCURRENCY', 16, 1, 1000),
    resultLingerMs: int(env, 'RESULT_LINGER_MS', 5000, 0, 10_000),
    definitionCacheBytes: int(env, 'DEFINITION_CACHE_MB', 0, 0, 100_000) * 1024 * 1024,
    scheduler: onOff('SCHEDULER'),
    tickMs: int(env, 'SCHEDULER_TICK_MS', 250, 10, 60_000),
    lookaheadMs: int(env, 'SCHEDULER_LOOKAHEAD_MS', 1000, 0, 60_000),
    windowMs: int(env, 'SCHEDULER_WINDOW_MS', 5000, 1000, 10_000),
    reconcileMs: int(env, 'SCHEDULER_RECONCILE_MS', 5000, 100, 600_000),
    sessionTimeoutSeconds: int(env, 'CHECK_SESSION_TIMEOUT_SECONDS', 600, 1, 86_400),
    ...browserRuns(env),
    assetRetentionDays: int(env, 'ASSET_RETENTION_DAYS', 30, 0, 3650),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const requestLogLevel = str(env, 'LOG_REQUESTS', 'debug');
  if (requestLogLevel !== 'info' && requestLogLevel !== 'debug') throw new ConfigError('LOG_REQUESTS', `expected info or debug, got "${requestLogLevel}"`);
  const redisPrefix = str(env, 'REDIS_PREFIX', 'mon:');
  if (!/^[A-Za-z0-9:_-]{1,64}$/.test(redisPrefix)) {
    throw new ConfigError('REDIS_PREFIX', 'use 1-64 letters, digits, ":", "_" or "-"');
  }
  const bootstrapApiKey = env.BOOTSTRAP_API_KEY || undefined;
  if (bootstrapApiKey !== undefined && !/^[\x21-\x7e]{32,256}$/.test(bootstrapApiKey)) {
    throw new ConfigError('BOOTSTRAP_API_KEY', 'must be 32 to 256 printable characters without spaces');
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN', 'must be 16 to 256 printable characters without spaces');
  }
  const clickhouseUrl = url(env, 'CLICKHOUSE_URL', undefined, ['http:', 'https:']);
  const inProcessWorker = bool(env, 'INGEST_IN_PROCESS', clickhouseUrl === undefined);
  if (clickhouseUrl === undefined && env.CLICKHOUSE_CLUSTER) {
    throw new ConfigError('CLICKHOUSE_CLUSTER', 'a cluster needs ClickHouse servers: set CLICKHOUSE_URL too (the embedded engine is one node)');
  }
  if (clickhouseUrl === undefined && !inProcessWorker) {
    throw new ConfigError('INGEST_IN_PROCESS', 'the embedded engine belongs to the API process, so its worker must run there too');
  }
  const poolSize = int(env, 'PG_POOL_SIZE', 10, 4, 1000);
  const maxConcurrentDeploys = int(env, 'DEPLOY_CONCURRENCY', Math.floor(poolSize / 2), 1, poolSize - 2);
  return {
    host: str(env, 'HOST', '0.0.0.0'),
    publicUrl: url(env, 'PUBLIC_URL', undefined, ['http:', 'https:'])?.replace(/\/+$/, ''),
    publicUrlGiven: env.PUBLIC_URL !== undefined && env.PUBLIC_URL !== '',
    port: int(env, 'PORT', 3000, 0, 65535),
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/monitoring', ['postgres:', 'postgresql:'])!,
    postgres: { poolSize, acquireTimeoutMs: int(env, 'PG_ACQUIRE_TIMEOUT_MS', 10_000, 100, 600_000) },
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:'])!,
    redisPrefix,
    clickhouse: {
      url: clickhouseUrl,
      user: str(env, 'CLICKHOUSE_USER', 'default'),
      password: str(env, 'CLICKHOUSE_PASSWORD', ''),
      database: str(env, 'CLICKHOUSE_DATABASE', 'default'),
      retentionDays: int(env, 'CLICKHOUSE_RETENTION_DAYS', 400, 1, 36500),
      rollupRetentionDays: {
        hour: int(env, 'CLICKHOUSE_ROLLUP_HOUR_RETENTION_DAYS', 800, 1, 36500),
        day: int(env, 'CLICKHOUSE_ROLLUP_DAY_RETENTION_DAYS', 3650, 1, 36500),
      },
      cluster: identifier(env, 'CLICKHOUSE_CLUSTER'),
      rollups: rollupMode(env, clickhouseUrl),
    },
    dataDir: path.resolve(str(env, 'DATA_DIR', './data')),
    secrets: secretsSettings(env, path.resolve(str(env, 'DATA_DIR', './data'))),
    logLevel: logLevel as LogLevel,
    requestLogLevel,
    rateLimit: {
      points: int(env, 'RATE_LIMIT_POINTS', 600, 1, 10_000_000),
      windowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
    },
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    projects: {
      deployBodyLimitBytes: int(env, 'DEPLOY_BODY_LIMIT_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      // The anchor's limit for a code bundle (30 MiB), which its CLI names when it refuses one.
      blobLimitBytes: int(env, 'BLOB_LIMIT_BYTES', 30 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      blobDir: path.resolve(str(env, 'BLOB_DIR', path.join(str(env, 'DATA_DIR', './data'), 'blobs'))),
      maxConcurrentDeploys,
      maxConcurrentDeploysPerAccount: Math.min(maxConcurrentDeploys, int(env, 'DEPLOY_CONCURRENCY_PER_ACCOUNT', 2, 1, 1000)),
      s3: s3Settings(env),
    },
    bootstrapApiKey,
    metricsToken,
    trustProxy: bool(env, 'TRUST_PROXY', false),
    trustProxyHops: int(env, 'TRUST_PROXY_HOPS', 1, 1, 10),
    outbound: { allowPublic: bool(env, 'OUTBOUND_PUBLIC', true), allow: allowList(env, 'OUTBOUND_ALLOW'), dnsServers: dnsServers(env, 'DNS_SERVERS') },
    runner: runnerSettings(env),
    agents: agentServiceSettings(env),
    otel: otelSettings(env),
    traceLinkTemplate: traceLinkTemplate(env),
    rcaModel: env.RCA_MODEL_URL
      ? {
          url: url(env, 'RCA_MODEL_URL', undefined, ['http:', 'https:'])!.replace(/\/+$/, ''),
          model: str(env, 'RCA_MODEL', 'default'),
          apiKey: env.RCA_MODEL_API_KEY || undefined,
          timeoutMs: int(env, 'RCA_MODEL_TIMEOUT_SECONDS', 60, 1, 600) * 1000,
        }
      : undefined,
    dashboardCacheSeconds: int(env, 'DASHBOARD_CACHE_SECONDS', 600, 1, 600),
    statusPageCacheSeconds: int(env, 'STATUS_PAGE_CACHE_SECONDS', 30, 0, 600),
    domainDnsServers: dnsServers(env, 'DOMAIN_DNS_SERVERS'),
    statusPageAutoVerifyLimit: int(env, 'STATUS_PAGE_AUTOVERIFY_LIMIT', 1000, 0, 10_000_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    analytics: {
      maxSeconds: int(env, 'ANALYTICS_MAX_QUERY_SECONDS', 30, 1, 3600),
      maxMemoryBytes: int(env, 'ANALYTICS_MAX_QUERY_MEMORY_MB', 1024, 1, 1_048_576) * 1024 * 1024,
    },
    reportCache: {
      enabled: bool(env, 'REPORT_CACHE', true),
      maxBytes: int(env, 'REPORT_CACHE_MB', 64, 1, 65_536) * 1024 * 1024,
      closeAfterMs: int(env, 'REPORT_CACHE_CLOSE_AFTER_SECONDS', 300, 0, 86_400) * 1000,
    },
    ingest: {
      maxBatchSize: int(env, 'INGEST_MAX_BATCH', 1000, 1, 100_000),
      inProcessWorker,
      workerConcurrency: int(env, 'INGEST_WORKER_CONCURRENCY', 32, 1, 256),
      insertMaxRows: int(env, 'INGEST_INSERT_MAX_ROWS', 20_000, 1, 1_000_000),
    },
    people: peopleSettings(env),
    alerts: {
      stateEvaluation: bool(env, 'STATE_EVALUATION', true),
      sweepIntervalMs: int(env, 'STATE_SWEEP_INTERVAL_MS', 5000, 50, 600_000),
      deliveryAttempts: int(env, 'ALERT_DELIVERY_ATTEMPTS', 5, 1, 50),
      retryBaseMs: int(env, 'ALERT_RETRY_BASE_MS', 2000, 10, 3_600_000),
      deliveryTimeoutMs: int(env, 'ALERT_DELIVERY_TIMEOUT_MS', 10_000, 100, 120_000),
      smtpUrl: url(env, 'SMTP_URL', undefined, ['smtp:', 'smtps:']),
      emailFrom: str(env, 'ALERT_EMAIL_FROM', 'alerts@localhost'),
      smsUrl: url(env, 'SMS_PROVIDER_URL', undefined, ['http:', 'https:']),
      smsToken: env.SMS_PROVIDER_TOKEN || undefined,
      pagerdutyEventsUrl: url(env, 'PAGERDUTY_EVENTS_URL', 'https://events.pagerduty.com/v2/enqueue', ['http:', 'https:'])!,
      opsgenieApiUrl: url(env, 'OPSGENIE_API_URL', undefined, ['http:', 'https:']),
      noDataAfterPeriods: int(env, 'NO_DATA_AFTER_PERIODS', 2, 1, 1000),
      noDataGraceMs: int(env, 'NO_DATA_GRACE_SECONDS', 60, 0, 86_400) * 1000,
      noDataAlerts: bool(env, 'NO_DATA_ALERTS', true),
      noDataSweepMs: int(env, 'NO_DATA_SWEEP_SECONDS', 30, 1, 3600) * 1000,
    },
  };
}

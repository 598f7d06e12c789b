/** Check types (the contract's, plus SSL and GRPC from the anchor API), their URL segment and the fixed value lists. */
export const CHECK_TYPES = [
  'AGENTIC',
  'API',
  'BROWSER',
  'HEARTBEAT',
  'ICMP',
  'MULTI_STEP',
  'TCP',
  'PLAYWRIGHT',
  'TRACEROUTE',
  'URL',
  'DNS',
  'SSL',
  'GRPC',
] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/** What every feature needs to know of a check type, one row per type: a type missing here does not compile. */
export interface CheckTypeFacts {
  /** As people say it (the console, messages). */
  label: string;
  /** Its create route under /v1/checks/{segment}. */
  segment: string;
  /**
   * The key of its type-specific object in a run's result (`apiCheckResult`, …), the one statement of it: runners report
   * under it, ingest keeps it, error groups read it. Null: its runs carry none (heartbeats).
   */
  resultKey: `${string}CheckResult` | null;
  /** Whether the anchor's document defines that object (TCP, DNS and ICMP results are this service's own). */
  anchorResult: boolean;
  /** Its report under /v1/analytics/{report} (analytics/metrics.ts has each report's metrics). */
  report: string;
  /** Who produces its runs: the runners, a browser runner, or pings from the monitored job. */
  runsOn: 'runner' | 'browser' | 'pings';
  /** What code it runs: a Playwright spec (it may import the account's snippets as modules), a suite's bundle, or none. */
  script: 'spec' | 'suite' | 'none';
  /** The figure the summary (POST /v1/analytics/checks) reports its runs by; null: availability only. */
  headline: 'responseTime' | 'latency' | 'hopCount' | null;
}

export const CHECK_TYPE_FACTS = {
  AGENTIC: {
    label: 'Agentic',
    segment: 'agentic',
    resultKey: 'agenticCheckResult',
    anchorResult: true,
    report: 'agentic-checks',
    runsOn: 'browser',
    script: 'none',
    headline: 'responseTime',
  },
  API: {
    label: 'API',
    segment: 'api',
    resultKey: 'apiCheckResult',
    anchorResult: true,
    report: 'api-checks',
    runsOn: 'runner',
    script: 'none',
    headline: 'responseTime',
  },
  BROWSER: {
    label: 'Browser',
    segment: 'browser',
    resultKey: 'browserCheckResult',
    anchorResult: true,
    report: 'browser-checks',
    runsOn: 'browser',
    script: 'spec',
    headline: 'responseTime',
  },
  HEARTBEAT: {
    label: 'Heartbeat',
    segment: 'heartbeat',
    resultKey: null,
    anchorResult: false,
    report: 'heartbeat-checks',
    runsOn: 'pings',
    script: 'none',
    headline: null,
  },
  ICMP: {
    label: 'ICMP',
    segment: 'icmp',
    resultKey: 'icmpCheckResult',
    anchorResult: false,
    report: 'icmp',
    runsOn: 'runner',
    script: 'none',
    headline: 'latency',
  },
  MULTI_STEP: {
    label: 'Multistep',
    segment: 'multistep',
    resultKey: 'multiStepCheckResult',
    anchorResult: true,
    report: 'multistep-checks',
    runsOn: 'browser',
    script: 'spec',
    headline: 'responseTime',
  },
  TCP: {
    label: 'TCP',
    segment: 'tcp',
    resultKey: 'tcpCheckResult',
    anchorResult: false,
    report: 'tcp-checks',
    runsOn: 'runner',
    script: 'none',
    headline: null,
  },
  PLAYWRIGHT: {
    label: 'Playwright',
    segment: 'playwright',
    resultKey: 'playwrightCheckResult',
    anchorResult: true,
    report: 'playwright-checks',
    runsOn: 'browser',
    script: 'suite',
    headline: 'responseTime',
  },
  TRACEROUTE: {
    label: 'Traceroute',
    segment: 'traceroute',
    resultKey: 'tracerouteCheckResult',
    anchorResult: true,
    report: 'traceroute',
    runsOn: 'runner',
    script: 'none',
    headline: 'hopCount',
  },
  URL: {
    label: 'URL',
    segment: 'url',
    resultKey: 'apiCheckResult',
    anchorResult: true,
    report: 'url-monitors',
    runsOn: 'runner',
    script: 'none',
    headline: 'responseTime',
  },
  DNS: { label: 'DNS', segment: 'dns', resultKey: 'dnsCheckResult', anchorResult: false, report: 'dns', runsOn: 'runner', script: 'none', headline: null },
  SSL: { label: 'SSL', segment: 'ssl', resultKey: 'sslCheckResult', anchorResult: true, report: 'ssl', runsOn: 'runner', script: 'none', headline: null },
  GRPC: {
    label: 'gRPC',
    segment: 'grpc',
    resultKey: 'grpcCheckResult',
    anchorResult: true,
    report: 'grpc-checks',
    runsOn: 'runner',
    script: 'none',
    headline: 'responseTime',
  },
} as const satisfies Record<CheckType, CheckTypeFacts>;

/** Every key a run's type-specific object may have, from the facts: `apiCheckResult`, …, each once. */
export type ResultDetailKey = NonNullable<(typeof CHECK_TYPE_FACTS)[CheckType]['resultKey']>;
export const RESULT_DETAIL_KEYS: readonly ResultDetailKey[] = [
  ...new Set(CHECK_TYPES.map((t) => CHECK_TYPE_FACTS[t].resultKey).filter((k): k is ResultDetailKey => k !== null)),
];

/** The types whose facts say `key` is `value`, in CHECK_TYPES order. */
export function typesWhere<K extends keyof CheckTypeFacts>(key: K, value: CheckTypeFacts[K]): CheckType[] {
  return CHECK_TYPES.filter((t) => CHECK_TYPE_FACTS[t][key] === value);
}

export type TypeSegment = (typeof CHECK_TYPE_FACTS)[CheckType]['segment'];

/** The create route segment of each type. */
export const SEGMENT_OF = Object.fromEntries(CHECK_TYPES.map((t) => [t, CHECK_TYPE_FACTS[t].segment])) as {
  [T in CheckType]: (typeof CHECK_TYPE_FACTS)[T]['segment'];
};

/** The types by their create route segment under /v1/checks. */
export const CREATABLE_TYPES = Object.fromEntries(CHECK_TYPES.map((t) => [CHECK_TYPE_FACTS[t].segment, t])) as {
  [S in TypeSegment]: Extract<CheckType, { [T in CheckType]: (typeof CHECK_TYPE_FACTS)[T]['segment'] extends S ? T : never }[CheckType]>;
};

/** The public run locations and their friendly names (the anchor's list). */
export const LOCATION_NAMES = {
  'us-east-1': 'N. Virginia',
  'us-east-2': 'Ohio',
  'us-west-1': 'N. California',
  'us-west-2': 'Oregon',
  'ca-central-1': 'Canada',
  'sa-east-1': 'São Paulo',
  'eu-west-1': 'Ireland',
  'eu-central-1': 'Frankfurt',
  'eu-west-2': 'London',
  'eu-west-3': 'Paris',
  'eu-north-1': 'Stockholm',
  'eu-south-1': 'Milan',
  'me-south-1': 'Bahrain',
  'ap-southeast-1': 'Singapore',
  'ap-northeast-1': 'Tokyo',
  'ap-east-1': 'Hong Kong',
  'ap-southeast-2': 'Sydney',
  'ap-southeast-3': 'Jakarta',
  'ap-northeast-2': 'Seoul',
  'ap-northeast-3': 'Osaka',
  'ap-south-1': 'Mumbai',
  'af-south-1': 'Cape Town',
} as const;
export const LOCATIONS = Object.keys(LOCATION_NAMES) as (keyof typeof LOCATION_NAMES)[];

export const RUNTIME_IDS = ['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const;

/** Minutes between runs. 0 (API checks only) means every `frequencyOffset` seconds. */
export const FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
export const SUB_MINUTE_OFFSETS = [10, 20, 30] as const;

/** The contract's three frequencyOffset rules; returns the problem or undefined. */
export function frequencyOffsetProblem(frequency: number, offset: number | undefined): string | undefined {
  if (frequency === 0) {
    return offset !== undefined && (SUB_MINUTE_OFFSETS as readonly number[]).includes(offset) ? undefined : 'must be 10, 20 or 30 when frequency is 0';
  }
  if (offset === undefined) return undefined;
  const max = frequency <= 60 ? Math.floor(frequency * 10) : Math.ceil(frequency / 60);
  return offset >= 1 && offset <= max ? undefined : `must be from 1 to ${max} when frequency is ${frequency}`;
}

/** The name server a DNS check asks when it names none (the anchor's default). */
export const DEFAULT_NAMESERVER = '8.8.8.8';

/** A check's period in ms: `frequency` minutes, or `frequencyOffset` seconds when frequency is 0. */
export function periodOf(frequency: number, frequencyOffset: number | undefined | null): number {
  if (frequency === 0) return Math.max(10, frequencyOffset ?? 10) * 1000;
  return frequency * 60_000;
}

/**
 * The host a probe connects to (TCP, SSL, traceroute, gRPC), from what the check names: a host name or address
 * as it is, or a URL's host (`https://shop.test/path` is `shop.test`), as the anchor takes either.
 */
export function targetHost(value: unknown): string {
  if (typeof value !== 'string') return '';
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  try {
    return new URL(value).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return value;
  }
}

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
  /** Its create route under /v1/checks/{segment}. */
  segment: string;
  /** The key of its type-specific object in the anchor's check result (null: the anchor defines none). */
  resultKey: string | null;
  /** Who produces its runs: the runners, a browser runner, or pings from the monitored job. */
  runsOn: 'runner' | 'browser' | 'pings';
}

export const CHECK_TYPE_FACTS = {
  AGENTIC: { segment: 'agentic', resultKey: 'agenticCheckResult', runsOn: 'browser' },
  API: { segment: 'api', resultKey: 'apiCheckResult', runsOn: 'runner' },
  BROWSER: { segment: 'browser', resultKey: 'browserCheckResult', runsOn: 'browser' },
  HEARTBEAT: { segment: 'heartbeat', resultKey: null, runsOn: 'pings' },
  ICMP: { segment: 'icmp', resultKey: null, runsOn: 'runner' },
  MULTI_STEP: { segment: 'multistep', resultKey: 'multiStepCheckResult', runsOn: 'browser' },
  TCP: { segment: 'tcp', resultKey: null, runsOn: 'runner' },
  PLAYWRIGHT: { segment: 'playwright', resultKey: 'playwrightCheckResult', runsOn: 'browser' },
  TRACEROUTE: { segment: 'traceroute', resultKey: 'tracerouteCheckResult', runsOn: 'runner' },
  URL: { segment: 'url', resultKey: 'apiCheckResult', runsOn: 'runner' },
  DNS: { segment: 'dns', resultKey: null, runsOn: 'runner' },
  SSL: { segment: 'ssl', resultKey: 'sslCheckResult', runsOn: 'runner' },
  GRPC: { segment: 'grpc', resultKey: 'grpcCheckResult', runsOn: 'runner' },
} as const satisfies Record<CheckType, CheckTypeFacts>;

export type TypeSegment = (typeof CHECK_TYPE_FACTS)[CheckType]['segment'];

/** The create route segment of each type. */
export const SEGMENT_OF = Object.fromEntries(CHECK_TYPES.map((t) => [t, CHECK_TYPE_FACTS[t].segment])) as { [T in CheckType]: (typeof CHECK_TYPE_FACTS)[T]['segment'] };

/** The types by their create route segment under /v1/checks. */
export const CREATABLE_TYPES = Object.fromEntries(CHECK_TYPES.map((t) => [CHECK_TYPE_FACTS[t].segment, t])) as { [S in TypeSegment]: Extract<CheckType, { [T in CheckType]: (typeof CHECK_TYPE_FACTS)[T]['segment'] extends S ? T : never }[CheckType]> };

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
    return offset !== undefined && (SUB_MINUTE_OFFSETS as readonly number[]).includes(offset)
      ? undefined
      : 'must be 10, 20 or 30 when frequency is 0';
  }
  if (offset === undefined) return undefined;
  const max = frequency <= 60 ? Math.floor(frequency * 10) : Math.ceil(frequency / 60);
  return offset >= 1 && offset <= max ? undefined : `must be from 1 to ${max} when frequency is ${frequency}`;
}

/** Check types, their URL segment and the fixed value lists the contract gives. */
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
] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/** The types this service can create, by their path segment under /v1/checks. */
export const CREATABLE_TYPES = {
  browser: 'BROWSER',
  api: 'API',
  multistep: 'MULTI_STEP',
  icmp: 'ICMP',
  url: 'URL',
  tcp: 'TCP',
  dns: 'DNS',
  heartbeat: 'HEARTBEAT',
  playwright: 'PLAYWRIGHT',
} as const satisfies Record<string, CheckType>;
export type TypeSegment = keyof typeof CREATABLE_TYPES;

export const LOCATIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-central-1',
  'eu-west-2',
  'eu-west-3',
  'eu-north-1',
  'eu-south-1',
  'me-south-1',
  'ap-southeast-1',
  'ap-northeast-1',
  'ap-east-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-south-1',
  'af-south-1',
] as const;

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

import { periodOf } from '../model/checks.js';
import { overlay } from '../model/collections.js';
import type { EnvVar } from '../model/variables.js';
import type { GroupData } from './group-schemas.js';

type CheckFields = Record<string, unknown>;

function mergeByKey<T extends { key: string }>(base: T[] | null | undefined, own: T[] | null | undefined): T[] {
  const merged = new Map<string, T>();
  for (const item of base ?? []) merged.set(item.key, item);
  for (const item of own ?? []) merged.set(item.key, item);
  return [...merged.values()];
}

/**
 * A grouped check as it runs: the group's locations, alerting, retries, runtime and variables apply.
 * Tags are the union; variables merge by key with the check's own winning; API requests get the group's
 * base URL (for relative URLs), headers, query parameters, assertions and basic auth.
 */
export function applyGroupSettings(check: CheckFields, group: GroupData): CheckFields {
  // A copy made property by property: fields are added to it below (overlay in model/collections.ts says why).
  const out: CheckFields = overlay(check, {});
  if (group.locations.length || group.privateLocations?.length) {
    out.locations = group.locations;
    out.privateLocations = group.privateLocations ?? [];
  }
  out.tags = [...new Set([...((check.tags as string[]) ?? []), ...group.tags])];
  if (group.useGlobalAlertSettings !== null && group.useGlobalAlertSettings !== undefined) out.useGlobalAlertSettings = group.useGlobalAlertSettings;
  if (group.runParallel !== null && group.runParallel !== undefined) out.runParallel = group.runParallel;
  if (group.alertSettings !== undefined) out.alertSettings = group.alertSettings;
  if (group.retryStrategy !== undefined) out.retryStrategy = group.retryStrategy;
  out.doubleCheck = group.doubleCheck;
  if (group.runtimeId) out.runtimeId = group.runtimeId;
  if (group.frequency) out.frequency = group.frequency;
  if (!group.activated) out.activated = false;
  if (group.muted) out.muted = true;
  out.environmentVariables = mergeByKey<EnvVar>(group.environmentVariables, check.environmentVariables as EnvVar[] | null);
  for (const field of ['setupSnippetId', 'tearDownSnippetId', 'localSetupScript', 'localTearDownScript'] as const) {
    if (group[field] != null && check[field] == null) out[field] = group[field];
  }
  const defaults = group.apiCheckDefaults;
  const request = check.request as Record<string, unknown> | undefined;
  if (check.checkType === 'API' && defaults && request) {
    const url = request.url as string;
    out.request = overlay(request, {
      url: defaults.url && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? defaults.url.replace(/\/+$/, '') + url : url,
      headers: mergeByKey(defaults.headers, request.headers as { key: string }[]),
      queryParameters: mergeByKey(defaults.queryParameters, request.queryParameters as { key: string }[]),
      assertions: [...((request.assertions as unknown[]) ?? []), ...(defaults.assertions ?? [])],
      basicAuth: request.basicAuth ?? defaults.basicAuth ?? null,
    });
  }
  return out;
}

/** What a group's settings say of when its checks run (any of it may be unset). */
export interface GroupSchedule {
  frequency?: number | null;
  runParallel?: boolean | null;
  locations?: readonly string[] | null;
  privateLocations?: readonly string[] | null;
}

/** When and where a check runs: its period, whether every location runs each slot, and how many locations. */
export interface Schedule {
  periodMs: number;
  runParallel: boolean;
  locations: number;
  /** The locations' names, public then private, each once. */
  names: string[];
}

/**
 * A check's effective schedule, its own settings with its group's laid over them as applyGroupSettings does (the
 * group's frequency when it sets one, its runParallel when set, its locations when it names any). The one rule
 * the scheduler (slots), the reports (runs per location and minute) and every other reader use.
 */
export function effectiveSchedule(
  check: {
    frequency: number;
    data: { frequencyOffset?: number; runParallel?: boolean; locations?: readonly string[] | null; privateLocations?: readonly string[] | null };
  },
  group?: GroupSchedule | null,
): Schedule {
  const frequency = group?.frequency ? group.frequency : check.frequency;
  const groupLocations = (group?.locations?.length ?? 0) + (group?.privateLocations?.length ?? 0);
  const locations = groupLocations || (check.data.locations?.length ?? 0) + (check.data.privateLocations?.length ?? 0);
  const from = groupLocations ? group! : check.data;
  return {
    periodMs: periodOf(frequency, check.data.frequencyOffset),
    runParallel: group?.runParallel ?? check.data.runParallel ?? false,
    locations,
    names: [...new Set([...(from.locations ?? []), ...(from.privateLocations ?? [])])],
  };
}

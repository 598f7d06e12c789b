import { CREATABLE_TYPES, LOCATION_NAMES, LOCATIONS } from '../model/checks.js';
import type { Config } from '../platform/config.js';
import type { Account } from './repository.js';

/** A self-hosted service has one plan; what varies per account is its configured limits. */
export const PLAN = { plan: 'self-hosted', planDisplayName: 'Self-hosted' } as const;

export interface Entitlement {
  key: string;
  name: string;
  description: string;
  type: 'flag' | 'metered';
  enabled: boolean;
  quantity?: number;
}

/**
 * The account's entitlements in the anchor's shape, derived from what this service enforces for it: the
 * browser-check cap (402 past it), the API rate limit, and the check types it can create.
 */
export function entitlementsOf(account: Account, config: Pick<Config, 'rateLimit'>) {
  const browserLimit = account.browserCheckLimit;
  const points = account.rateLimitPoints ?? config.rateLimit.points;
  const windowSeconds = account.rateLimitWindowSeconds ?? config.rateLimit.windowSeconds;
  const entitlements: Entitlement[] = [
    {
      key: 'BROWSER_CHECKS',
      name: 'Browser checks',
      description: browserLimit === null ? 'Browser checks, without a cap' : `At most ${browserLimit} browser checks`,
      type: browserLimit === null ? 'flag' : 'metered',
      enabled: browserLimit !== 0,
      ...(browserLimit === null ? {} : { quantity: browserLimit }),
    },
    {
      key: 'API_RATE_LIMIT',
      name: 'API requests',
      description: `Requests per ${windowSeconds} seconds`,
      type: 'metered',
      enabled: true,
      quantity: points,
    },
    ...Object.values(CREATABLE_TYPES)
      .filter((t) => t !== 'BROWSER')
      .map((type) => ({
        key: `${type}_CHECKS`,
        name: `${type.replace('_', '-').toLowerCase()} checks`,
        description: `Create and run ${type} checks`,
        type: 'flag' as const,
        enabled: true,
      })),
    { key: 'PRIVATE_LOCATIONS', name: 'Private locations', description: 'Run checks from your own locations', type: 'flag', enabled: true },
  ];
  return {
    ...PLAN,
    addons: {},
    locations: { all: LOCATIONS.map((id) => ({ id, name: LOCATION_NAMES[id], available: true })) },
    entitlements,
  };
}

/** The anchor's account shape. */
export function anchorAccount(account: Account) {
  return {
    id: account.id,
    name: account.name,
    runtimeId: account.runtimeId,
    ...PLAN,
    addons: {},
    settings: { badgesEnabled: account.badgesEnabled },
    alertSettings: account.alertSettings,
    features: [] as string[],
  };
}

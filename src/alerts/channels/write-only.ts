import type { Rules } from '../../http/rules.js';

/**
 * A channel config's one secret key (PagerDuty's integration key, Opsgenie's API key): read back empty, kept when
 * an update sends it back empty, and required once that is done (a channel without it could never deliver).
 */
export function writeOnlyKey<C extends Record<string, unknown>>(field: keyof C & string, what: string) {
  return {
    check: (config: C, rules: Rules, at: string) => rules.check(config[field] !== '', `${at}.${field}`, 'required', what),
    mask: (config: C): C => ({ ...config, [field]: '' }),
    keepStored: (incoming: C, stored: C | undefined): C => (incoming[field] === '' && stored ? { ...incoming, [field]: stored[field] } : incoming),
    secrets: (config: C, f: (value: string) => string): C =>
      typeof config[field] === 'string' && config[field] ? { ...config, [field]: f(config[field] as string) } : config,
  };
}

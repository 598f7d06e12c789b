export interface EnvVar {
  key: string;
  /** null as the anchor allows it: no value. */
  value: string | null;
  locked: boolean;
  secret: boolean;
}

/** Secret values never leave the service: they read back as empty strings. */
export function maskSecrets(vars: EnvVar[]): EnvVar[] {
  return vars.map((v) => (v.secret ? { ...v, value: '' } : v));
}

/**
 * A client that read a check and sends it back carries empty strings (or null) for its secrets: keep the
 * stored value for a secret sent without one, so a read-modify-write round trip does not wipe it.
 */
export function keepStoredSecrets(incoming: EnvVar[] | null | undefined, stored: EnvVar[] | null | undefined): EnvVar[] | null | undefined {
  if (!incoming || !stored) return incoming;
  const previous = new Map(stored.filter((v) => v.secret).map((v) => [v.key, v.value]));
  return incoming.map((v) => (v.secret && (v.value === '' || v.value === null) && previous.has(v.key) ? { ...v, value: previous.get(v.key)! } : v));
}

interface Entry<T> {
  value: Promise<T>;
  expires: number;
}

/**
 * Values kept for a time per key, built once however many ask at the same moment (the first caller builds,
 * the others wait for the same promise). A failed build is not kept. A dashboard's data document lives here
 * for its refreshRate, so a page watched by many viewers costs one build per refresh per API process.
 */
export class TtlCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly maxEntries = 1000) {}

  get(key: string, ttlMs: number, build: () => Promise<T>, now = Date.now()): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = build();
    const entry = { value, expires: now + ttlMs };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    this.evict(now);
    return value;
  }

  private evict(now: number) {
    if (this.entries.size <= this.maxEntries) return;
    for (const [key, e] of this.entries) if (e.expires <= now) this.entries.delete(key);
    // Still too many live entries: drop the oldest inserted.
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(key);
    }
  }
}

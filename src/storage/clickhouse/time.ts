/** `2026-01-02 03:04:05.678`: the DateTime64(3) text form, read the same by both backends. */
export function toClickHouseTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** A DateTime64 as either backend returns it (ISO with or without a zone, or the text form) → ISO 8601 UTC. */
export function fromClickHouseTime(value: unknown): string {
  const text = String(value);
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`).toISOString();
}

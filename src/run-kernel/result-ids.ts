import { createHash } from 'node:crypto';

/**
 * The id a scheduled run's result takes: one per check, slot and location, whoever makes the run (a runner of
 * the service, an agent on its lease, an agent cut off from the service running from memory). Ingest keeps one
 * result per id, so a slot is stored exactly once however many times it was run or its result was posted.
 */
export function scheduledResultId(checkId: string, slot: number, location: string): string {
  return nameUuid(`${checkId}|${slot}|${location}`);
}

/** A uuid made from a name: the same name, the same id. */
export function nameUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50; // a name-based uuid (version 5 layout), variant 10
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

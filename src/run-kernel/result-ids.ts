import { createHash } from 'node:crypto';
import { uuidText } from '../model/uuid.js';

/**
 * The id a scheduled run's result takes: one per check, slot and location, whoever makes the run (a runner of
 * the service, an agent on its lease, an agent cut off from the service running from memory). Ingest keeps one
 * result per id, so a slot is stored exactly once however many times it was run or its result was posted.
 */
export function scheduledResultId(checkId: string, slot: number, location: string): string {
  return nameUuid(`${checkId}|${slot}|${location}`);
}

/** A uuid made from a name: the same name, the same id (the first 16 bytes of its SHA-256, version 5 layout, variant 10). */
export function nameUuid(name: string): string {
  return uuidText(createHash('sha256').update(name).digest(), 0, 5);
}

import { randomFillSync } from 'node:crypto';

const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where a uuid's text is written before it becomes a string (one is enough: nothing else runs in between). */
const TEXT = Buffer.allocUnsafeSlow(36);

/**
 * The 16 bytes of `bytes` from `offset` as a uuid's text (lower-case hex, 8-4-4-4-12), with `version` in its version
 * nibble and the RFC 9562 variant (10). The text is made in a buffer and becomes one string: built piece by piece (as
 * Node's `randomUUID` and a hex string cut in five do) a uuid left about ten times its size in short-lived strings,
 * the largest share of what ingest allocated for a result whose id the service mints (bench/README.md, "Ingest").
 */
export function uuidText(bytes: Uint8Array, offset: number, version: number): string {
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) TEXT[at++] = 0x2d;
    let byte = bytes[offset + i]!;
    if (i === 6) byte = (byte & 0x0f) | (version << 4);
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    TEXT[at++] = HEX[byte >> 4]!;
    TEXT[at++] = HEX[byte & 0x0f]!;
  }
  return TEXT.toString('latin1', 0, 36);
}

/** Random bytes drawn from the system's generator a few kilobytes at a time, as `randomUUID`'s own cache does. */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let used = POOL_BYTES;

/** A random (version 4) uuid from the system's cryptographic generator: what `crypto.randomUUID()` answers, with less garbage. */
export function randomUuid(): string {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const text = uuidText(pool, used, 4);
  used += 16;
  return text;
}

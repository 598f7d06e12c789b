import { isUtf8 } from 'node:buffer';

/**
 * Checks that bytes arriving in chunks are valid UTF-8 (no 0xff, overlong forms, encoded surrogates, truncated
 * sequences), without decoding them: a fatal TextDecoder made a string of every chunk only to throw it away, a
 * request body's size in garbage (bench/README.md, "Ingest: where the main thread's time goes"). A chunk may end
 * inside a character: those last bytes are checked with the next chunk, and a body that ends inside one is invalid.
 */
export class Utf8Check {
  private valid = true;
  private carry: Buffer | undefined;

  feed(chunk: Buffer): void {
    if (!this.valid) return;
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = incompleteTail(bytes);
    this.carry = cut ? Buffer.from(bytes.subarray(bytes.length - cut)) : undefined;
    if (!isUtf8(cut ? bytes.subarray(0, bytes.length - cut) : bytes)) this.valid = false;
  }

  /** Whether every byte fed was valid UTF-8 and none is left waiting for the rest of its character. */
  end(): boolean {
    return this.valid && this.carry === undefined;
  }
}

/** How many bytes at the end of `bytes` begin a character the bytes do not finish (0–3). */
function incompleteTail(bytes: Buffer): number {
  const n = bytes.length;
  // Back over at most three continuation bytes (10xxxxxx) to the byte that leads them.
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 && b <= 0xf7 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    // A complete character, an ASCII byte, or a byte no character begins with (isUtf8 refuses it).
    return length > back && b >= 0xc0 && b <= 0xf7 ? back : 0;
  }
  return 0;
}

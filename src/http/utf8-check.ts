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

const BACKSLASH = 0x5c;
const ESCAPE_U = Buffer.from('\\u', 'latin1');
const D_UPPER = 0x44;
const D_LOWER = 0x64;
const ZERO = 0x30;

/**
 * Follows a JSON text's bytes for a `\u` escape that could make U+0000 (`\u0000`) or half of a surrogate pair
 * (`\uD…`): the only ways such a string reaches the parsed body, since JSON forbids a raw U+0000 in text and valid
 * UTF-8 encodes no surrogate. A body without one needs no walk of its strings for them (validation.ts, findBadText):
 * for 1,000 results the walk was about 4 % of ingest's main thread, the bytes' native search a small part of it. An
 * escaped backslash before `u` (`\\u0000`, the text "\u0000") is counted too: the walk then decides. A chunk may cut
 * an escape: its last five bytes, when they hold a backslash, are looked at again with the next chunk's first.
 */
export class RiskyEscapes {
  private risky = false;
  private tail: Buffer | undefined;

  feed(chunk: Buffer): void {
    if (this.risky) return;
    let bytes = chunk;
    if (this.tail) {
      const joint = Buffer.concat([this.tail, chunk.subarray(0, 5)]);
      this.tail = undefined;
      if (riskyIn(joint)) {
        this.risky = true;
        return;
      }
      // A chunk shorter than an escape carries the tail on with it.
      if (chunk.length < 5) bytes = joint;
    }
    if (riskyIn(bytes)) {
      this.risky = true;
      return;
    }
    const last = bytes.subarray(Math.max(0, bytes.length - 5));
    if (last.includes(BACKSLASH)) this.tail = Buffer.from(last);
  }

  /**
   * Whether the text held such an escape. One the text ends inside is not counted: such a text is no JSON, and its
   * parse fails.
   */
  found(): boolean {
    return this.risky;
  }
}

/** Whether `bytes` holds a whole `\u0000`, `\uD…` or `\ud…` escape. */
function riskyIn(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(ESCAPE_U); at >= 0 && at + 5 < bytes.length; at = bytes.indexOf(ESCAPE_U, at + 1)) {
    const first = bytes[at + 2];
    if (first === D_UPPER || first === D_LOWER) return true;
    if (first === ZERO && bytes[at + 3] === ZERO && bytes[at + 4] === ZERO && bytes[at + 5] === ZERO) return true;
  }
  return false;
}

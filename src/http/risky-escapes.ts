const ESCAPE_U = Buffer.from('\\u', 'latin1');
const D_UPPER = 0x44;
const D_LOWER = 0x64;
const ZERO = 0x30;

/**
 * Whether a JSON text's bytes hold a `\u` escape that could make U+0000 (`\u0000`) or half of a surrogate pair
 * (`\uD…`): the only ways such a string reaches the parsed body, since JSON forbids a raw U+0000 in text and valid
 * UTF-8 encodes no surrogate. A body without one needs no walk of its strings for them (validation.ts, findBadText):
 * for 1,000 results the walk was about 4 % of ingest's main thread, the bytes' native search a small part of it. An
 * escaped backslash before `u` (`\\u0000`, the text "\u0000") is counted too: the walk then decides. An escape the
 * text ends inside is not counted: such a text is no JSON, and its parse fails.
 */
export function hasRiskyEscape(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(ESCAPE_U); at >= 0 && at + 5 < bytes.length; at = bytes.indexOf(ESCAPE_U, at + 1)) {
    const first = bytes[at + 2];
    if (first === D_UPPER || first === D_LOWER) return true;
    if (first === ZERO && bytes[at + 3] === ZERO && bytes[at + 4] === ZERO && bytes[at + 5] === ZERO) return true;
  }
  return false;
}

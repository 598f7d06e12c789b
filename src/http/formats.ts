/**
 * String formats of this API beyond ajv-formats': the URLs checks and channels are given, checked when they are
 * created, not found broken at their first run. The outbound policy still judges each name when it connects.
 */

/**
 * A placeholder the HTTP runner fills in at run time: `{{NAME}}` (URI-encoded), `{{{NAME}}}` (as it is, for a whole
 * base URL) and helpers like `{{moment "YYYY-MM-DD"}}` stand for any text.
 */
const PLACEHOLDER = /\{\{\{?[^{}]{1,200}\}?\}\}/g;
/** Any whitespace or control character left once placeholders are filled: never part of a URL as given. */
const BLANK = /[\s\u0000-\u001f\u007f]/;

function httpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A host name or an IP address (an IPv6 one in brackets or bare), optionally with a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f]*:[0-9A-Fa-f:.]+|[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?\.?)(?::\d{1,5})?$/;

export const URL_FORMATS: Record<string, (value: string) => boolean> = {
  /**
   * An API check's URL: http(s) with a host, a path its group's apiCheckDefaults.url prefixes (`/health`), or one
   * led by a placeholder (`{{{BASE_URL}}}/health`). A placeholder stands for a word, or for a number where a port goes.
   */
  'http-url-template': (value) => {
    if (/^\{\{/.test(value)) return !BLANK.test(value.replace(PLACEHOLDER, 'x'));
    const [word, number] = [value.replace(PLACEHOLDER, 'placeholder'), value.replace(PLACEHOLDER, '1')];
    if (BLANK.test(word)) return false;
    if (word.startsWith('/') && !word.startsWith('//')) return true;
    return httpUrl(word) || httpUrl(number);
  },
  /**
   * Where a probe connects (TCP, SSL, traceroute, gRPC): a host name or address, or a URL whose host is used. These
   * runners fill in no placeholders, so none is taken.
   */
  'host-or-url': (value) => {
    if (BLANK.test(value) || value.includes('{{')) return false;
    if (HOST.test(value)) return true;
    try {
      return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) && new URL(value).hostname !== '';
    } catch {
      return false;
    }
  },
};

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Where `2026-01-02T03:04:05.678Z` has digits. */
const DIGIT_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
const two = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;

/**
 * Whether `value` is a date-time in the form `toISOString` writes (`2026-01-02T03:04:05.678Z`: what runners and
 * clients send nearly always) with a real day and time; anything else, a leap second included, answers false and is
 * left to the full RFC 3339 check. True only where ajv-formats' `date-time` is true too (formats.unit.test.ts), at a
 * tenth of its cost: ingest checks two a result.
 */
export function isCanonicalDateTime(value: string): boolean {
  if (value.length !== 24 || value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':') return false;
  if (value[19] !== '.' || value[23] !== 'Z') return false;
  for (const i of DIGIT_AT) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  const year = two(value, 0) * 100 + two(value, 2);
  const month = two(value, 5);
  const day = two(value, 8);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month]!)) return false;
  return two(value, 11) <= 23 && two(value, 14) <= 59 && two(value, 17) <= 59;
}

/**
 * What looks like a credential stored inline (docs/resources.md, "Secret scans"): pure rules over a resource as the
 * API shows it. A value that only refers to variables (`{{TOKEN}}`, `{{{TOKEN}}}`, `${TOKEN}`, `process.env.TOKEN`)
 * is no inline credential; locked and secret values are never looked at (the API reads them back empty anyway).
 */

/** One flagged value: where it is on the resource (its API path), the key of its entry, and the value itself. */
export interface Flagged {
  fieldPath: string;
  fieldKey: string | null;
  value: string;
}

/** Words that make a header, parameter, variable or property name a credential's. */
const CREDENTIAL_WORDS = new Set([
  'authorization',
  'auth',
  'token',
  'apikey',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'credential',
  'credentials',
  'cookie',
  'signature',
  'sig',
  'bearer',
  'privatekey',
  'accesskey',
  'clientsecret',
  'sessionid',
  'jwt',
  'otp',
]);
/** Two words that together make one (`api key`, `access key`, `private key`, `client secret`, `session id`). */
const CREDENTIAL_PAIRS = [
  ['api', 'key'],
  ['access', 'key'],
  ['private', 'key'],
  ['client', 'secret'],
  ['session', 'id'],
  ['secret', 'key'],
];

/** The words of a name: split at separators and camelCase, lowercased (`X-Api-Key` → x, api, key; `accessToken` → access, token). */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Whether a name is a credential's (a header `Authorization`, a parameter `api_key`, a variable `DB_PASSWORD`). */
export function credentialName(name: string): boolean {
  const words = wordsOf(name);
  if (words.some((w) => CREDENTIAL_WORDS.has(w))) return true;
  if (CREDENTIAL_WORDS.has(words.join(''))) return true;
  return CREDENTIAL_PAIRS.some(([a, b]) => words.some((w, i) => w === a && words[i + 1] === b));
}

const REFERENCES =
  /\{\{\{?\s*[$A-Za-z_][\w.]*(?:\s+[^}]*)?\s*\}?\}\}|\$\{\s*[A-Za-z_]\w*\s*\}|process\.env\.[A-Za-z_]\w*|process\.env\[\s*['"][A-Za-z_]\w*['"]\s*\]/g;
const SCHEMES = /^(?:bearer|basic|token|digest|apikey|api-key)(?:\s+|$)/i;

/** What is left of a value once its variable references and an auth scheme are taken out: the inline part. */
export function inlinePart(value: string): string {
  return value.replace(REFERENCES, '').trim().replace(SCHEMES, '').trim();
}

/** A value stored inline: at least 4 characters that are not references, not a placeholder. */
export function inline(value: string): boolean {
  const rest = inlinePart(value);
  return rest.length >= 4 && !/^(?:x+|\*+|\.+|-+|changeme|placeholder|redacted|null|undefined|true|false)$/i.test(rest);
}

/** Credentials recognisable by their shape wherever they are. */
const TOKEN_SHAPES: RegExp[] = [
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, // GitHub
  /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,255}\b/g, // Slack
  /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}\b/g, // Stripe
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g, // GitLab
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/g, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/g,
  /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/g,
  /\bBasic\s+[A-Za-z0-9+/]{12,}={0,2}/g,
];

/** Every credential-shaped substring of a text. */
export function tokensIn(text: string): string[] {
  const found: string[] = [];
  for (const shape of TOKEN_SHAPES) for (const m of text.matchAll(shape)) found.push(m[0]);
  return found;
}

/** `password = 'hunter22'`, `"apiKey": "abc…"`, `token: \`…\`` in a script or a body: the literal assigned to a credential's name. */
const ASSIGNMENTS = /["']?([A-Za-z_][\w-]{1,63})["']?\s*[:=]\s*(["'`])([^"'`\n]{4,512})\2/g;

function assignmentsIn(text: string): { key: string; value: string }[] {
  const found: { key: string; value: string }[] = [];
  for (const m of text.matchAll(ASSIGNMENTS)) if (credentialName(m[1]!) && inline(m[3]!)) found.push({ key: m[1]!, value: m[3]! });
  return found;
}

/** Credentials a URL holds: a password in its user info, or a credential-named query parameter with an inline value. */
export function urlCredentials(url: string): { key: string | null; value: string }[] {
  const found: { key: string | null; value: string }[] = [];
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@\s]*)@/i.exec(url);
  if (userinfo) {
    const password = userinfo[1]!.split(':').slice(1).join(':');
    if (password && inline(decodeSafe(password))) found.push({ key: null, value: decodeSafe(password) });
  }
  const query = url.split('#')[0]!.split('?').slice(1).join('?');
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 1) continue;
    const key = decodeSafe(pair.slice(0, eq));
    const value = decodeSafe(pair.slice(eq + 1));
    if (credentialName(key) && inline(value)) found.push({ key, value });
  }
  return found;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The credential-named keys of a JSON or form body with inline values (a JSON body is walked; a form body read as pairs). */
function bodyCredentials(body: string): { key: string; value: string }[] {
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const found: { key: string; value: string }[] = [];
      const walk = (v: unknown, depth: number) => {
        if (depth > 20 || v === null || typeof v !== 'object') return;
        for (const [k, inner] of Object.entries(v as Record<string, unknown>)) {
          if (typeof inner === 'string' && credentialName(k) && inline(inner)) found.push({ key: k, value: inner });
          else walk(inner, depth + 1);
        }
      };
      walk(JSON.parse(trimmed), 0);
      return found;
    } catch {
      return assignmentsIn(body);
    }
  }
  if (/^[\w.%-]+=[^&\s]*(&[\w.%-]+=[^&\s]*)*$/.test(trimmed)) return urlCredentials(`x://h/?${trimmed}`).map((c) => ({ key: c.key ?? '', value: c.value }));
  return assignmentsIn(body);
}

/** Fields whose text is code or a body: looked into for shapes and assignments. */
const TEXT_FIELDS = new Set([
  'body',
  'data',
  'message',
  'script',
  'localSetupScript',
  'localTearDownScript',
  'setupScript',
  'tearDownScript',
  'template',
  'content',
  'payload',
]);
/** Arrays of `{key, value}` whose names matter: headers, query parameters, gRPC metadata, variables. */
const KEY_VALUE_LISTS = new Set(['headers', 'queryParameters', 'metadata', 'environmentVariables']);
/** Parts of a resource that are the service's own, not the account's configuration. */
const SKIPPED = new Set(['heartbeat', 'id', 'created_at', 'updated_at', 'createdAt', 'updatedAt', 'alertChannelSubscriptions', 'subscriptions']);

/**
 * Every flagged value of a resource as the API shows it. Locked and secret entries (`locked`, `secret`: true) are
 * skipped; everything else readable is looked at: key-value lists by their keys and shapes, `basicAuth.password`,
 * URLs by their user info and query, bodies and scripts by their shapes and assignments, any other text by its shape.
 */
export function scanResource(resource: unknown): Flagged[] {
  const out: Flagged[] = [];
  const seen = new Set<string>();
  const flag = (fieldPath: string, fieldKey: string | null, value: string) => {
    const id = `${fieldPath}\u0000${fieldKey}\u0000${value}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ fieldPath, fieldKey, value });
  };
  const walk = (value: unknown, path: string, name: string, depth: number) => {
    if (depth > 12 || value === null || value === undefined) return;
    if (typeof value === 'string') {
      if (!value) return;
      if (/url$/i.test(name)) for (const c of urlCredentials(value)) flag(path, c.key, c.value);
      if (name === 'password' && path.endsWith('basicAuth.password')) {
        if (inline(value)) flag(path, null, value);
        return;
      }
      if (TEXT_FIELDS.has(name)) for (const c of bodyCredentials(value)) flag(path, c.key, c.value);
      for (const token of tokensIn(value)) flag(path, null, token);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        const at = `${path}[${i}]`;
        if (KEY_VALUE_LISTS.has(name) && item && typeof item === 'object' && typeof (item as { key?: unknown }).key === 'string') {
          const entry = item as { key: string; value?: unknown; locked?: boolean; secret?: boolean };
          if (entry.locked || entry.secret || typeof entry.value !== 'string' || !entry.value) return;
          if (credentialName(entry.key) && inline(entry.value)) flag(`${at}.value`, entry.key, inlinePart(entry.value) || entry.value);
          else for (const token of tokensIn(entry.value)) flag(`${at}.value`, entry.key, token);
          return;
        }
        walk(item, at, name, depth + 1);
      });
      return;
    }
    if (typeof value === 'object') {
      for (const [k, inner] of Object.entries(value as Record<string, unknown>)) {
        if (depth === 0 && SKIPPED.has(k)) continue;
        walk(inner, path ? `${path}.${k}` : k, k, depth + 1);
      }
    }
  };
  walk(resource, '', '', 0);
  return out;
}

/** A redacted preview of a credential: a few leading and trailing characters, never the value. */
export function preview(value: string): string {
  const v = value.trim();
  if (v.length >= 12) return `${v.slice(0, 4)}…${v.slice(-2)}`;
  if (v.length >= 6) return `${v.slice(0, 2)}…`;
  return '…';
}

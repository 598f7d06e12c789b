/**
 * The console's only way to the service: the public API, with the member's session cookie. Writes carry the
 * session's CSRF token; the account the member picked goes in x-checkly-account.
 */
export interface FieldError {
  field: string;
  rule?: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly attributes: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The API's per-field validation errors (a 400's attributes.errors), by field without its `body.` prefix. */
  get fields(): Record<string, string> {
    const errors = (this.attributes.errors ?? []) as FieldError[];
    return Object.fromEntries(errors.map((e) => [e.field.replace(/^body\./, ''), e.message]));
  }
}

let csrfToken: string | null = null;
let accountId: string | null = null;
const unauthorizedListeners = new Set<() => void>();

export function setSession(csrf: string | null, account: string | null): void {
  csrfToken = csrf;
  accountId = account;
}
export const currentAccountId = () => accountId;
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export interface Answer<T> {
  data: T;
  headers: Headers;
  status: number;
}

export async function request<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  opts: { signal?: AbortSignal; account?: string | null } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const account = opts.account === undefined ? accountId : opts.account;
  if (account) headers['x-checkly-account'] = account;
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal: opts.signal,
  });
  const text = await res.text();
  let data: unknown;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const e = (data ?? {}) as { message?: string; attributes?: Record<string, unknown> };
    if (res.status === 401 && !path.startsWith('/v1/auth/sign-in')) for (const fn of unauthorizedListeners) fn();
    throw new ApiError(res.status, typeof e.message === 'string' ? e.message : `${res.status} ${res.statusText}`, e.attributes ?? {});
  }
  return { data: data as T, headers: res.headers, status: res.status };
}

export const get = async <T>(path: string, signal?: AbortSignal) => (await request<T>('GET', path, undefined, { signal })).data;
export const post = async <T>(path: string, body?: unknown) => (await request<T>('POST', path, body)).data;
export const put = async <T>(path: string, body?: unknown) => (await request<T>('PUT', path, body)).data;
export const patch = async <T>(path: string, body?: unknown) => (await request<T>('PATCH', path, body)).data;
export const del = async (path: string) => {
  await request('DELETE', path);
};

/** Every page of a paged list (`limit` + `page`, X-Total-Count), fetched a few at a time. */
export async function allPages<T>(path: string, signal?: AbortSignal, limit = 100): Promise<T[]> {
  const sep = path.includes('?') ? '&' : '?';
  const first = await request<T[]>('GET', `${path}${sep}limit=${limit}&page=1`, undefined, { signal });
  const total = Number(first.headers.get('x-total-count') ?? first.data.length);
  const pages = Math.ceil(total / limit);
  const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, (_, i) => get<T[]>(`${path}${sep}limit=${limit}&page=${i + 2}`, signal)));
  return [first.data, ...rest].flat();
}

/** Runs `fn` over `items` in slices of `size` (the summary and timeline take 100 checks a call), at once. */
export async function inSlices<I, T>(items: I[], max: number, fn: (slice: I[]) => Promise<T[]>): Promise<T[]> {
  // Even slices of at most `max`: 1,001 items are two calls of 501 and 500, not one of 1,000 and one of 1.
  const size = Math.ceil(items.length / Math.max(1, Math.ceil(items.length / max)));
  const slices: I[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return (await Promise.all(slices.map(fn))).flat();
}

/** A file the API serves (a screenshot, a trace), fetched with the session for the account in use. */
export async function fetchBlob(path: string): Promise<Blob> {
  const res = await fetch(path, { headers: accountId ? { 'x-checkly-account': accountId } : {}, credentials: 'same-origin' });
  if (!res.ok) throw new ApiError(res.status, `${res.status} ${res.statusText}`);
  return res.blob();
}

import { AsyncLocalStorage } from 'node:async_hooks';
import postgres from 'postgres';

export type Sql = postgres.Sql;

/** A dependency that is down or refuses us; the message says which one and how to start it. */
/** Bind parameters one statement may carry (Postgres' protocol counts them in 16 bits); a margin kept. */
const MAX_PARAMETERS = 60_000;

/**
 * The rows of a multi-row insert (`${tx(rows)}`), in slices small enough for one statement each: every column of
 * every row is a bind parameter, so the state of 5,000 checks (16 columns) in one statement is refused.
 */
export function insertSlices<T extends object>(rows: readonly T[]): T[][] {
  if (!rows.length) return [];
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, Object.keys(rows[0]).length)));
  const slices: T[][] = [];
  for (let i = 0; i < rows.length; i += size) slices.push(rows.slice(i, i + size));
  return slices;
}

export class UnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

function describe(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

function maintenanceUrl(url: string): string {
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}

function unreachable(url: string, err: unknown): UnreachableError {
  const code = (err as { code?: string }).code ?? (err as Error).message;
  // SQLSTATE class 28 (and 3D000, no such database): the server answered and refused these credentials.
  if (/^(28|3D)/.test(code)) {
    const user = decodeURIComponent(new URL(url).username) || 'the default user';
    return new UnreachableError(
      `Postgres at ${describe(url)} (DATABASE_URL) refused ${user}: ${(err as Error).message}. Fix the user, password or database in DATABASE_URL.`,
    );
  }
  return new UnreachableError(
    `Cannot connect to Postgres at ${describe(url)} (DATABASE_URL): ${code}. ` +
      'Start it (for example: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) ' +
      'or point DATABASE_URL at a running server.',
  );
}

/**
 * Runs `fn` in a transaction. The callback gets the pool's own `Sql` type (postgres.js types a transaction
 * handle separately, though it runs the same queries), so repository functions take either.
 */
export function transaction<T>(sql: Sql, fn: (tx: Sql) => Promise<T>): Promise<T> {
  // Inside another transaction (a project deploy runs route handlers in one): a savepoint of it.
  const outer = sql as unknown as { savepoint?: (f: (tx: Sql) => Promise<T>) => Promise<T>; begin?: unknown };
  if (typeof outer.begin !== 'function' && typeof outer.savepoint === 'function') return outer.savepoint((tx) => fn(tx as unknown as Sql));
  return sql.begin((tx) => fn(tx as unknown as Sql)) as Promise<T>;
}

const ambient = new AsyncLocalStorage<Sql>();

/**
 * A request waited longer than PG_ACQUIRE_TIMEOUT_MS for a pooled connection: it fails (503) instead of hanging,
 * and what it asked for never runs (a query still queued is taken out of the queue; a transaction that gets its
 * connection later rolls back before its first statement).
 */
export class PoolBusyError extends Error {
  constructor(ms: number) {
    super(`no Postgres connection was free within ${ms} ms`);
    this.name = 'PoolBusyError';
  }
}

/** Postgres is busy: our own acquire timeout, or a statement cancelled (57014) by it. */
export function isPostgresBusy(err: unknown): boolean {
  return err instanceof PoolBusyError || (err as { code?: string } | null)?.code === '57014';
}

interface PendingQuery {
  state?: unknown;
  cancelled?: unknown;
  cancel(): unknown;
  handler: ((query: PendingQuery) => unknown) & { debug?: unknown };
}

/**
 * Watches a query for a connection: postgres.js hands a query to its pool's handler when it is awaited; one the
 * handler could not give a connection (no `state`) waits in the pool's queue. Only those get a timer, which takes
 * the query out of the queue after `ms` if it is still there (it then rejects with 57014). A fragment is never
 * awaited, so never handed over and never watched.
 */
function watchAcquire(query: PendingQuery, ms: number): void {
  const handler = query.handler;
  if (typeof handler !== 'function' || typeof query.cancel !== 'function') return;
  query.handler = Object.assign(
    (q: PendingQuery) => {
      const handed = handler(q);
      if (!q.state && !q.cancelled) {
        setTimeout(() => {
          if (!q.state && !q.cancelled) void q.cancel();
        }, ms).unref();
      }
      return handed;
    },
    { debug: handler.debug },
  );
}

/** `pool.begin` that gives up after `ms` without a connection: the transaction, if it starts later, does nothing. */
function beginWithin(pool: Sql, ms: number) {
  return (...args: unknown[]) => {
    const fn = args.at(-1) as (tx: Sql) => Promise<unknown>;
    const options = args.length > 1 ? [args[0]] : [];
    let started = false;
    let abandoned = false;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (started) return;
        abandoned = true;
        reject(new PoolBusyError(ms));
      }, ms);
      timer.unref();
      const run = (pool.begin as unknown as (...a: unknown[]) => Promise<unknown>)(...options, async (tx: Sql) => {
        started = true;
        if (abandoned) throw new PoolBusyError(ms);
        return fn(tx);
      });
      run.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err) => {
          clearTimeout(timer);
          if (!abandoned) reject(err);
        },
      );
    });
  };
}

/**
 * The pool, or the transaction the calling code runs in (`inTransaction`): what every feature's `sql` is, so
 * code written for the pool (route handlers, repositories) runs unchanged inside a transaction someone above it
 * opened: a project deploy applies many resources through the resources' own routes, as one transaction.
 * With `acquireTimeoutMs`, a query or transaction on the pool that waits that long for a connection fails with
 * PoolBusyError (503) instead of waiting for ever.
 */
export function ambientSql(pool: Sql, acquireTimeoutMs?: number): Sql {
  const begin = acquireTimeoutMs ? beginWithin(pool, acquireTimeoutMs) : undefined;
  return new Proxy(pool, {
    apply(_target, thisArg, args) {
      const current = ambient.getStore() ?? pool;
      const result = Reflect.apply(current, thisArg, args);
      // A tagged template on the pool is a query; sql(values) helpers are not.
      if (acquireTimeoutMs && current === pool && Array.isArray((args[0] as { raw?: unknown })?.raw))
        watchAcquire(result as unknown as PendingQuery, acquireTimeoutMs);
      return result;
    },
    get(_target, prop) {
      const current = ambient.getStore() ?? pool;
      if (prop === 'begin' && current !== pool) return undefined;
      if (prop === 'begin' && begin) return begin;
      const value = Reflect.get(current, prop, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  }) as Sql;
}

/** Runs `fn` with every ambient `sql` meaning the transaction `tx`. */
export function inTransaction<T>(tx: Sql, fn: () => Promise<T>): Promise<T> {
  return ambient.run(tx, fn);
}

/** Runs `fn` with every ambient `sql` meaning the pool again (progress written while a transaction runs). */
export function outsideTransaction<T>(fn: () => Promise<T>): Promise<T> {
  return ambient.exit(fn);
}

export function connectPostgres(url: string, max = 10): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 5,
    // int8 ids are far below 2^53: read them as numbers, not strings.
    types: {
      int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
  }) as unknown as Sql;
}

/** Connects to the server's maintenance database with the URL's credentials, changing nothing. */
export async function checkPostgres(url: string): Promise<void> {
  const admin = postgres(maintenanceUrl(url), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch (err) {
    throw unreachable(url, err);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** Creates the database named in the URL when it is missing (concurrent starters race safely). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = postgres(maintenanceUrl(url), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) {
      try {
        await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another process created it first: 42P04 once it exists, 23505 while its creation is in flight.
        const code = (err as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw err;
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (/^[0-9A-Z]{5}$/.test(code) && !/^(28|3D)/.test(code)) {
      throw new UnreachableError(`Postgres at ${describe(url)} (DATABASE_URL) cannot create database ${name}: ${(err as Error).message}`);
    }
    throw unreachable(url, err);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = postgres(maintenanceUrl(url), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** ClickHouse error codes the service acts on. */
export const CLICKHOUSE_CODES = {
  TIMEOUT_EXCEEDED: 159,
  MEMORY_LIMIT_EXCEEDED: 241,
} as const;

export type StoreOperation = 'query' | 'command' | 'insert' | 'ping';

/**
 * Any failure of a store call, whichever backend: the engine's error code when it gave one (chdb says
 * `clickhouseCode`, the HTTP client `code` as text, both write `Code: N.` in the message), the operation,
 * and the original error as `cause`. Parsed once here, so no caller reads backend-specific shapes.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: number | undefined;
  readonly operation: StoreOperation;
  /** The request that started the query went away (its signal aborted). */
  readonly aborted: boolean;

  constructor(message: string, opts: { code?: number; operation: StoreOperation; aborted?: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.code = opts.code;
    this.operation = opts.operation;
    this.aborted = opts.aborted ?? false;
  }

  /** The query ran out of its time or memory budget. */
  get overBudget(): 'time' | 'memory' | undefined {
    if (this.code === CLICKHOUSE_CODES.TIMEOUT_EXCEEDED) return 'time';
    if (this.code === CLICKHOUSE_CODES.MEMORY_LIMIT_EXCEEDED) return 'memory';
    return undefined;
  }

  static from(err: unknown, operation: StoreOperation, signal?: AbortSignal): StoreError {
    if (err instanceof StoreError) return err;
    const e = (err ?? {}) as { message?: unknown; clickhouseCode?: unknown; code?: unknown; name?: unknown };
    const message = typeof e.message === 'string' ? e.message : String(err);
    return new StoreError(message, { code: codeOf(e, message), operation, aborted: signal?.aborted === true || e.name === 'AbortError', cause: err });
  }
}

function codeOf(e: { clickhouseCode?: unknown; code?: unknown }, message: string): number | undefined {
  for (const candidate of [e.clickhouseCode, e.code]) {
    const n = typeof candidate === 'number' ? candidate : typeof candidate === 'string' && /^\d+$/.test(candidate) ? Number(candidate) : NaN;
    if (Number.isInteger(n)) return n;
  }
  const m = /\bCode: (\d+)\b/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** Runs a store call, any failure as a StoreError. */
export async function storeCall<T>(operation: StoreOperation, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw StoreError.from(err, operation, signal);
  }
}

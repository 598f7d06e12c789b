import { HttpError } from '../http/errors.js';
import type { QueryBudget } from '../platform/config.js';
import { StoreError } from '../storage/clickhouse/errors.js';

/**
 * The budget as engine settings, passed with the query (Store QueryOptions). These numbers come from the
 * validated configuration, never from a request, and are checked again here.
 */
export function budgetSettings(budget: QueryBudget): Record<string, number> {
  const { maxSeconds, maxMemoryBytes } = budget;
  if (!Number.isInteger(maxSeconds) || maxSeconds < 1 || !Number.isInteger(maxMemoryBytes) || maxMemoryBytes < 1) {
    throw new Error(`Invalid analytics query budget: ${JSON.stringify(budget)}`);
  }
  return { max_execution_time: maxSeconds, max_memory_usage: maxMemoryBytes };
}

/** A query stopped by its budget is the request's size, not a server fault: a 400 saying what to change. */
export function budgetError(err: unknown): HttpError | undefined {
  const what = err instanceof StoreError ? err.overBudget : undefined;
  if (!what) return undefined;
  const message = `The query needs more ${what} than one analytics query may use; shorten the window, widen aggregationInterval or drop groupBy`;
  return new HttpError(400, message, { errors: [{ field: 'query', rule: 'budget', message }] });
}

/** Runs an analytics query, turning a budget stop into its 400. */
export async function withinBudget<T>(query: Promise<T>): Promise<T> {
  try {
    return await query;
  } catch (err) {
    throw budgetError(err) ?? err;
  }
}

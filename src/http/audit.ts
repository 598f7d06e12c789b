import type { Middleware } from 'koa';
import type { Principal } from '../model/accounts.js';
import type { Logger } from '../platform/logger.js';
import type { AnyRoute } from './route.js';

/** One write as the audit log keeps it (accounts/audit.ts stores it). */
export interface AuditedWrite {
  accountId: string | null;
  actor: { type: 'user' | 'key' | 'anonymous'; id: string | null; name: string | null };
  operation: string;
  method: string;
  path: string;
  resourceId: string | null;
  fields: string[];
  status: number;
  address: string | null;
}
export type AuditSink = (entry: AuditedWrite) => Promise<void>;

const statusOf = (err: unknown) => {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : 500;
};

/**
 * Records every answered write of an authenticated route (refused ones too, with their status): who, the
 * operation, the resource (the path's id, or the id a create answered), the names of the body's fields (never a
 * value), the client's address. A failure to record is logged, never the request's failure.
 */
export function auditWrites(route: AnyRoute, sink: AuditSink, logger: Logger): Middleware {
  return async function auditMiddleware(ctx, next) {
    let status = 500;
    // The fields as the client sent them, before validation fills in defaults.
    const sent = ctx.request.body;
    const fields = sent && typeof sent === 'object' && !Array.isArray(sent) && !Buffer.isBuffer(sent) ? Object.keys(sent).slice(0, 100) : [];
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      status = statusOf(err);
      throw err;
    } finally {
      const principal = ctx.state.principal as Principal | undefined;
      if (principal) {
        const params = Object.values((ctx.params ?? {}) as Record<string, string>);
        const created = ctx.body && typeof ctx.body === 'object' && !Array.isArray(ctx.body) ? (ctx.body as { id?: unknown }).id : undefined;
        const entry: AuditedWrite = {
          accountId: principal.account.id,
          actor: principal.actor,
          operation: route.operationId,
          method: ctx.method,
          path: ctx.path,
          resourceId: params.length ? params.join('/') : created !== undefined && created !== null ? String(created) : null,
          fields,
          status,
          address: ctx.ip || null,
        };
        await sink(entry).catch((err: Error) => logger.error({ err: err.message, operation: route.operationId }, 'could not record an audit entry'));
      }
    }
  };
}

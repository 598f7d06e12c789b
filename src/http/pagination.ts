import { type Static, Type } from '@sinclair/typebox';
import type { Reply } from './route.js';

/** `limit` 1-100 (default 10) and `page` ≥ 1 (default 1), shared by every list route. */
export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items per page' }),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;

export function pageOffset(q: { limit: number; page: number }): number {
  return (q.page - 1) * q.limit;
}

/**
 * Lists answer a plain array; the total travels in X-Total-Count and, as the anchor's clients read it, in
 * `Content-Range: <first>-<last>/<total>` (zero-based item positions; `*\/<total>` for an empty page).
 */
export function listReply(items: unknown[], total: number, page: PageQuery): Reply {
  const first = pageOffset(page);
  const range = items.length ? `${first}-${first + items.length - 1}/${total}` : `*/${total}`;
  return { status: 200, body: items, headers: { 'X-Total-Count': String(total), 'Content-Range': range } };
}

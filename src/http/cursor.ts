import { Rules } from './rules.js';

/** A position in a newest-first list: the last item of a page; the next page starts after it. */
export interface Cursor {
  /** Epoch ms of the item's time. */
  at: number;
  id: string;
}

/** Cursors travel as `<ms>.<uuid>` in base64url: opaque to clients, checked when they come back. */
export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.at}.${c.id}`).toString('base64url');
}

/** The cursor in `text`, or a 400 naming `field` when this service did not make it. */
export function decodeCursor(text: string, field = 'query.nextId'): Cursor {
  const m = /^(\d{1,15})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!m) new Rules().fail(field, 'format', 'is not a nextId this service gave').throwIfAny();
  return { at: Number(m![1]), id: m![2] };
}

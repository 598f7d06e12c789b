import { Type } from '@sinclair/typebox';
import type { AnyRoute } from '../../http/route.js';
import { Nullable } from '../../http/schemas.js';
import { iso } from '../../model/time.js';
import type { Deps } from '../../storage/deps.js';
import { BY_NUMERIC_ID, crudRoutes, operationsOf } from '../crud.js';
import { insertSnippet, type SnippetRow, updateSnippet } from './repository.js';

const SnippetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    script: Type.String({ minLength: 1, maxLength: 1_000_000, description: 'Node.js code; checks run it in their setup or teardown phase' }),
  },
  { additionalProperties: false },
);

const Snippet = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    script: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const toSnippet = (r: SnippetRow) => ({ id: r.id, name: r.name, script: r.script, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });

/** Snippets: scripts API checks and groups name as setupSnippetId / tearDownSnippetId. */
export function snippetRoutes({ sql }: Deps): AnyRoute[] {
  return crudRoutes(sql, {
    tag: 'Snippets',
    path: '/v1/snippets',
    table: 'snippets',
    ...BY_NUMERIC_ID,
    operations: operationsOf({ id: 'Snippet', ids: 'Snippets', one: 'a snippet', many: 'snippets' }),
    view: Snippet,
    toView: toSnippet,
    create: { body: SnippetBody, run: (db, principal, body) => insertSnippet(db, principal.account.id, body) },
    update: { body: SnippetBody, run: (db, principal, id, body) => updateSnippet(db, principal.account.id, id, body) },
  });
}

import type { ComponentChildren, FunctionComponent } from 'preact';
import { del, get, patch, post, put } from '../api';
import { Link, navigate } from '../router';
import { can, useSession } from '../session';
import { Button, confirmAction, Empty, ErrorNote, Loading, useAction, useData } from '../ui';
import type { Json } from './draft';
import { DraftForm, Fold, FormErrors, type FormState, useDraftForm } from './form';
import { type ApiDocument, bodyOf, isIgnored, resolve, type Schema, useOpenApi } from './schema';
import { SchemaFields } from './schema-fields';

/**
 * One kind of thing the account keeps (alert channels, groups, maintenance windows…): its list with the actions a
 * role may take, and one form that makes and changes it, laid out by the kind and completed from the API's schema
 * (fields it does not lay out fold under "More settings"). Every kind's screens are made here, so they behave alike.
 */
export interface ResourceDef<Row> {
  /** As a sentence names one: "alert channel". */
  noun: string;
  /** The list's title: "Alert channels". */
  title: string;
  /** The console's address of the list; `${formHref}/new` and `${formHref}/:id` are the form's. */
  href: string;
  /** Where the form lives when `${href}/…` is taken (a dashboard's own page is `/dashboards/{address}`): default `href`. */
  formHref?: string;
  /** The API's collection. */
  api: string;
  idOf: (row: Row) => string | number;
  nameOf: (row: Row) => string;
  load: (signal: AbortSignal) => Promise<Row[]>;
  /** One row as the form edits it (default: `GET {api}/{id}`). */
  loadOne?: (id: string, signal: AbortSignal) => Promise<Row>;
  columns: { label: string; cell: (row: Row) => ComponentChildren; narrow?: boolean; num?: boolean }[];
  empty: ComponentChildren;
  /** What a role needs to change them (the API's own rule): write by default. */
  access?: 'write' | 'admin';
  /** More per row (send a test, open the page), beside Edit and Delete. */
  rowActions?: (row: Row, reload: () => void) => ComponentChildren;
  /** Above the list (a note, a second table below it goes in `after`). */
  intro?: ComponentChildren;
  after?: ComponentChildren;
  /** How the form writes: the create operation's path in the document, and the update's method. */
  form: {
    schemaPath?: string;
    update?: 'put' | 'patch';
    blank: (doc: ApiDocument, schema: Schema | undefined) => Json;
    draftOf?: (row: Row, doc: ApiDocument, schema: Schema | undefined) => Json;
    Fields: FunctionComponent<{ doc: ApiDocument; schema: Schema | undefined; editing: boolean }>;
    owns: string[];
    /** Where the console goes once saved (default: the list). */
    saved?: (row: Json, editing: boolean) => string;
    /** The body as sent (default: the draft). */
    toBody?: (draft: Json, editing: boolean) => Json;
  };
}

/** Fields an answer carries that a body never takes. */
const ANSWER_ONLY = new Set(['id', 'created_at', 'updated_at', 'createdAt', 'updatedAt']);

function defaultDraft(row: Json, doc: ApiDocument, schema: Schema | undefined): Json {
  const props = resolve(doc, schema)?.properties ?? {};
  return Object.fromEntries(Object.entries(row).filter(([k]) => props[k] && !ANSWER_ONLY.has(k) && !isIgnored(resolve(doc, props[k]))));
}

export function resourceScreens<Row>(def: ResourceDef<Row>) {
  const access = def.access ?? 'write';
  const formHref = def.formHref ?? def.href;

  function List() {
    const session = useSession();
    const rows = useData(def.load, []);
    const action = useAction();
    const writer = can(session, access);
    return (
      <>
        <div class="title-row">
          <h1>{def.title}</h1>
          {writer && (
            <Link class="btn btn-primary" href={`${formHref}/new`}>
              New {def.noun}
            </Link>
          )}
        </div>
        {def.intro}
        <ErrorNote error={action.error ?? rows.error} />
        {!rows.data && !rows.error && <Loading />}
        {rows.data?.length === 0 && <Empty>{def.empty}</Empty>}
        {rows.data && rows.data.length > 0 && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <caption class="skip">{def.title}</caption>
              <thead>
                <tr>
                  {def.columns.map((c) => (
                    <th scope="col" class={`${c.narrow ? 'hide-narrow' : ''} ${c.num ? 'num' : ''}`}>
                      {c.label}
                    </th>
                  ))}
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.data.map((row) => (
                  <tr data-id={String(def.idOf(row))}>
                    {def.columns.map((c) => (
                      <td class={`${c.narrow ? 'hide-narrow' : ''} ${c.num ? 'num' : ''}`}>{c.cell(row)}</td>
                    ))}
                    <td>
                      <div class="actions row-actions">
                        {def.rowActions?.(row, rows.reload)}
                        {writer && (
                          <Link class="btn" href={`${formHref}/${encodeURIComponent(String(def.idOf(row)))}`} aria-label={`Edit ${def.nameOf(row)}`}>
                            Edit
                          </Link>
                        )}
                        {writer && (
                          <Button
                            kind="danger"
                            aria-label={`Delete ${def.nameOf(row)}`}
                            onClick={() => {
                              if (confirmAction(`Delete ${def.nameOf(row)}?`))
                                void action.run(async () => {
                                  await del(`${def.api}/${encodeURIComponent(String(def.idOf(row)))}`);
                                  rows.reload();
                                });
                            }}
                          >
                            Delete
                          </Button>
                        )}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {def.after}
      </>
    );
  }

  function Edit({ params }: { params: Record<string, string> }) {
    const session = useSession();
    const { doc, error } = useOpenApi();
    const editing = params.id !== undefined && params.id !== 'new';
    const row = useData(
      (signal) => (editing ? (def.loadOne ?? ((id, s) => get<Row>(`${def.api}/${id}`, s)))(params.id!, signal) : Promise.resolve(null)),
      [params.id],
    );
    if (!can(session, access))
      return (
        <>
          <h1>{def.title}</h1>
          <p class="error" role="alert">
            Your role in this account does not change {def.title.toLowerCase()}.
          </p>
        </>
      );
    if (error || row.error) return <ErrorNote error={error ?? row.error} />;
    if (!doc || row.data === undefined) return <Loading what="Loading the form" />;
    const schema = bodyOf(doc, def.form.schemaPath ?? def.api, 'post');
    return <ResourceForm def={def} doc={doc} schema={schema} row={row.data} />;
  }

  return { List, Edit, formHref };
}

function ResourceForm<Row>({ def, doc, schema, row }: { def: ResourceDef<Row>; doc: ApiDocument; schema: Schema | undefined; row: Row | null }) {
  const editing = row !== null;
  const form = useDraftForm(() =>
    row ? (def.form.draftOf ?? ((r: Row) => defaultDraft(r as Json, doc, schema)))(row, doc, schema) : def.form.blank(doc, schema),
  );
  const owned = new Set(def.form.owns);
  const rest = Object.keys(resolve(doc, schema)?.properties ?? {}).filter(
    (k) => !owned.has(k) && !ANSWER_ONLY.has(k) && !isIgnored(resolve(doc, resolve(doc, schema)?.properties?.[k])),
  );
  const title = editing ? `Edit ${def.nameOf(row)}` : `New ${def.noun}`;
  async function save(draft: Json) {
    const body = def.form.toBody ? def.form.toBody(draft, editing) : draft;
    const saved = editing
      ? await (def.form.update === 'patch' ? patch<Json> : put<Json>)(`${def.api}/${encodeURIComponent(String(def.idOf(row)))}`, body)
      : await post<Json>(def.api, body);
    navigate(def.form.saved ? def.form.saved(saved ?? {}, editing) : def.href);
  }
  return (
    <>
      <p>
        <Link href={def.href}>← {def.title}</Link>
      </p>
      <h1>{title}</h1>
      <DraftForm form={form} onSubmit={save} label={title}>
        <def.form.Fields doc={doc} schema={schema} editing={editing} />
        {rest.length > 0 && (
          <Fold title="More settings" paths={rest}>
            <SchemaFields doc={doc} schema={schema} skip={[...owned]} />
          </Fold>
        )}
        <FormErrors />
        <Buttons form={form} editing={editing} noun={def.noun} cancel={def.href} />
      </DraftForm>
    </>
  );
}

function Buttons({ form, editing, noun, cancel }: { form: FormState; editing: boolean; noun: string; cancel: string }) {
  return (
    <div class="actions form-actions">
      <Button kind="primary" type="submit" disabled={form.busy}>
        {form.busy ? 'Saving…' : editing ? 'Save changes' : `Create ${noun}`}
      </Button>
      <Button onClick={() => navigate(cancel)}>Cancel</Button>
    </div>
  );
}

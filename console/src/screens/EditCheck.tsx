import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, put } from '../api';
import { Button, Dialog, ErrorNote, Field, Loading } from '../ui';

/**
 * Editing a check: a form made from the check type's update schema in /openapi.json (the one the API validates
 * with), sending only what changed; the API's validation errors are shown at their field.
 */
type Schema = {
  type?: string | string[];
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  description?: string;
  maxLength?: number;
  anyOf?: Schema[];
  $ref?: string;
};

let documentOnce:
  | Promise<{
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
      components?: { schemas?: Record<string, Schema> };
    }>
  | undefined;
const openApi = () => (documentOnce ??= get('/openapi.json'));

/** Fields the API takes but ignores on update (read-only in the anchor's contract), or sets elsewhere. */
const SKIP = new Set(['id', 'created_at', 'updated_at', 'alertChannels', 'checkType']);

function kindOf(schema: Schema): 'enum' | 'text' | 'long' | 'number' | 'boolean' | 'list' | 'json' {
  const types = ([] as string[]).concat(schema.type ?? []).filter((t) => t !== 'null');
  if (schema.enum) return 'enum';
  if (types.length === 1 && types[0] === 'string') return (schema.maxLength ?? 0) > 2048 ? 'long' : 'text';
  if (types.length === 1 && (types[0] === 'integer' || types[0] === 'number')) return 'number';
  if (types.length === 1 && types[0] === 'boolean') return 'boolean';
  if (types.length === 1 && types[0] === 'array' && ([] as string[]).concat(schema.items?.type ?? []).includes('string') && !schema.items?.enum) return 'list';
  return 'json';
}

const show = (kind: ReturnType<typeof kindOf>, v: unknown) =>
  kind === 'json'
    ? JSON.stringify(v ?? null, null, 2)
    : kind === 'list'
      ? ((v as string[] | undefined) ?? []).join(', ')
      : v === undefined || v === null
        ? ''
        : String(v);

export function EditCheck({
  check,
  segment,
  onClose,
}: {
  check: Record<string, unknown> & { id: string; name: string };
  segment: string;
  onClose: (saved: boolean) => void;
}) {
  const [schema, setSchema] = useState<Record<string, Schema> | null>(null);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [changed, setChanged] = useState<Set<string>>(new Set());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    openApi()
      .then((doc) => {
        let body = doc.paths[`/v1/checks/${segment}/{id}`]?.put?.requestBody?.content['application/json']?.schema;
        if (body?.$ref) body = doc.components?.schemas?.[body.$ref.split('/').pop()!];
        const props = Object.fromEntries(Object.entries(body?.properties ?? {}).filter(([k, s]) => !SKIP.has(k) && !/ignored/i.test(s.description ?? '')));
        setSchema(props);
        setValues(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, kindOf(s) === 'boolean' ? Boolean(check[k]) : show(kindOf(s), check[k])])));
      })
      .catch(setError);
  }, [segment]);

  async function save(e: Event) {
    e.preventDefault();
    if (!schema) return;
    const body: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    for (const k of changed) {
      const kind = kindOf(schema[k]!);
      const v = values[k];
      if (kind === 'json') {
        try {
          body[k] = JSON.parse(String(v));
        } catch {
          local[k] = 'is not valid JSON';
        }
      } else if (kind === 'number') body[k] = v === '' ? null : Number(v);
      else if (kind === 'enum') body[k] = schema[k]!.enum!.find((e) => String(e) === String(v)) ?? v;
      else if (kind === 'list')
        body[k] = String(v)
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
      else body[k] = v;
    }
    setErrors(local);
    if (Object.keys(local).length) return;
    setBusy(true);
    setError(null);
    try {
      await put(`/v1/checks/${segment}/${check.id}`, body);
      onClose(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) {
        // `request.url` is shown at `request`, with its path.
        const at: Record<string, string> = {};
        for (const [field, message] of Object.entries(err.fields)) {
          const top = field.split(/[.[]/)[0]!;
          at[top] = at[top] ? `${at[top]}; ${field}: ${message}` : field === top ? message : `${field}: ${message}`;
        }
        setErrors(at);
      }
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const set = (k: string, v: string | boolean) => {
    setValues({ ...values, [k]: v });
    setChanged(new Set(changed).add(k));
  };

  return (
    <Dialog title={`Edit ${check.name}`} open onClose={() => onClose(false)}>
      {!schema && !error && <Loading what="Loading the form" />}
      {schema && (
        <form onSubmit={save} class="edit-form">
          {Object.entries(schema).map(([k, s]) => {
            const kind = kindOf(s);
            const common = { name: k };
            const control =
              kind === 'enum' ? (
                <select {...common} value={String(values[k])} onChange={(e) => set(k, (e.target as HTMLSelectElement).value)}>
                  {!s.enum!.includes(values[k]) && <option value="">—</option>}
                  {s
                    .enum!.filter((v) => v !== null)
                    .map((v) => (
                      <option value={String(v)}>{String(v)}</option>
                    ))}
                </select>
              ) : kind === 'boolean' ? (
                <input {...common} type="checkbox" checked={Boolean(values[k])} onChange={(e) => set(k, (e.target as HTMLInputElement).checked)} />
              ) : kind === 'json' || kind === 'long' ? (
                <textarea
                  {...common}
                  rows={kind === 'long' ? 12 : 5}
                  value={String(values[k])}
                  onInput={(e) => set(k, (e.target as HTMLTextAreaElement).value)}
                />
              ) : kind === 'number' ? (
                <input {...common} type="number" value={String(values[k])} onInput={(e) => set(k, (e.target as HTMLInputElement).value)} />
              ) : (
                <input {...common} value={String(values[k])} onInput={(e) => set(k, (e.target as HTMLInputElement).value)} />
              );
            return (
              <Field label={k} error={errors[k]} hint={s.description}>
                {control}
              </Field>
            );
          })}
          <ErrorNote error={error} />
          <div class="actions">
            <Button kind="primary" type="submit" disabled={busy || changed.size === 0}>
              {busy ? 'Saving…' : 'Save'}
            </Button>
            <Button onClick={() => onClose(false)}>Cancel</Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
